"""verify: the paper's claims, re-derived (filled in by the claims-registry issue)."""
