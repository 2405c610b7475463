"""The `tealeaves` command's entry point. It lives outside the tealeaves package so that Ctrl-C
while the package is still importing (numpy, scipy and numba take about a second) ends with one
line, like Ctrl-C at any other time, instead of a traceback."""

from __future__ import annotations

import sys


def main() -> int:
    try:
        from tealeaves.cli import main as cli_main

        return cli_main()
    except KeyboardInterrupt:
        print("tealeaves: interrupted", file=sys.stderr)
        return 130
