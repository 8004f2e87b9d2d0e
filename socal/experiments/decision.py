"""Experiment 3 (Section 7, Appendix "Experiment 3 details"): magnitudes, not just rankings.

A clinic refers borderline patients (m in [0.35, 0.65]) at cost c = 0.06 to a specialist panel; the per-patient gain
g(theta) = 2 theta^2 - 2 theta + 0.5 - c has conditional mean 2 eta2(S) - 2 eta1(S) + 0.5 - c, so a method that
calibrates only eta1 is misspecified for the Bayes-optimal score.  Seven scoring methods are compared by the realised
gain per 100 borderline patients as the referral threshold tau varies.

The population follows the appendix: four groups with weights (0.25, 0.25, 0.35, 0.15); group 2 (aleatoric) and
group 3 (hidden subtype) exactly as stated.  Groups 0/1 are described only as "clear negatives/positives
concentrated at theta ~ 0.08 and 0.92 (small var)"; here theta ~ N(0.08, 0.03^2), m ~ N(0.08, 0.035^2),
var ~ N(0.005, 0.001^2) (mirrored at 0.92).  All draws are clipped: m, theta in [0, 1], var in [0, 1/4].
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..parallel import run_jobs
from .._validation import check_array, check_bool, check_float, check_int, check_n_jobs, check_rng
from ..recalibrate import FirstOrderPlatt, SecondOrderPlatt

__all__ = ["sample_clinic", "run_decision", "shape_checks", "plot_decision", "DecisionResult", "METHODS"]

METHODS = ("raw m", "raw (m, var)", "1-D first-order Platt", "2-D first-order Platt", "1-D second-order Platt",
           "2-D second-order Platt", "oracle")
WEIGHTS = (0.25, 0.25, 0.35, 0.15)
BORDERLINE = (0.35, 0.65)
COST = 0.06
TAUS = np.linspace(-0.05, 0.30, 71)
RIDGE = 1e-4  # the appendix's ridge, read as our relative alpha (lambda = alpha tr(G)/d)


def sample_clinic(n, rng):
    """n patients: dict of arrays m, var, theta, group."""
    n = check_int(n, "n", "sample_clinic", 1, 10**9)
    rng = check_rng(rng, "sample_clinic")
    g = rng.choice(4, size=n, p=WEIGHTS)
    m, var, theta = np.empty(n), np.empty(n), np.empty(n)
    for k, (mt, st, mm, sm, mv, sv) in enumerate(((0.08, 0.03, 0.08, 0.035, 0.005, 0.001),
                                                  (0.92, 0.03, 0.92, 0.035, 0.005, 0.001))):
        i = g == k
        theta[i] = rng.normal(mt, st, i.sum())
        m[i] = rng.normal(mm, sm, i.sum())
        var[i] = rng.normal(mv, sv, i.sum())
    i = g == 2  # aleatoric: theta ~ 1/2
    m[i], var[i], theta[i] = rng.normal(0.5, 0.035, i.sum()), rng.normal(0.010, 0.002, i.sum()), \
        rng.normal(0.5, 0.040, i.sum())
    i = g == 3  # hidden subtype: theta near 0.12 or 0.88
    b = rng.random(i.sum()) < 0.5
    m[i], var[i] = rng.normal(0.5, 0.035, i.sum()), rng.normal(0.060, 0.010, i.sum())
    theta[i] = np.where(b, rng.normal(0.88, 0.030, i.sum()), rng.normal(0.12, 0.030, i.sum()))
    return {"m": np.clip(m, 0, 1), "var": np.clip(var, 0, 0.25), "theta": np.clip(theta, 0, 1), "group": g}


def _borderline(d):
    keep = (d["m"] >= BORDERLINE[0]) & (d["m"] <= BORDERLINE[1])
    return {k: v[keep] for k, v in d.items()}


def _scores(cal, ev, y, cost):
    """Patient scores 2 eta2-hat - 2 eta1-hat + 0.5 - c for the seven methods (rows in METHODS order)."""
    m, v = ev["m"], ev["var"]
    mom = [(m, m * m), (m, np.clip(m * m + v, m * m, m))]
    fits = (FirstOrderPlatt(ndim=1, degree=6, ridge=RIDGE).fit(cal["m"], None, y[:, :1]),
            FirstOrderPlatt(ndim=2, degree=4, ridge=RIDGE).fit(cal["m"], cal["var"], y[:, :1]),
            SecondOrderPlatt(ndim=1, degree=6, ridge=RIDGE).fit(cal["m"], None, y),
            SecondOrderPlatt(ndim=2, degree=4, ridge=RIDGE).fit(cal["m"], cal["var"], y))
    for f in fits:
        mom.append(f.predict_moments(m, v if f.ndim == 2 else None))
    out = [2 * e2 - 2 * e1 + 0.5 - cost for e1, e2 in mom]
    th = ev["theta"]
    out.append(2 * th * th - 2 * th + 0.5 - cost)  # oracle
    return np.stack(out)


@dataclass(frozen=True)
class DecisionResult:
    """gain[r, j, t]: realised gain per 100 borderline patients in repeat r, method j, threshold taus[t];
    referred[r, j, t]: fraction referred."""

    taus: np.ndarray
    gain: np.ndarray = field(repr=False)
    referred: np.ndarray = field(repr=False)
    methods: tuple = METHODS

    @property
    def mean(self):
        return self.gain.mean(axis=0)

    @property
    def sem(self):
        return self.gain.std(axis=0, ddof=1) / np.sqrt(self.gain.shape[0])

    def to_rows(self):
        m, s, r = self.mean, self.sem, self.referred.mean(axis=0)
        return [{"method": meth, "tau": float(t), "gain_mean": float(m[j, k]), "gain_sem": float(s[j, k]),
                 "referred": float(r[j, k])} for j, meth in enumerate(self.methods) for k, t in enumerate(self.taus)]


def _repeat(seed, n_cal, n_eval, cost, taus):
    """One calibration/evaluation draw: realised gain and referral rate per (method, tau)."""
    g = np.random.default_rng(seed)
    cal, ev = _borderline(sample_clinic(n_cal, g)), _borderline(sample_clinic(n_eval, g))
    y = (g.random((len(cal["m"]), 2)) < cal["theta"][:, None]).astype(float)  # 2-snapshots
    S = _scores(cal, ev, y, cost)
    realised = 2 * ev["theta"] ** 2 - 2 * ev["theta"] + 0.5 - cost
    refer = S[:, None, :] > taus[None, :, None]  # (method, tau, patient)
    return 100.0 * (refer @ realised) / len(realised), refer.mean(axis=2)


def run_decision(*, repeats=200, n_cal=3000, n_eval=8000, cost=COST, taus=TAUS, rng=0, progress=False,
                 n_jobs=1):
    """Run Experiment 3: ``repeats`` independent calibration/evaluation draws (each seeded from ``rng``; the same
    numbers with any ``n_jobs`` and joblib backend)."""
    func = "run_decision"
    repeats = check_int(repeats, "repeats", func, 2, 100_000)
    n_cal = check_int(n_cal, "n_cal", func, 100, 10**8)
    n_eval = check_int(n_eval, "n_eval", func, 100, 10**8)
    cost = check_float(cost, "cost", func, 0.0, 1.0)  # on the gain's scale (before the cost it lies in [0, 1/2])
    taus = check_array(taus, "taus", func)
    n_jobs = check_n_jobs(n_jobs, func)
    check_bool(progress, "progress", func)
    seeds = check_rng(rng, "run_decision").integers(0, 2**63 - 1, size=repeats)
    out = run_jobs(_repeat, [(int(sd), n_cal, n_eval, cost, taus) for sd in seeds], n_jobs=n_jobs,
                   progress=progress, desc="decision")
    return DecisionResult(taus, np.stack([g for g, _ in out]), np.stack([r for _, r in out]))


def shape_checks(res):
    """The paper's three shape claims, checked on the curves (each with the numbers behind it)."""
    m = res.mean
    j = {name: i for i, name in enumerate(res.methods)}
    pos = res.taus >= 0
    t0 = int(np.argmin(np.abs(res.taus)))
    t10 = int(np.argmin(np.abs(res.taus - 0.10)))
    oracle = m[j["oracle"]]
    track = float(np.max(np.abs(m[j["2-D second-order Platt"]][pos] - oracle[pos])))
    raw2 = m[j["raw (m, var)"]]
    first = [j["raw m"], j["1-D first-order Platt"], j["2-D first-order Platt"]]
    max_ref = float(res.referred.mean(axis=0)[first][:, pos].max())
    return {
        "2-D second-order tracks the oracle for tau >= 0": {
            "max |gain - oracle gain| over tau >= 0": track, "oracle gain at tau = 0": float(oracle[t0]),
            "holds": bool(track <= 0.15 * float(oracle[t0]))},
        "raw (m, var) matches at tau = 0, collapses by tau = 0.10": {
            "gain at tau=0": float(raw2[t0]), "oracle at tau=0": float(oracle[t0]),
            "gain at tau=0.10": float(raw2[t10]), "oracle at tau=0.10": float(oracle[t10]),
            "holds": bool(raw2[t0] >= 0.8 * oracle[t0] and raw2[t10] <= 0.2 * oracle[t10])},
        "first-order methods refer almost no one (tau >= 0)": {
            "largest referral fraction": max_ref, "holds": bool(max_ref <= 0.05)},
    }


