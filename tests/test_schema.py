"""Saved objects (socal.schema): a file from another version, with other keys or cut short is refused by name; what
is saved loads back to the same numbers."""

import json
import re

import numpy as np
import pytest

import socal


def _platt_dict():
    m, v, y = socal.synthetic.toy_population().sample(600, h=1 / 16, rng=1)
    return socal.SecondOrderPlatt(degree=3, ridge=1e-3).fit(m, v, y).to_dict()


@pytest.mark.parametrize("mutate,field", [
    (lambda d: d["map"]["beta"][0].__setitem__(0, float("nan")), "map.beta"),
    (lambda d: d["map"].__setitem__("beta", d["map"]["beta"][:-1]), "map.beta"),
    (lambda d: d["map"].__setitem__("degree", "3"), "map.degree"),
    (lambda d: d["map"].__setitem__("alpha", None), "map.alpha"),
    (lambda d: d["map"].__setitem__("ndim", 1), "map.ndim"),
    (lambda d: d.pop("map"), "missing"),
    (lambda d: d.pop("version"), "missing"),
    (lambda d: d.__setitem__("version", 99), "version"),
    (lambda d: d["params"].__setitem__("folds", "five"), "params.folds"),
    (lambda d: d["params"].__setitem__("h", -1.0), "params.h"),
    (lambda d: d["params"].__setitem__("evil", "__import__('os')"), "params"),
    (lambda d: d.__setitem__("n_samples_fit", 0), "n_samples_fit"),
    (lambda d: d.__setitem__("class", "FirstOrderPlatt"), "class"),
])
def test_from_dict_schema(mutate, field):
    d = json.loads(json.dumps(_platt_dict()))
    socal.SecondOrderPlatt.from_dict(json.loads(json.dumps(d)))  # the untouched dict loads
    mutate(d)
    with pytest.raises(ValueError, match=field):
        socal.SecondOrderPlatt.from_dict(d)
    with pytest.raises(ValueError, match="a dict"):
        socal.SecondOrderPlatt.from_dict([1, 2])


def test_a_saved_field_with_other_keys_is_described_by_its_keys(small):
    """from_dict with params={} said "must be a dict with exactly the keys [...]. Got [] instead": a list for a dict."""
    m, v, y = small
    d = socal.SecondOrderPlatt(degree=2, ridge=1e-3, rng=0).fit(m, v, y).to_dict()
    with pytest.raises(ValueError, match="Got a dict with the keys \\[\\] instead"):
        socal.SecondOrderPlatt.from_dict({**d, "params": {}})
    with pytest.raises(ValueError, match="Got a dict with the keys \\['beta'\\] instead"):
        socal.SecondOrderPlatt.from_dict({**d, "map": {"beta": []}})
    with pytest.raises(ValueError, match="Got 'x' instead"):  # anything else is shown as before
        socal.SecondOrderPlatt.from_dict({**d, "map": "x"})


def test_a_recalibrator_saves_and_loads_as_the_readme_says(small, tmp_path):
    """README said the map is "saved with .save()", which did not exist (to_dict/from_dict did).  save/load write
    and read JSON (never pickle): the same transform, bit for bit, from a path or a file object; a file that is not
    a saved map is a ValueError naming it."""
    import io as _io

    m, v, y = small
    platt = socal.SecondOrderPlatt(degree=3, ridge=1e-3, rng=0).fit(m, v, y)
    platt.save(tmp_path / "platt.json")
    again = socal.SecondOrderPlatt.load(tmp_path / "platt.json")
    assert all(np.array_equal(a, b) for a, b in zip(platt.transform(m, v), again.transform(m, v)))
    buf = _io.StringIO()
    platt.save(buf)
    buf.seek(0)
    assert np.array_equal(socal.SecondOrderPlatt.load(buf).transform(m, v)[1], platt.transform(m, v)[1])
    (tmp_path / "x.json").write_text("mean,var\n")
    with pytest.raises(ValueError, match="x.json is not a saved recalibrator"):
        socal.SecondOrderPlatt.load(tmp_path / "x.json")
    with pytest.raises(ValueError, match="field 'class' of FirstOrderPlatt.from_dict"):
        socal.FirstOrderPlatt.load(tmp_path / "platt.json")


def test_a_recalibrator_saves_to_what_it_loads_from(tmp_path, small):
    """load took a binary file object and save raised "a bytes-like object is required"; save to a folder or a
    missing folder raised a bare OSError where load's ValueError names the file; a saved map with a NaN coefficient
    was described as "'list of length 25'", the one thing about it that was right."""
    import io

    m, v, y = small
    platt = socal.SecondOrderPlatt(degree=3, ridge=1e-3, rng=0).fit(m, v, y)
    want = platt.transform(m[:5], v[:5])
    buffer = io.BytesIO()
    platt.save(buffer)
    buffer.seek(0)
    np.testing.assert_array_equal(socal.SecondOrderPlatt.load(buffer).transform(m[:5], v[:5]), want)
    with open(tmp_path / "b.json", "wb") as fh:
        platt.save(fh)
    np.testing.assert_array_equal(socal.SecondOrderPlatt.load(tmp_path / "b.json").transform(m[:5], v[:5]), want)
    for path in (tmp_path, tmp_path / "no" / "p.json"):
        with pytest.raises(OSError) as os_error:  # the platform's own words for why (Linux: 'Is a directory', ...)
            open(path, "w")
        why = re.escape(os_error.value.strerror)
        with pytest.raises(ValueError, match=f"SecondOrderPlatt.save: .* cannot be written \\({why}\\)"):
            platt.save(path)
    d = platt.to_dict()
    beta = [list(row) for row in d["map"]["beta"]]
    beta[3][1] = float("nan")
    with pytest.raises(ValueError, match=r"'map.beta' .* 2 finite numbers .* Got row 3 = \[.*, nan\] instead"):
        socal.SecondOrderPlatt.from_dict({**d, "map": {**d["map"], "beta": beta}})
