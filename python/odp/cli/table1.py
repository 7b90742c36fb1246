"""``odp table1``: Table 1 of Hartmann et al. 2022 (App. A) recomputed from Kairouz, Oh and
Viswanath's optimal composition, Thm. 3.3 (odp.kov)."""

from __future__ import annotations

import argparse

from ._common import (
    Subparsers,
    add_limit_options,
    format_table,
    limits_from_args,
    print_json,
    progress_from_args,
)


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "table1",
        help="recompute Table 1: compositions needed before KOV beats simple composition",
        description=(
            "For epsilon0-DP mechanisms and each delta, the smallest number I of compositions "
            "for which the optimal homogeneous composition theorem (Kairouz-Oh-Viswanath, "
            "Thm. 3.3) gives a smaller epsilon than simple composition at a delta not above the "
            "target. Printed next to the paper's row, with the convention that explains the "
            "difference, and cross-checked against the exact privacy-loss distribution."
        ),
    )
    p.add_argument("--epsilon", default="0.1", help="per-mechanism epsilon0 (default 0.1)")
    p.add_argument(
        "--deltas",
        default=None,
        help="comma-separated target deltas (default: 1e-5,...,1e-12 as in the paper)",
    )
    p.add_argument("--no-check", action="store_true", help="skip the PLD cross-check")
    p.add_argument("--k-max", type=int, default=10_000,
                   help="largest number of compositions searched (default 10000)")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_limit_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..kov import TABLE1_DELTAS, TABLE1_NOTE, table1

    deltas = (TABLE1_DELTAS if args.deltas is None
              else [d.strip() for d in args.deltas.split(",") if d.strip()])
    if not deltas:  # an empty list is not "the paper's deltas": say so
        from ..errors import InvalidParameter

        raise InvalidParameter(f"--deltas is empty (got {args.deltas!r}); omit it for the "
                               "paper's 1e-5,...,1e-12")
    rows = table1(args.epsilon, deltas, cross_check=not args.no_check, k_max=args.k_max,
                  limits=limits_from_args(args), progress=progress_from_args(args))
    checks_ok = all(all(v for key, v in r.pld_check.items() if key.endswith("_ok")) for r in rows)
    if args.json:
        print_json(
            {
                "epsilon0": args.epsilon,
                "rows": [r.to_json() for r in rows],
                "computed_row": [r.I for r in rows],
                "paper_row": [r.I_paper for r in rows],
                "paper_convention_row": [r.I_paper_convention for r in rows],
                "pld_cross_check_ok": checks_ok if not args.no_check else None,
                "note": TABLE1_NOTE,
            }
        )
        return 0 if checks_ok else 1
    headers = [
        "delta",
        "I (KOV, ours)",
        "I (paper)",
        "I (k = I-1 convention)",
        "delta_1(I)",
        "delta_1(I-1)",
        "PLD check",
    ]
    table_rows = []
    for r in rows:
        ok = (
            "-"
            if not r.pld_check
            else (
                "ok"
                if all(v for key, v in r.pld_check.items() if key.endswith("_ok"))
                else "FAILED"
            )
        )
        table_rows.append(
            [
                f"{float(r.delta):.0e}",
                r.I,
                "-" if r.I_paper is None else r.I_paper,
                r.I_paper_convention,
                f"{float(r.delta_at_I[1]):.4g}",
                f"{float(r.delta_at_I_minus_1[0]):.4g}",
                ok,
            ]
        )
    print(f"Table 1 (epsilon0 = {args.epsilon}):")
    print(format_table(headers, table_rows))
    print()
    print(TABLE1_NOTE)
    return 0 if checks_ok else 1
