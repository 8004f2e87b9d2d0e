"""The registry: importing this module registers every claim (in paper order)."""

from . import claims_analytic  # noqa: F401
from . import claims_bounds  # noqa: F401
from . import claims_reconcile  # noqa: F401
from . import claims_minimax  # noqa: F401
from . import claims_rates  # noqa: F401
from . import claims_steps  # noqa: F401
