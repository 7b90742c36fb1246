"""The ``odp`` command line.

Each subcommand lives in its own module ``odp.cli.<name>`` that defines
``register(subparsers) -> None``; the module adds one parser and sets ``func`` (a callable taking
the parsed ``argparse.Namespace`` and returning the exit code).  Modules are discovered
automatically, so adding a command never touches this file.  Every command accepts ``--json``
where it prints results, so scripts can consume the output.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import re
import sys
from typing import Any, NoReturn, Sequence

from ..errors import OdpError


def _strict_int(text: str) -> int:
    """``type=int`` of every odp option (:func:`odp.cli._common.strict_int`)."""
    from ._common import strict_int

    return strict_int(text)


_strict_int.__name__ = "int"  # argparse names the type in "invalid int value: '1_000'"


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit code 2), like every other odp error.

    A value that starts with ``-`` and a digit (``--delta -1e-6``, ``--stops -1,2``) is taken
    as the option's value -- and then refused for its sign, with the reason -- instead of as an
    unknown option ("expected one argument"): no odp option name starts with a digit."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-\.?[0-9]")
        self.register("type", int, _strict_int)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = _Parser(
        prog="odp",
        description=(
            "Output differential privacy: exact per-output privacy accounting with a durable "
            "ledger and certificates checked against the ledger rules of the Lean 4 "
            "specification (Theorem 7 for finite output spaces, and its application to a Lean "
            "model of the accountant's rules, are machine-checked by scripts/check_lean.sh in "
            "CI; that the Python accountant follows the model is tested)."
        ),
        epilog=(
            "Exit codes, the same for every command: 0 success; 2 the input is not what the "
            "command takes (not a ledger or a certificate, a missing or unreadable file, a bad "
            "or out-of-range value, an empty path) or a request it refuses (above a limit, no "
            "bound it can certify): one line on stderr, nothing written; 1 only for "
            "well-formed input that fails its check (a certificate that does not verify); 70 "
            "never for user input: an internal error, a bug in odp. Long commands estimate their memory and time first "
            "and refuse above --max-memory / --max-seconds; they show a progress bar when "
            "stderr is a terminal (never under --json)."
        ),
    )
    parser.add_argument("--version", action="version", version=f"odp {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(subparsers)
    return parser


#: Exit codes, one rule for every command (tests/test_cli_bad_inputs.py): 0 success; 2 input
#: that is not what the command takes (not a ledger or certificate, a missing file, a bad value,
#: an empty path) or a refused request -- one line on stderr, nothing written; 1 only for
#: well-formed input that fails its check (a certificate that does not replay); 70 never for
#: user input: an internal error (a bug: one line, the traceback with ODP_TRACEBACK=1); 130
#: interrupted.
EXIT_OK, EXIT_VERDICT, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 70, 130


def _fail(args: argparse.Namespace, exc: BaseException, message: str, code: int) -> int:
    """Report a failure as one line on stderr (or one JSON object under --json)."""
    if getattr(args, "json", False):  # scripts asked for JSON: give them a parsable failure
        import json

        print(json.dumps({"ok": False, "error": message, "type": type(exc).__name__}))
    else:
        print(f"odp {args.command}: error: {message}", file=sys.stderr)
    return code


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(func(args) or 0)
    except OdpError as exc:
        notes = " ".join(getattr(exc, "__notes__", ()))
        return _fail(args, exc, _one_line(f"{exc} {notes}"), EXIT_USAGE)
    except ModuleNotFoundError as exc:  # an optional dependency (extra) is not installed
        from ..extras import EXTRAS, MissingDependency

        if (exc.name or "").split(".")[0] not in EXTRAS:
            return _internal(args, exc)
        return _fail(args, exc, str(MissingDependency(exc.name or "")), EXIT_USAGE)
    except BrokenPipeError:  # e.g. `odp ledger show X | head`
        return EXIT_OK
    except OSError as exc:  # a file that cannot be read or written
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        return _fail(args, exc, _one_line(f"{where}{exc.strerror or exc}"), EXIT_USAGE)
    except KeyboardInterrupt:
        print(f"odp {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - a bug: one line instead of a traceback
        return _internal(args, exc)


def _internal(args: argparse.Namespace, exc: BaseException) -> int:
    import os

    if os.environ.get("ODP_TRACEBACK"):
        raise exc
    message = (f"internal error ({type(exc).__name__}: {_one_line(str(exc))}); this is a bug in "
               "odp, please report it with the command you ran (ODP_TRACEBACK=1 shows the "
               "traceback)")
    return _fail(args, exc, message, EXIT_INTERNAL)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
