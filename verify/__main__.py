"""python -m verify [audit options]: the same as ``socal audit``."""

import argparse
import sys

from .cli import register

parser = argparse.ArgumentParser(prog="python -m verify")
sub = parser.add_subparsers(dest="command")
register(sub)
args = parser.parse_args(["audit", *sys.argv[1:]])
sys.exit(args.func(args))
