"""A process that saves one kind of socal file to one path in a loop, for tests/test_files.py to kill mid-save.

    python tests/_kill_writers.py WRITER PATH

It saves once, prints "ready", then saves forever, alternating two versions of the content.  WRITER names a socal
writer, or "plain-*": the same content through a plain truncating open(), the negative control.
"""

import json
import sys

import numpy as np


def _stats(seed):
    from socal.sufficient import SufficientStats

    rng = np.random.default_rng(seed)
    m = rng.uniform(0.1, 0.9, 2000)
    st = SufficientStats(max_degree=88)  # about 1.9 MB saved
    return st.update(m, 0.2 * m * (1 - m), (rng.random((2000, 2)) < m[:, None]).astype(float))


def _platt(seed):
    import socal

    m, v, y = socal.synthetic.toy_population().sample(3000, h=1 / 16, rng=seed)
    return socal.SecondOrderPlatt(h=1 / 16, degree=12, ridge=1e-3).fit(m, v, y)


def writers(path):
    """name -> (a function saving version i, for i = 0, 1)."""
    from socal.files import save_figure, write_text_atomic
    from socal.io import write_table

    out = {}
    if sys.argv[1].endswith("stats"):
        stats = [_stats(0), _stats(1)]
        out["stats"] = lambda i: stats[i].save(path)
        out["plain-stats"] = lambda i: _plain_savez(path, stats[i])
    out |= {
        "table": lambda i: write_table(path, {"mean": np.linspace(0, 1, 200_000) * (i + 1) / 2,
                                              "y": np.arange(200_000) % 2}),
        "json": lambda i: write_text_atomic(path, json.dumps({"version": i, "rows": list(range(300_000))})),
        "plain-json": lambda i: _plain_json(path, {"version": i, "rows": list(range(300_000))}),
    }
    if "platt" in sys.argv[1]:
        maps = [_platt(0), _platt(1)]
        out["platt"] = lambda i: maps[i].save(path)
        out["plain-platt"] = lambda i: _plain_text(path, json.dumps(maps[i].to_dict(), indent=1))
    if sys.argv[1] == "figure":
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        figs = []
        for i in (0, 1):
            fig, ax = plt.subplots(figsize=(12, 12))
            ax.imshow(np.random.default_rng(i).random((600, 600)))
            figs.append(fig)
        out["figure"] = lambda i: save_figure(figs[i], path, dpi=100)
    return out


def _plain_savez(path, st):
    header = json.dumps({"format": "socal.SufficientStats", "version": 1, **st._config()})
    with open(path, "wb") as f:
        np.savez(f, header=np.array(header), M=st.M, Z=st.Z, zz=st.zz, count=st.count)


def _plain_json(path, obj):
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(obj, fh)  # encodes and writes piece by piece, as most code writes JSON


def _plain_text(path, text):
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


if __name__ == "__main__":
    name, target = sys.argv[1], sys.argv[2]
    save = writers(target)[name]
    save(0)
    print("ready", flush=True)
    i = 1
    while True:
        save(i % 2)
        i += 1