def plot_decision(res, ax=None):
    """Figure 3: realised gain per 100 borderline patients against tau, mean +- 1.96 SEM."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    for j, name in enumerate(res.methods):
        mu, s = res.mean[j], res.sem[j]
        style = {"color": "k", "lw": 2} if name == "oracle" else {}
        ax.plot(res.taus, mu, label=name, **style)
        ax.fill_between(res.taus, mu - 1.96 * s, mu + 1.96 * s, alpha=0.2, **({"color": "k"} if style else {}))
    ax.axhline(0, color="grey", lw=0.5)
    ax.set_xlabel("referral threshold tau")
    ax.set_ylabel("realised gain per 100 borderline patients")
    ax.legend(fontsize=7)
    return ax


def report(res, checks):
    """The text ``socal reproduce decision`` prints: the gain at tau = 0 and 0.06 per method, then the checks."""
    i0 = int(np.argmin(np.abs(res.taus - 0.0)))
    i6 = int(np.argmin(np.abs(res.taus - 0.06)))
    lines = [f"Experiment 3, {res.gain.shape[0]} repeats: realised gain per 100 borderline patients (mean +- 1.96 SEM)"]
    for j, name in enumerate(res.methods):
        lines.append(f"  {name:<24} tau=0: {res.mean[j, i0]:6.2f} +- {1.96 * res.sem[j, i0]:.2f}   "
                     f"tau=0.06: {res.mean[j, i6]:6.2f} +- {1.96 * res.sem[j, i6]:.2f}")
    lines += [f"  [{'holds' if c['holds'] else 'FAILS'}] {claim}" for claim, c in checks.items()]
    return "\n".join(lines)
