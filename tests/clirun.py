"""Running the `tealeaves` command in-process for the bad-input tests: its status and output,
and the one-line error rule (status 2, exactly one `tealeaves: error:` line)."""

from __future__ import annotations

import contextlib
import io

from tealeaves.cli import main


def run_cli(argv: list) -> tuple[int, str, str]:
    """(status, standard output, standard error) of `tealeaves ARGV` (arguments made str)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def one_line_error(argv: list, *parts: str) -> str:
    """The command fails with status 2 and one `tealeaves: error:` line holding every part."""
    code, _, err = run_cli(argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("tealeaves: error: "), (code, err)
    for part in parts:
        assert part in lines[0], (part, lines[0])
    return lines[0]
