"""Claims of other packages (issue 14): the public decorator, the 'socal.claims' entry point, and the pytest
plugin that collects claims as test items, on a two-claim example package and on socal's own registry."""

import doctest
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

EXAMPLE = pathlib.Path(__file__).with_name("example_claims")


@pytest.fixture
def example_env(tmp_path):
    """A folder on PYTHONPATH holding the example package and the metadata pip would write for it."""
    shutil.copytree(EXAMPLE / "socal_example_claims", tmp_path / "socal_example_claims")
    info = tmp_path / "socal_example_claims-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: socal-example-claims\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[socal.claims]\nexample = socal_example_claims\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    return tmp_path, env


def _counts(stdout):
    """{'passed': 3, 'xfailed': 1, ...} from pytest's last line."""
    import re

    last = stdout.strip().splitlines()[-1]
    return {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|xfailed|xpassed|skipped|error)", last)}


def _pytest(args, cwd, env):
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=600)


def test_plugin_on_the_example_package(example_env):
    where, env = example_env
    only = "--socal-claims-only=example-harmonic,example-loose"
    out = _pytest(["--socal-claims", only], where, env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert _counts(out.stdout) == {"passed": 3, "xfailed": 1}  # VACUOUS xfails by default; both negative controls pass
    assert "PASSED ::socal-claims::example-harmonic::negative-control" in out.stdout
    assert "XFAIL ::socal-claims::example-loose" in out.stdout
    strict = _pytest(["--socal-claims", only, "--socal-claims-xfail=none"], where, env)
    assert strict.returncode == 1 and _counts(strict.stdout) == {"passed": 3, "failed": 1}
    assert "example-loose (Example note, eq. (2)): VACUOUS" in strict.stdout


def test_plugin_is_off_unless_asked(example_env):
    where, env = example_env
    (where / "test_nothing.py").write_text("def test_one():\n    pass\n")
    out = _pytest([], where, env)
    assert out.returncode == 0 and "1 passed" in out.stdout and "socal-claims" not in out.stdout


def test_plugin_rejects_a_bad_option(example_env):
    where, env = example_env
    out = _pytest(["--socal-claims", "--socal-claims-xfail=MAYBE"], where, env)
    assert out.returncode != 0 and "unknown verdict" in out.stderr + out.stdout


def test_example_claims_join_socal_audit(example_env):
    where, env = example_env
    out = subprocess.run([sys.executable, "-m", "socal", "audit", "--only", "example-harmonic,example-loose",
                          "--no-progress"], cwd=where, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "example-harmonic" in out.stdout and "VACUOUS: 1" in out.stdout and "HOLDS: 1" in out.stdout


def test_a_broken_entry_point_is_reported_not_hidden(example_env):
    where, env = example_env
    info = where / "socal_example_claims-0.1.dist-info" / "entry_points.txt"
    info.write_text("[socal.claims]\nexample = socal_example_claims\nbroken = no_such_module_here\n")
    out = _pytest(["--socal-claims", "--socal-claims-only=example-harmonic"], where, env)
    assert out.returncode == 1 and "no_such_module_here" in out.stdout


def test_plugin_on_socals_own_registry(tmp_path):
    """A few of socal's own claims through the plugin: HOLDS passes, GAP xfails, FAILS fails, controls pass."""
    out = _pytest(["--socal-claims", "--socal-claims-only=posreal,analytic-1d,analytic-2d"], tmp_path, None)
    assert out.returncode == 1
    assert _counts(out.stdout) == {"passed": 4, "failed": 1, "xfailed": 1}
    assert "FAILED ::socal-claims::analytic-2d" in out.stdout


def test_claim_decorator_docstring_and_rules():
    import socal.verify._core as core
    from socal.verify import claim

    assert doctest.testmod(core, raise_on_error=False).failed == 0
    with pytest.raises(ValueError, match="'wrong'.*must differ"):
        claim("x-1", "r", "s", paper={"a": 1}, wrong={"a": 1})
    with pytest.raises(ValueError, match="'id'"):
        claim("has space", "r", "s", paper={"a": 1}, wrong={"a": 2})
    with pytest.raises(ValueError, match="registered twice"):
        claim("posreal", "r", "s", paper={"a": 1}, wrong={"a": 2})(lambda **k: None)
