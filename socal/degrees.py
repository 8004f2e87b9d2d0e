"""The degree rule: which polynomial degrees and ridges a fit chooses among, and the one limit on the degree.

The paper's rule (Proposition "main"): l = ceil(2 log n / log theta(h)), theta(h) = exp(asinh(h pi)).  The default
schedule (Appendix "Experiment 1"): the cap min(max_degree, the paper's rule, the largest degree with no more
coefficients than training rows), then halving down to a floor; cross-validation chooses among them.  The ridge grid
is the paper's, 1e-6 ... 1 (relative: lambda = alpha tr(G)/d).
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import bandwidth_axes, check_bandwidth, check_float, check_int

__all__ = ["MAX_DEGREE", "DEFAULT_MAX_DEGREE", "MIN_DEGREE", "DEFAULT_ALPHAS", "theta", "paper_degree",
           "degree_schedule", "resolution_degree", "resolve_degrees", "check_degree", "resolve_alphas", "stream_cap",
           "training_rows", "check_n", "scalar", "MIN_ROWS_PER_COEF", "admissible_degree"]

MAX_DEGREE = 200  # the one limit on the degree per axis: 201^2 = 40,401 coefficients in 2-D
DEFAULT_ALPHAS = tuple(float(10.0 ** e) for e in range(-6, 1))  # the paper's ridge grid 1e-6 ... 1
DEFAULT_MAX_DEGREE = 44  # the paper's cap at h = 1/16 (Appendix "Experiment 1")
DEFAULT_FOLDS = 5  # the estimators' and recalibrators' default 'folds' (cross-validation)
MIN_DEGREE = 4  # the floor of the halving schedule
# a degree above cross-validation's choice (the resolution floor, Lepski's finer candidates) only with this many
# training rows per coefficient: below it the variance it adds outweighs the smoothing bias it removes
MIN_ROWS_PER_COEF = 50


def theta(h: float) -> float:
    """Bernstein-ellipse parameter theta(h) = h pi + sqrt(h^2 pi^2 + 1) (Corollary "Polynomial approximation").

    Equal to exp(asinh(h pi)), the form used here: it keeps log theta exact for tiny h, where h pi + sqrt(...)
    rounds to 1.
    """
    h = check_bandwidth(h, "theta")
    return math.exp(math.asinh(h * math.pi))


def paper_degree(n: float, h: float | tuple[float, float]) -> int:
    """The degree rule of Proposition "main": l = ceil(2 log n / log theta(h)), log theta(h) = asinh(h pi).

    With one bandwidth per axis, h = (h_mean, h_var), each axis has its own ellipse after mapping its interval to
    [-1, 1]: log theta_mean = asinh(h_mean pi) on [0, 1], log theta_var = asinh(4 h_var pi) on [0, 1/4] (the strip
    of half-width h_var pi/2 becomes 4 h_var pi wide); the equal-degree tensor basis needs the smaller.  A single h
    gives theta_mean (the variance axis's ellipse is then the larger), as in the paper.
    """
    n = check_float(n, "n", "paper_degree", 1.0, math.inf)  # real n: the bounds evaluate it between sample sizes
    h_mean, h_var = bandwidth_axes(check_bandwidth(h, "paper_degree", per_axis=True))
    log_theta = min(math.asinh(h_mean * math.pi), math.asinh(4.0 * h_var * math.pi))
    return int(math.ceil(2.0 * math.log(n) / log_theta))


def degree_schedule(lmax, floor=MIN_DEGREE):
    """Candidate degrees: lmax, then halving down to ``floor`` (Appendix "Experiment 1"), largest first."""
    floor = max(0, min(floor, lmax))
    out = [lmax]
    while floor <= out[-1] // 2 < out[-1]:  # stops at 0 too (0 // 2 == 0)
        out.append(out[-1] // 2)
    if out[-1] > floor:
        out.append(floor)
    return tuple(out)


def scalar(x):
    """0-d numpy arrays as their Python scalar (a degree of np.array(4) is the degree 4)."""
    return x.item() if isinstance(x, np.ndarray) and x.ndim == 0 else x


def check_degree(func, degree, h):
    """The checks of ``degree`` that need no data (its type and range; 'paper' needs ``h``), made with the other
    settings before any row is read: a bad degree used to be refused only after the statistics pass had read every
    chunk (issue 74).  What depends on n (a degree too large for the rows) is :func:`resolve_degrees`'."""
    degree = scalar(degree)
    if isinstance(degree, str):
        if degree != "paper":
            raise ValueError(f"The 'degree' parameter of {func} must be None, 'paper', an int in the range [0, "
                             f"{MAX_DEGREE}] or a list of such ints. Got {degree!r} instead.")
        if h is None:
            raise ValueError(f"The 'h' parameter of {func} must be given when degree='paper' (the rule "
                             f"l = ceil(2 log n / log theta(h)) needs it). Got None instead.")
    elif isinstance(degree, (list, tuple, range, np.ndarray)):
        if np.ndim(degree) != 1 or len(degree) == 0:
            raise ValueError(f"The 'degree' parameter of {func} must be None, 'paper', an int in the range [0, "
                             f"{MAX_DEGREE}] or a non-empty list of such ints. Got {degree!r} instead.")
        for d in degree:
            check_int(scalar(d), "degree", func, 0, MAX_DEGREE)
    elif degree is not None:
        check_int(degree, "degree", func, 0, MAX_DEGREE)


def resolve_degrees(func, degree, h, n, n_train, max_degree, ndim, use_h_floor=True):
    """Candidate degrees (largest first) and whether they are to be selected."""
    size = (lambda l: (l + 1) ** ndim)
    check_degree(func, degree, h)  # its form (what needs no data); below, what n decides
    degree = scalar(degree)
    if isinstance(degree, str):  # 'paper', with h
        degree = paper_degree(n, h)
        if degree > MAX_DEGREE:
            raise ValueError(f"The 'degree' parameter of {func} is 'paper', whose rule gives l = {degree} at n = {n}, "
                             f"h = {h}: above the limit {MAX_DEGREE}; pass degree=None (cross-validated, capped) or a "
                             f"larger 'h' instead.")
    if degree is None:
        lmax = max_degree
        if h is not None:
            lmax = min(lmax, paper_degree(n, h))
        while lmax > 0 and size(lmax) > n_train:  # primal ridge: no more features than training rows
            lmax -= 1
        floor = min(MIN_DEGREE, lmax)
        if h is not None and use_h_floor:
            # The resolution floor: structure of width ~h in the calibration functions (populations with score atoms
            # have it) needs l >= ceil(1/(pi h)), and cross-validated squared error, nearly flat below it, picks fits
            # that bias CE2 downwards; on smooth scores the floor costs variance instead, so it applies only with
            # >= 50 training rows per coefficient (docs/numbers.md, "Why each rule of the estimator is there").  The
            # bias-corrected estimate passes use_h_floor=False and lets Lepski's rule compare finer degrees instead.
            floor_h = resolution_degree(h)
            if MIN_ROWS_PER_COEF * size(floor_h) <= n_train:
                floor = min(max(floor, floor_h), lmax)
        return degree_schedule(lmax, floor), True
    if isinstance(degree, (list, tuple, range, np.ndarray)):
        degs = tuple(sorted({check_int(scalar(d), "degree", func, 0, MAX_DEGREE) for d in degree},
                            reverse=True))
        select = len(degs) > 1
    else:
        degs = (check_int(degree, "degree", func, 0, MAX_DEGREE),)
        select = False
    limit = n_train if select else n
    if size(degs[0]) > limit:
        raise ValueError(f"The 'degree' parameter of {func} must satisfy (degree+1)^{ndim} <= {limit} (n too small "
                         f"for the degree: {limit} rows to fit {size(degs[0])} coefficients). Got {degs[0]} instead.")
    return degs, select


def resolution_degree(h):
    """ceil(1/(pi h)): the degree below which a polynomial cannot follow structure of width ~h in the score.

    Per axis (h_mean, h_var): structure of width h_var on [0, 1/4] is as fine as width 4 h_var on [0, 1], so the
    finer of h_mean and 4 h_var decides.
    """
    h_mean, h_var = bandwidth_axes(h)
    return math.ceil(1.0 / (math.pi * min(h_mean, 4.0 * h_var)))


def resolve_alphas(func, ridge):
    """The ridge grid a fit searches: ``ridge`` as given (a float or a list), or the default grid."""
    alpha = scalar(ridge)
    if alpha is None:
        return DEFAULT_ALPHAS, True
    if isinstance(alpha, (list, tuple, np.ndarray)):
        if np.ndim(alpha) != 1 or len(alpha) == 0:
            raise ValueError(f"The 'ridge' parameter of {func} must be None, a float in [0, 1e6] or a non-empty list "
                             f"of such floats. Got {alpha!r} instead.")
        al = tuple(sorted({check_float(scalar(a), "ridge", func, 0.0, 1e6) for a in alpha}))
        return al, len(al) > 1
    return (check_float(alpha, "ridge", func, 0.0, 1e6),), False


def admissible_degree(n_train, ndim):
    """The largest degree l with MIN_ROWS_PER_COEF training rows per each of its (l + 1)^ndim coefficients (-1 if
    none): MIN_ROWS_PER_COEF (l + 1)^ndim <= n_train, checked in integers (the float root only starts the search),
    so the boundary is exact."""
    l = max(int((n_train / MIN_ROWS_PER_COEF) ** (1.0 / ndim)) - 1, -1)
    while l >= 0 and MIN_ROWS_PER_COEF * (l + 1) ** ndim > n_train:
        l -= 1
    while MIN_ROWS_PER_COEF * (l + 2) ** ndim <= n_train:
        l += 1
    return l


def training_rows(n, folds, holdout):
    """Nominal training rows of a split (the degree rule's 'n_train'): n (1 - holdout), or n minus one fold."""
    return int(n * (1 - holdout)) if holdout is not None else n - -(-n // folds)


def check_n(func, n, folds, holdout=None):
    """At least 2 items per fold, as many as a split needs on each side to train and validate anything; with a
    hold-out fraction, at least 2 expected on each side of it (n holdout and n (1 - holdout))."""
    if n < 2 * folds:
        raise ValueError(f"The 'mean' parameter of {func} must have at least {2 * folds} items (2 per fold). "
                         f"Got {n} instead.")
    if holdout is not None and min(n * holdout, n * (1.0 - holdout)) < 2.0:
        raise ValueError(f"The 'holdout' parameter of {func} must leave at least 2 of the {n} items on each side "
                         f"(a fraction in [{2.0 / n:.3g}, {1.0 - 2.0 / n:.3g}]). Got {holdout!r} instead, "
                         f"{n * (1.0 - holdout):.4g} items to train on and {n * holdout:.4g} to validate.")


def stream_cap(func, opts):
    """Degree cap of statistics built from a stream (n unknown until the pass is done)."""
    degree = scalar(opts.degree)
    if degree is None or isinstance(degree, str):
        return opts.max_degree
    degs = degree if isinstance(degree, (list, tuple, np.ndarray)) else [degree]
    if np.ndim(degs) != 1 or len(degs) == 0:
        return opts.max_degree  # resolve_degrees names the error after the pass
    return max(check_int(scalar(d), "degree", func, 0, MAX_DEGREE) for d in degs)
