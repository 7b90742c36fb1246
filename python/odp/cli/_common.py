"""Helpers shared by the CLI subcommands: JSON output of exact numbers, plain tables, and
opening the ledger a command names (a SQLite file or a ``postgresql://`` URL)."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any, Iterable, Sequence


def jsonable(obj: Any) -> Any:
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


def print_json(obj: Any) -> None:
    print(json.dumps(jsonable(obj), indent=2, sort_keys=False))


def format_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
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


#: How a CLI argument naming a ledger is described in --help.
LEDGER_HELP = "ledger: a SQLite file or a postgresql:// URL"


def open_ledger_readonly(spec: str, key_file: str | None = None):
    """Open the ledger ``spec`` (a SQLite path or a ``postgresql://`` URL) for reading only."""
    from ..ledger import open_readonly

    return open_readonly(spec, key_file=key_file)


def ledger_name(spec: str) -> str:
    """``spec`` as it may be printed: a URL without its password."""
    from ..ledger import is_postgres_url, redact

    return redact(spec) if is_postgres_url(spec) else str(spec)
