"""Why CE2's interval under-covered with many labels per item at n = 5,000 until Lepski's finest candidate counted
the label noise (socal.lepski.label_noise_factor): the smoothing bias of the degrees compared, against the degrees
that more labels make affordable.

With k labels per item the targets' label noise shrinks (the epistemic spread Var f* does not), so a finer degree
costs less noise than with two labels, while the finest candidate Lepski's rule compared was fixed by the rows
alone (50 training rows per coefficient: degree 7 at n = 5,000).  This prints, for the zoo's toy population at
h = 1/16, the bias-corrected estimate's mean error and SD at fixed degrees (alpha = 1e-3, no selection) with k = 2
and k = 10 labels, on the coverage benchmark's samples (its seeds), and the default call's for comparison.

    python benchmarks/labels_degree.py [--reps 20] [--member toy] [--n 5000] [--labels 2,10] [--degrees 4,6,8,10,12]
"""

import argparse
import zlib

import numpy as np

import socal


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--member", default="toy")
    p.add_argument("--n", type=int, default=5000)
    p.add_argument("--h", type=float, default=1 / 16)
    p.add_argument("--labels", default="2,10")
    p.add_argument("--degrees", default="4,6,8,10,12")
    a = p.parse_args(argv)
    pop = socal.synthetic.validation_zoo()[a.member].population
    truth = pop.ce2(a.h).value
    print(f"{a.member}, h = 1/{round(1 / a.h)}, n = {a.n:,}, CE2^pert = {truth:.4f}, {a.reps} replicates; "
          f"mean error (SD) of the bias-corrected estimate:\n")
    print("| k | " + " | ".join(f"degree {d}" for d in a.degrees.split(",")) + " | default call (degree used) |")
    print("| --- " * (len(a.degrees.split(",")) + 2) + "|")
    for k in (int(x) for x in a.labels.split(",")):
        samples = [pop.sample(a.n, h=a.h, k=k, rng=np.random.default_rng([zlib.crc32(a.member.encode()),
                                                                         round(1 / a.h), a.n, r]))
                   for r in range(a.reps)]
        cells = []
        for d in (int(x) for x in a.degrees.split(",")):
            e = np.array([socal.ce2(m, v, y, degree=d, ridge=1e-3, rng=r).estimate
                          for r, (m, v, y) in enumerate(samples)]) - truth
            cells.append(f"{e.mean():+.4f} ({e.std():.4f})")
        res = [socal.ce2(m, v, y, h=a.h, rng=r) for r, (m, v, y) in enumerate(samples)]
        e = np.array([x.estimate for x in res]) - truth
        used = sorted({x.degree for x in res})
        cells.append(f"{e.mean():+.4f} ({e.std():.4f}), {', '.join(map(str, used))}")
        print(f"| {k} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
