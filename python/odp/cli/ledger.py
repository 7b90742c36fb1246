"""``odp ledger show PATH``: inspect a SQLite ledger (read-only)."""

from __future__ import annotations

import argparse
from fractions import Fraction

from ..budget import format_fraction
from ._common import format_table, print_json


def register(subparsers) -> None:
    p = subparsers.add_parser("ledger", help="inspect a ledger file",
                              description="Inspect an odp SQLite ledger without modifying it.")
    sub = p.add_subparsers(dest="ledger_command", metavar="ACTION", required=True)
    show = sub.add_parser("show", help="print the budget, the remaining budget and every round")
    show.add_argument("path", help="ledger file (SQLite)")
    show.add_argument("--json", action="store_true", help="print as JSON")
    show.set_defaults(func=run_show)


def run_show(args: argparse.Namespace) -> int:
    from ..ledger import SQLiteLedger

    ledger = SQLiteLedger(args.path, readonly=True)
    try:
        state = ledger.snapshot()
        rounds = list(state.rounds)
        budget, remaining = ledger.budget, state.remaining
    finally:
        ledger.close()
    if args.json:
        print_json({
            "path": args.path,
            "budget": budget.to_json(),
            "remaining": remaining.to_json(),
            "rounds": [r.to_json() for r in rounds],
        })
        return 0
    print(f"ledger {args.path}")
    print(f"budget     ε={format_fraction(budget.epsilon)}  δ={format_fraction(budget.delta)}")
    print(f"remaining  ε={format_fraction(remaining.epsilon)}  δ={format_fraction(remaining.delta)}")
    saved = sum((r.refund for r in rounds), Fraction(0))
    print(f"rounds     {len(rounds)} (ε refunded by ODP: {format_fraction(saved)})")
    if rounds:
        print()
        print(format_table(
            ["#", "mechanism", "sup ε", "δ", "class", "charged ε", "status"],
            [[r.index, r.mechanism, format_fraction(r.sup_epsilon), format_fraction(r.delta),
              "" if r.label is None else r.label,
              "" if r.charged is None else format_fraction(r.charged),
              r.reason or r.status] for r in rounds],
        ))
    return 0
