"""``odp certify LEDGER -o CERT``: export a ledger as a certificate (text + CERT.json)."""

from __future__ import annotations

import argparse

from ._common import check_output_path, print_json


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "certify",
        help="export a SQLite ledger as a certificate checkable against the Lean rules",
        description=(
            "Write CERT (the odpcheck ledger text, natural numbers in units of 1/D) and "
            "CERT.json (run id, mechanisms, declared classes and costs, realised classes, and "
            "the Lean declarations each row relies on with the SHA-256 of their files)."
        ),
    )
    p.add_argument("ledger", help="SQLite ledger file (read-only)")
    p.add_argument("-o", "--output", required=True, help="certificate path (CERT and CERT.json)")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..certs import build_certificate
    from ..ledger import SQLiteLedger

    check_output_path(args.output, "-o")  # before reading: nothing half-written
    ledger = SQLiteLedger(args.ledger, readonly=True)
    try:
        state = ledger.snapshot()
        cert = build_certificate(state.budget, list(state.rounds), ledger.ledger_id or "run")
    finally:
        ledger.close()
    text_path, side_path = cert.write(args.output)
    summary = {"certificate": str(text_path), "sidecar": str(side_path),
               "rounds": len(cert.sidecar["rounds"]), "D": cert.sidecar["D"],
               "remaining": cert.remaining.to_json()}
    if args.json:
        print_json(summary)
    else:
        print(f"wrote {text_path} and {side_path}: {summary['rounds']} rounds, remaining "
              f"{cert.remaining}")
    return 0
