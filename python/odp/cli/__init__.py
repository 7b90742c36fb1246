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
import sys
from typing import Sequence

from ..errors import OdpError


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="odp",
        description=(
            "Output differential privacy: exact per-output privacy accounting with a durable "
            "ledger and certificates checked against the ledger rules of the Lean 4 "
            "specification (Theorem 7 and the rules' soundness are machine-checked by "
            "scripts/check_lean.sh in CI)."
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        return int(func(args) or 0)
    except OdpError as exc:
        if getattr(args, "json", False):  # scripts asked for JSON: give them a parsable failure
            import json

            print(json.dumps({"ok": False, "error": str(exc), "type": type(exc).__name__}))
        else:
            print(f"odp {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `odp ledger show X | head`
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
