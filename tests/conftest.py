import pathlib

import numpy as np
import pytest

DATA_DIR = pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _not_installed():
    """Why socal cannot be tested here, or None: the tests need the installed package (socal.verify is the
    repository's verify/ folder, mapped there by the install, and the audit's entry points are the install's)."""
    try:
        import socal  # noqa: F401
        import socal.verify  # noqa: F401
    except ImportError as exc:
        return str(exc)
    return None


def pytest_configure(config):
    """One line, instead of an error per test module at collection, where socal is not installed."""
    why = _not_installed()
    if why is not None:
        pytest.exit(f"socal is not installed here ({why}): run python -m pip install -e '.[test]' first "
                    f"(README.md)", returncode=4)


def family_alpha(n_tests, family_rate=1e-3):
    """Per-test significance level so that a family of n_tests statistical checks false-alarms at most
    ``family_rate`` per run (Bonferroni)."""
    return family_rate / n_tests


def rel_tol(digits_lost=3):
    """Relative tolerance for float64 results that lose about ``digits_lost`` digits to rounding."""
    return np.finfo(float).eps * 10.0**digits_lost


@pytest.fixture(scope="module")
def small():
    """400 perturbed items of the toy population (h = 1/16, two labels each): the hostile-input tests' data."""
    import socal

    m, v, y = socal.synthetic.toy_population().sample(400, h=1 / 16, rng=0)
    return m, v, y


@pytest.fixture
def data_dir():
    if not DATA_DIR.is_dir():
        pytest.skip(f"shared data folder {DATA_DIR} is absent (the datasets are never copied into the project)")
    return DATA_DIR

# the example claims package is installed into a temporary folder by tests/test_claims_plugin.py; importing it here
# (--doctest-modules) would register its claims in this session's registry
collect_ignore = ["example_claims"]
