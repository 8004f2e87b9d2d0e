"""Follow one binary and one multiclass ``socal.evaluate`` call through the package: the modules it enters, in order,
how often each is entered from another module, and how many times the rows are validated.

``python docs/call_path.py [CHECKOUT]`` (CHECKOUT: a checkout whose ``socal`` to import; default this one) prints
the two paths; docs/layout.md ("Following one evaluate call") holds the output before the input layer of issue 74
and after it.  The calls are small (n = 600 binary, 400 x 3 classes, n_boot = 20), the same in either checkout.

What is counted: a profiler sees every Python call; a call is an *entry* into module B when its caller's frame is in
another socal module A (a call within a module is not counted).  The modules are listed in the order the call first
enters them.  *Row validations* count the calls of ``check_labels`` (binary) and ``check_multiclass``: each one
reads every row's votes again, so a call that validates its rows once and hands them on shows 1.
"""

import os
import sys
import textwrap
import warnings


def trace(fn):
    """(modules in the order first entered, entries per module, row validations) of ``fn()``."""
    entries, order, validations = {}, [], 0

    def module_of(frame):
        name = frame.f_globals.get("__name__", "")
        return name if name == "socal" or name.startswith("socal.") else None

    def prof(frame, event, arg):
        nonlocal validations
        if event != "call":
            return
        mod = module_of(frame)
        if mod is None:
            return
        if frame.f_code.co_name in ("check_labels", "check_multiclass"):
            validations += 1
        caller = frame.f_back
        src = module_of(caller) if caller is not None else None
        if src == mod:
            return
        if mod not in entries:
            order.append(mod)
        entries[mod] = entries.get(mod, 0) + 1

    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return order, entries, validations


def main(root=None):
    if root:
        sys.path.insert(0, os.path.abspath(root))
    import numpy as np

    import socal

    warnings.simplefilter("ignore")
    m, v, _, y = socal.synthetic.toy_population().sample_raw(600, rng=0)
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.full(3, 2.0), 400)
    S = P * (1 - P) * 0.05
    Y = np.stack([rng.multinomial(1, p, size=2).argmax(axis=1) for p in P])
    calls = {"binary": lambda: socal.evaluate(m, v, y, h=1 / 16, n_boot=20, rng=0),
             "multiclass (C = 3)": lambda: socal.evaluate(P, S, Y, h=1 / 16, n_boot=20, rng=0)}
    print(f"socal from {os.path.dirname(socal.__file__)}")
    for name, fn in calls.items():
        order, entries, validations = trace(fn)
        print(f"\n{name} evaluate: {len(order)} modules; rows validated {validations} time(s) (check_labels, "
              f"check_multiclass);\n  _validation entered {entries.get('socal._validation', 0)} times")
        modules = ", ".join(p.removeprefix("socal.") for p in order)
        print(textwrap.fill("modules, in the order first entered: " + modules, width=116, initial_indent="  ",
                            subsequent_indent="    "))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
