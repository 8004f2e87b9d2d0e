"""socal: estimation, recalibration and verification of second-order calibration.

Implements Ciosek, Rafiee, Ghiassian, Felicioni (2026), "The Minimax Rate of Second-Order Calibration".

The public facade.  Data flow: scores and labels -> validation -> perturbation -> Chebyshev fit -> estimate or
recalibration map -> report.  Importing socal loads numpy and scipy only (never verify, sympy, mpmath or flint).
"""

from ._threads import SPIN_EXPONENT as _OPENBLAS_SPIN  # noqa: F401  (first: before numpy and scipy load OpenBLAS)
from . import multiclass, plot, simplex, synthetic, truth
from ._evaluate import Evaluation, RecalibratedEvaluation, evaluate_recalibrated
from .degrees import paper_degree, theta
from ._results import CalibrationError, ConfidenceInterval, DegreeEstimate, SelectionReport, UpperBound
from .checkpoint import Checkpoint
from .chebyshev import ConditioningWarning, get_backend, set_backend
from .estimators import CalibrationFunctions, calibration_functions
from .kernels import SechKernel
from .members import from_members
from . import page
from .pairs import PairScore, pair_score
from .votes import votes_from_long, votes_from_wide
from .perturb import perturb, perturb_mean
from .recalibrate import FirstOrderPlatt, NotFittedError, SecondOrderPlatt
from .simplex import MulticlassPlatt, TemperatureScaling
from .deviations import DeviationStats
from .sufficient import SufficientStats
from .testing import CalibrationTest, CalibrationTestStats, VoteCheck, vote_check
from .dispatch import calibration_test, ce1, ce2, evaluate  # binary or multiclass, by the input's shape

__all__ = [
    "calibration_test",
    "Checkpoint",
    "CalibrationTest",
    "CalibrationTestStats",
    "vote_check",
    "VoteCheck",
    "pair_score",
    "PairScore",
    "votes_from_long",
    "votes_from_wide",
    "evaluate",
    "Evaluation",
    "evaluate_recalibrated",
    "RecalibratedEvaluation",
    "from_members",
    "SechKernel",
    "perturb",
    "perturb_mean",
    "ce2",
    "ce1",
    "calibration_functions",
    "CalibrationFunctions",
    "CalibrationError",
    "DegreeEstimate",
    "ConfidenceInterval",
    "UpperBound",
    "SelectionReport",
    "ConditioningWarning",
    "set_backend",
    "get_backend",
    "SecondOrderPlatt",
    "FirstOrderPlatt",
    "MulticlassPlatt",
    "TemperatureScaling",
    "NotFittedError",
    "SufficientStats",
    "DeviationStats",
    "paper_degree",
    "theta",
    "plot",
    "synthetic",
    "truth",
]

__version__ = "0.1.0"

# submodules loaded on first use, as scipy's are (socal.io.read_chunks after import socal): importing socal stays
# numpy and scipy only
_LAZY = ("io", "datasets", "baselines", "experiments", "parallel")


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'socal' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
