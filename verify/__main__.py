"""python -m socal.verify [audit options]: the same as ``socal audit``."""

import argparse
import sys

from .cli import register


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m socal.verify")
    sub = parser.add_subparsers(dest="command")
    register(sub)
    args = parser.parse_args(["audit", *(sys.argv[1:] if argv is None else argv)])
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
