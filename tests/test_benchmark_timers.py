"""The stage timers of benchmarks/cost.py (``--phases``) reach the binding socal calls: a function that a module
imported by name (``from .world import f``) is looked up in the importer's namespace, so a timer on its home module
alone never fires.  Those timers are the figures of docs/numbers.md, "Where `evaluate`'s time goes"."""

import importlib.util
import pathlib

import socal
import socal.bootstrap
import socal.world

COST = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "cost.py"


def _cost_module():
    spec = importlib.util.spec_from_file_location("socal_benchmark_cost", COST)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _draws_timed(here):
    """How often the 'Gaussian draws' timer fired in one bootstrapped ce2 call, with the timer on every binding of
    the function or (``here``) on socal.world's only."""
    cost = _cost_module()
    spent, fired = {}, []
    stage = ("socal.world", "gaussian_right_hand_sides", "Gaussian draws") + (("here",) if here else ())
    undo = cost._timers((stage,), spent, key=lambda label, args, kw: fired.append(label))
    try:
        m, v, y = socal.synthetic.toy_population().sample(2000, h=1 / 16, rng=0)
        socal.ce2(m, v, y, h=1 / 16, degree=4, ridge=1e-3, n_boot=20)
    finally:
        for owner, attr, fn in reversed(undo):
            setattr(owner, attr, fn)
    return len(fired)


def test_the_phase_timer_fires_where_the_bootstrap_calls_the_draws():
    original = socal.world.gaussian_right_hand_sides
    assert _draws_timed(here=False) >= 1
    # restored: every binding is the original function again
    assert socal.world.gaussian_right_hand_sides is original
    assert socal.bootstrap.gaussian_right_hand_sides is original


def test_negative_control_a_timer_on_the_home_module_alone_never_fires():
    """What --phases did after the bootstrap's split: 'Gaussian draws' was never timed."""
    assert _draws_timed(here=True) == 0
