"""Two claims of a made-up note, registered with socal.verify.claim."""

import math

from socal.verify import Result, Verdict, claim


@claim("example-harmonic", "Example note, eq. (1)", "The 10th harmonic number is below 3.",
       paper={"bound": 3.0}, wrong={"bound": 2.9})
def harmonic(*, quick=False, bound):
    h10 = sum(1.0 / k for k in range(1, 11))
    verdict = Verdict.HOLDS if h10 < bound else Verdict.FAILS
    return Result(verdict, f"H_10 = {h10:.6f} against the bound {bound}", {"H_10": h10, "bound": bound})


@claim("example-loose", "Example note, eq. (2)", "e <= 10.", paper={"bound": 10.0}, wrong={"bound": 2.0})
def loose(*, quick=False, bound):
    if math.e > bound:
        return Result(Verdict.FAILS, f"e = {math.e:.6f} > {bound}", {"e": math.e, "bound": bound})
    verdict = Verdict.VACUOUS if bound > 2 * math.e else Verdict.HOLDS
    return Result(verdict, f"true, with slack {bound / math.e:.2f}x", {"e": math.e, "slack": bound / math.e})
