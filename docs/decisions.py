"""Print, for every claim of the quick audit, how its decisive comparisons are certified (docs/audit.md,
"No float decides").  Run: python docs/decisions.py"""

from collections import Counter

from socal import verify
from socal.verify._core import load_claims
from socal.verify.certified import HOW

load_claims()
print("| claim | verdict | " + " | ".join(HOW) + " | undecided |")
print("| --- | --- | " + " | ".join("---" for _ in HOW) + " | --- |")
total = Counter()
for cid, c in verify.REGISTRY.items():
    res = c.run(quick=True)
    cnt = Counter()
    for line in res.evidence.get("decided by", []):
        head, how = line.rsplit(" (", 1)
        cnt[how.rstrip(")")] += 1
        cnt["undecided"] += head.endswith("UNDECIDED")
    total += cnt
    print(f"| `{cid}` | {res.verdict.value} | " + " | ".join(str(cnt[h]) for h in HOW) + f" | {cnt['undecided']} |")
print("| **all** | | " + " | ".join(str(total[h]) for h in HOW) + f" | {total['undecided']} |")
