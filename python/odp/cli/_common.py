"""Helpers shared by the CLI subcommands: JSON output of exact numbers, plain tables, and
opening the ledger a command names (a SQLite file or a ``postgresql://`` URL)."""

from __future__ import annotations

import argparse
import json
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Iterable, Sequence, TypeAlias

if TYPE_CHECKING:
    from ..ledger.chained import ChainedLedger
    from ..limits import Limits

#: What ``register(subparsers)`` of each subcommand receives.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def jsonable(obj: Any) -> Any:  # Any: any JSON-able odp value in, JSON values out
    """Convert Fractions (to exact ``"p/q"`` strings) and other odp values for ``json.dumps``."""
    if isinstance(obj, Fraction):
        return str(obj)
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    to_json = getattr(obj, "to_json", None)
    if callable(to_json):
        return jsonable(to_json())
    return obj


def strict_int(text: str) -> int:
    """An integer written with decimal digits only (``int()`` would also read ``1_000`` as
    1000: a typo is refused instead of silently taken).  Raises ``ValueError`` otherwise."""
    import re

    if not re.fullmatch(r"\s*[+-]?[0-9]+\s*", text):
        raise ValueError(f"invalid integer {text!r}")
    return int(text)


def print_json(obj: Any) -> None:  # Any: as jsonable
    print(json.dumps(jsonable(obj), indent=2, sort_keys=False))


def format_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:  # Any: str()-ed
    """A plain left/right aligned text table (numbers right-aligned)."""
    rows = [[str(c) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def fmt(row: Sequence[str]) -> str:
        cells = []
        for i, cell in enumerate(row):
            numeric = cell.replace(".", "", 1).replace("-", "", 1).replace("/", "", 1).isdigit()
            cells.append(cell.rjust(widths[i]) if numeric else cell.ljust(widths[i]))
        return "  ".join(cells).rstrip()

    lines = [fmt(list(headers)), "  ".join("-" * w for w in widths)]
    lines.extend(fmt(row) for row in rows)
    return "\n".join(lines)


# ------------------------------------------------------------------ long work: limits, progress
def add_limit_options(parser: argparse.ArgumentParser) -> None:
    """``--max-memory`` / ``--max-seconds`` (see :mod:`odp.limits`)."""
    from ..limits import DEFAULT_MAX_MEMORY, DEFAULT_MAX_SECONDS, format_bytes, format_seconds

    group = parser.add_argument_group(
        "limits", "the work is estimated first and refused above these limits")
    group.add_argument("--max-memory", metavar="SIZE", default=None,
                       help=f"memory limit, e.g. 8G or 512M; a bare number is GiB; 'inf' for none "
                            f"(default {format_bytes(DEFAULT_MAX_MEMORY)})")
    group.add_argument("--max-seconds", metavar="S", default=None,
                       help=f"time limit in seconds for the estimated work; 'inf' for none "
                            f"(default {format_seconds(DEFAULT_MAX_SECONDS)})")


def limits_from_args(args: argparse.Namespace) -> Limits:
    """The :class:`odp.limits.Limits` of ``--max-memory`` / ``--max-seconds`` (named by flag)."""
    from ..limits import cli_limits

    return cli_limits(getattr(args, "max_memory", None), getattr(args, "max_seconds", None))


def progress_from_args(args: argparse.Namespace) -> bool:
    """Progress bars: on a terminal, never under ``--json``."""
    return not getattr(args, "json", False)


def check_output_path(path: str, option: str = "-o") -> None:
    """Refuse an output path whose directory does not exist or is not writable, or that is a
    directory -- *before* any work is done."""
    import os

    from ..errors import InvalidParameter

    if not path:
        raise InvalidParameter(f"{option}: empty path")
    if os.path.isdir(path):
        raise InvalidParameter(f"{option} {path}: is a directory, not a file path")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        # the nearest existing ancestor says why: a file where a directory must be, or none
        ancestor = parent
        while not os.path.exists(ancestor) and os.path.dirname(ancestor) != ancestor:
            ancestor = os.path.dirname(ancestor)
        if os.path.exists(ancestor) and not os.path.isdir(ancestor):
            raise InvalidParameter(f"{option} {path}: {ancestor} is a file, not a directory")
        raise InvalidParameter(f"{option} {path}: the directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InvalidParameter(f"{option} {path}: the directory {parent} is not writable")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise InvalidParameter(f"{option} {path}: the file exists and is not writable")


#: How a CLI argument naming a ledger is described in --help.
LEDGER_HELP = "ledger: a SQLite file or a postgresql:// URL"


def open_ledger_readonly(spec: str, key_file: str | None = None) -> ChainedLedger:
    """Open the ledger ``spec`` (a SQLite path or a ``postgresql://`` URL) for reading only."""
    from ..ledger import open_readonly

    return open_readonly(spec, key_file=key_file)


def ledger_name(spec: str) -> str:
    """``spec`` as it may be printed: a URL without its password."""
    from ..ledger import is_postgres_url, redact

    return redact(spec) if is_postgres_url(spec) else str(spec)
