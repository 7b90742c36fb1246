"""``odp demo``: an end-to-end session on a synthetic cohort built from bundled real data
(see odp.demo)."""

from __future__ import annotations

import argparse

from ._common import Subparsers, add_limit_options, limits_from_args, print_json, progress_from_args


def register(subparsers: Subparsers) -> None:
    from ..demo import DEFAULT_RECORDS, MAX_RECORDS, MIN_RECORDS

    p = subparsers.add_parser(
        "demo",
        help="run an end-to-end ODP analyst session (synthetic cohort modelled on scikit-learn's "
             "bundled breast-cancer data)",
        description=(
            f"An analyst session on a synthetic cohort of {DEFAULT_RECORDS} records drawn from "
            "a per-diagnosis Gaussian model of scikit-learn's bundled Wisconsin breast-cancer "
            "data (--real: the 569 real patients), with a total budget (ε=6, δ=1e-5) through "
            "one accountant backed by a SQLite ledger: a Laplace count, a sparse-vector "
            "release (SVT), IQR then median (PTR), logistic regression by early-stopped noisy "
            "gradient descent, and a model released only if it passes a DP test.  Each release "
            "is charged a posteriori (ODP); the last lines say what each mechanism was charged "
            "of its worst case, and the run is exported as a verified certificate next to the "
            "ledger.  Needs scikit-learn: pip install -e \".[demo]\" in the odp source "
            "directory."
        ),
    )
    p.add_argument("--ledger", metavar="PATH",
                   help="where to write the ledger (must not exist; default: a new temp file); "
                        "the certificate is written next to it as PATH.cert")
    p.add_argument("--seed", type=int, default=None,
                   help="reproducible INSECURE randomness (default: the secure CSPRNG)")
    p.add_argument("--records", type=int, default=DEFAULT_RECORDS,
                   help=f"size of the synthetic cohort, {MIN_RECORDS}..{MAX_RECORDS} "
                        f"(default {DEFAULT_RECORDS})")
    p.add_argument("--real", action="store_true",
                   help="use the 569 real patients instead (M_IQR and the tested model are "
                        "then withheld in essentially every run)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_limit_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..demo import format_report, run_demo

    if args.ledger is not None:
        from ._common import check_output_path

        check_output_path(args.ledger, "--ledger")
    report = run_demo(ledger=args.ledger, seed=args.seed,
                      records=None if args.real else args.records,
                      limits=limits_from_args(args), progress=progress_from_args(args))
    if args.json:
        print_json(report)
    else:
        print(format_report(report))
    return 0
