"""The `tealeaves` command: the parser built from the command groups (one module each, `COMMANDS`),
dispatch, and error handling. Subcommands call the same public functions as Python users. Every
input error prints one line `tealeaves: error: ...` and exits with status 2."""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib
import os
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from .. import __version__
from ..errors import Interrupted, TealeavesError
from ..files import atomic
from ..output import jsonout
from ..output.display import TerminalStream
from .paths import check_outputs

# command -> the module of its group (`PARSERS` there adds its parser), in `tealeaves --help` order
COMMANDS = {
    "heldout": "heldout", "completion": "heldout", "demo": "tools", "compare": "compare",
    "curve": "compare", "csl": "heldout", "coherence": "coherence", "diversity": "coherence",
    "bcubed": "coherence", "irbo": "embeddings", "embedding-coherence": "embeddings",
    "intrusion": "intrusion", "predictive": "intrusion", "annotate": "intrusion", "proxann": "proxann",
    "evaluate": "evaluate", "select": "evaluate", "report": "tools", "convert": "tools",
    "methods": "heldout", "warm-up": "tools", "synth": "tools", "diagnostics": "diagnostics",
    "index": "index", "stability": "stability", "metaeval": "metaeval", "judge": "judge",
}


class HelpFormatter(argparse.HelpFormatter):
    """Every option's help ends with its default (an option given no default, or a flag, has none to
    show; a help text that states its default already is left alone)."""

    def add_argument(self, action: argparse.Action) -> None:
        if action.help is not argparse.SUPPRESS and not (action.help or "").strip() \
                and _shown_default(action) is not None:  # argparse shows no help for an empty text
            action = copy.copy(action)
            action.help = f"default {_shown_default(action)}"
        super().add_argument(action)

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        shown = _shown_default(action)
        if shown is None or "default" in text.lower():
            return text
        return f"{text} (default {shown})"


def _shown_default(action: argparse.Action) -> str | None:
    """An option's default as its help shows it (argparse %-escaped); None for a positional, a flag
    or an option that has no default."""
    value = action.default
    if not action.option_strings or value is None or isinstance(value, bool) or value is argparse.SUPPRESS:
        return None
    shown = ",".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
    return shown.replace("%", "%%")  # argparse %-formats the help


class Parser(argparse.ArgumentParser):
    """Usage errors are one line, like every other error; every parser (and sub-parser) shows each
    option's default (`HelpFormatter`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        print(f"tealeaves: error: {message} (see '{self.prog} --help')", file=sys.stderr)
        raise SystemExit(2)


def main(argv: Sequence[str] | None = None) -> int:
    """Run `tealeaves ARGV`; everything it prints passes `terminal_safe` (an input's words and
    tokens never send control sequences to the terminal); `--json -` is JSON, which escapes its own.
    numba's colour set-up is off: colorama's exit hook would write its reset through the escaper."""
    os.environ.setdefault("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", "1")
    out = TerminalStream(sys.stdout)
    jsonout.STDOUT = raw = TerminalStream(sys.stdout, escape=False)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(TerminalStream(sys.stderr)):
        status = _main(argv)
        if status == 0 and (out.pipe_closed or raw.pipe_closed):  # `| head`: files written all the same
            print("tealeaves: standard output was closed before the command finished; "
                  "its output files were written", file=sys.stderr)
            return 141
        return status


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser(command_named(sys.argv[1:] if argv is None else argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # usage error (one line, printed) or --help/--version
        return exc.code if isinstance(exc.code, int) else 2
    from ..files import kept

    used: list[kept.Kept] = []  # the kept runs the command opened (`kept.recording`)
    try:
        # with --json - the JSON is the only thing on stdout; the table goes to stderr
        quiet_stdout = contextlib.redirect_stdout(sys.stderr) if getattr(args, "json", None) == "-" \
            else contextlib.nullcontext()
        address = None
        if hasattr(args, "dask"):
            from ..util.parallel import DASK_ENV, use_dask

            address = args.dask or os.environ.get(DASK_ENV)
        # every output is put in place when the command succeeds; a failure leaves none behind
        with atomic.transaction(), quiet_stdout, kept.recording() as used:
            check_outputs(args)
            with (use_dask(address, getattr(args, "dask_min_seconds", None)) if address
                  else contextlib.nullcontext()):
                status = args.func(args)
            for k in used:  # work a resumed run did not do again (--keep)
                if k.taken():
                    print(f"tealeaves: resumed: {k.taken()}", file=sys.stderr)
            return status
    except BrokenPipeError:  # `tealeaves ... | head`: stop quietly
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except TealeavesError as exc:
        print(f"tealeaves: error: {message(exc, parser, args)}", file=sys.stderr)
        return 2
    except OSError as exc:
        name = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        print(f"tealeaves: error: {name}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except Interrupted as exc:  # Ctrl-C in a run that keeps its finished work: what, where, how to resume
        print(f"tealeaves: interrupted: {exc}; the same command with the same {exc.flag} resumes it",
              file=sys.stderr)
        return 130
    except KeyboardInterrupt as exc:  # what was kept elsewhere (the judge's cache), and how to keep work
        if used:  # after the kept work finished (writing the result): it is kept all the same
            print(f"tealeaves: interrupted: {'; '.join(k.summary() for k in used)}; the same command with "
                  "the same --keep resumes it", file=sys.stderr)
            return 130
        said = f": {exc}" if str(exc) else ""
        keeps = ("--keep DIR keeps each finished document" if getattr(args, "keep", False) is None else
                 "--out DIR keeps each trained model and its evaluation"
                 if args.func.__name__ == "_cmd_select" and args.out is None else "")
        nothing = "nothing else" if said else "nothing"
        hint = f"; {nothing} was kept ({keeps}, and the same command with it resumes)" if keeps else ""
        print(f"tealeaves: interrupted{said}{hint}", file=sys.stderr)
        return 130


def command_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, str]:
    """The flags of the command `args` ran, by parameter name: {"high_top": "--high-top", ...}."""
    p: argparse.ArgumentParser | None = parser
    flags: dict[str, str] = {}
    while p is not None:
        sub = None
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                sub = action
            elif action.option_strings and action.dest != "help":
                flags[action.dest] = max(action.option_strings, key=len)
        p = sub.choices.get(getattr(args, sub.dest, None)) if sub is not None else None
    return flags


def message(exc: TealeavesError, parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    """`exc`'s message with the parameters it names (`exc.options`) spelled as the command's flags."""
    text = str(exc)
    flags = command_flags(parser, args)
    for name in getattr(exc, "options", ()):
        if name in flags:
            text = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", flags[name], text)
    return text


def command_named(argv: Sequence[str]) -> str | None:
    """The command `argv` runs: its first word that is not an option (the top level has no options
    that take a value), or None."""
    return next((a for a in argv if not a.startswith("-")), None)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Every command's parser; given the `command` that runs, only the commands of its group, so that
    a command imports only its own group's module (some import most of the package). The list of
    commands (`tealeaves --help`, or a command that is not one) has them all."""
    p = Parser(prog="tealeaves", description="Evaluate topic models.")
    p.add_argument("--version", action="version", version=f"tealeaves {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    groups = {COMMANDS[command]} if command in COMMANDS else set(COMMANDS.values())
    for name, group in COMMANDS.items():
        if group in groups:
            importlib.import_module(f".{group}", __package__).PARSERS[name](sub)
    return p
