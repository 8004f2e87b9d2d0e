"""The registry: importing this module registers every claim (in paper order)."""

from . import claims_analytic  # noqa: F401
