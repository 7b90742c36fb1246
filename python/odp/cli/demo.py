"""``odp demo``: an end-to-end session on bundled real data (see odp.demo)."""

from __future__ import annotations

import argparse

from ._common import print_json


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "demo",
        help="run an end-to-end ODP analyst session on scikit-learn's bundled breast-cancer data",
        description=(
            "An analyst session with a total budget (ε=6, δ=1e-5) through one accountant backed "
            "by a SQLite ledger: a sparse-vector release (SVT), IQR then median (PTR), "
            "logistic regression by early-stopped noisy gradient descent, and a model released "
            "only if it passes a DP test.  Each release is charged a posteriori (ODP); the final "
            "table compares it with plain DP accounting, and the run is exported as a verified "
            "certificate next to the ledger.  Needs scikit-learn (pip install 'odp[demo]')."
        ),
    )
    p.add_argument("--ledger", metavar="PATH",
                   help="where to write the ledger (must not exist; default: a new temp file); "
                        "the certificate is written next to it as PATH.cert")
    p.add_argument("--seed", type=int, default=None,
                   help="reproducible INSECURE randomness (default: the secure CSPRNG)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..demo import format_report, run_demo

    report = run_demo(ledger=args.ledger, seed=args.seed)
    if args.json:
        print_json(report)
    else:
        print(format_report(report))
    return 0
