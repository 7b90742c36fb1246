"""``odp optdel``: optimal ODP delta for early stopping (Thm. 15) next to Lemma 11 (Eq. (4)).

Example (the iterative mechanism of Alg. 3 with 1000 steps of (0.1, 1e-6)-DP that may stop
after 100, 200, ..., 1000 steps)::

    odp optdel --epsilon 0.1 --delta 1e-6 --k 1000 --stops 100,200,...,1000 \\
        --costs 3,4.5,...,16.5 --json

``--stops`` and ``--costs`` are comma lists; ``a,b,...,z`` expands to the arithmetic progression
``a, b, 2b-a, ..., z``.  ``--costs`` takes one E(P_i) per stop, or ``simple`` (E(P_i) = sum of the
first k_i epsilons: simple composition), or ``lemma11:DELTA`` (the smallest costs whose Lemma 11
delta, split equally over the stops, is at most DELTA).  Heterogeneous steps come from
``--steps-file``: one ``epsilon,delta`` pair per line (``#`` starts a comment).

``odp optdel --gap-study [--quick] [--json]`` prints the study of the gap between Lemma 11 and
Thm. 15 (odp.optdel.gap; the table of docs/optdel.md).
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..limits import Limits
    from ..optdel import OptDelBound

from ._common import (
    Subparsers,
    add_limit_options,
    format_table,
    limits_from_args,
    print_json,
    progress_from_args,
    strict_int,
)

#: bytes per expanded list entry or parsed step line (Fractions and tuples), for the estimate
BYTES_PER_ITEM = 400


def _expand(text: str, what: str, integer: bool, limits: Limits | None = None) -> list[Any]:
    from ..budget import to_fraction
    from ..errors import InvalidParameter
    from ..limits import Estimate, Limits

    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise InvalidParameter(f"--{what} is empty")
    conv = strict_int if integer else (lambda t: to_fraction(t, name=what))
    if "..." not in parts:
        try:
            return [conv(p) for p in parts]
        except ValueError:
            raise InvalidParameter(f"--{what}: not a list of numbers: {text!r}") from None
    i = parts.index("...")
    if i < 2 or i != len(parts) - 2:
        raise InvalidParameter(f"--{what}: write a progression as 'a,b,...,z', got {text!r}")
    try:
        head = [conv(p) for p in parts[:i]]
        last = conv(parts[-1])
    except ValueError:
        raise InvalidParameter(f"--{what}: not a list of numbers: {text!r}") from None
    step = head[-1] - head[-2]
    if step == 0 or (last - head[-1]) % step != 0 or (last - head[-1]) / step < 0:
        raise InvalidParameter(
            f"--{what}: {parts[-1]} is not reached from {parts[0]} in steps of {step}"
        )
    count = len(head) + int((last - head[-1]) / step)
    (limits or Limits()).check(Estimate(f"expanding --{what} ({count} entries)", 1e-6 * count,
                                        BYTES_PER_ITEM * count))
    out = list(head)
    while out[-1] != last:
        out.append(out[-1] + step)
    return out


def _read_steps(path: str, limits: Limits | None = None) -> list[tuple[str, str]]:
    import os

    from ..errors import InvalidParameter
    from ..limits import Estimate, Limits

    steps = []
    try:
        size = os.stat(path).st_size
        (limits or Limits()).check(Estimate(f"reading --steps-file ({size} bytes)",
                                            1e-6 * size, BYTES_PER_ITEM * size // 4))
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise InvalidParameter(f"cannot read --steps-file {path!r}: {exc.strerror or exc}") \
            from None
    except UnicodeDecodeError:
        raise InvalidParameter(f"--steps-file {path!r} is not a UTF-8 text file of "
                               "'epsilon,delta' lines") from None
    for lineno, line in enumerate(lines, start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = [f for f in line.replace(",", " ").split() if f]
        if len(fields) != 2:
            raise InvalidParameter(f"{path}:{lineno}: expected 'epsilon,delta', got {line!r}")
        steps.append((fields[0], fields[1]))
    if not steps:
        raise InvalidParameter(f"--steps-file {path!r} has no steps")
    return steps


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "optdel",
        help="optimal ODP delta for an iterative mechanism with early stopping (Thm. 15)",
        description=__doc__.split("\n\n")[0] + " Rigorous brackets; see docs/optdel.md.",
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--epsilon", help="per-step epsilon (homogeneous steps)")
    p.add_argument("--delta", default="0", help="per-step delta (homogeneous steps, default 0)")
    p.add_argument("--k", type=int, help="number of steps k_n (default: the last stop)")
    p.add_argument("--steps-file", help="heterogeneous steps: one 'epsilon,delta' per line")
    p.add_argument("--stops", help="stopping points, e.g. 100,200,...,1000")
    p.add_argument("--costs", help="E(P_i) per stop (comma list), 'simple' or 'lemma11:DELTA'")
    p.add_argument("--grid", help="force the lattice step h (default: automatic)")
    p.add_argument("--max-cells", type=int, default=None, help="lattice cells per pass budget")
    p.add_argument("--no-lemma11", action="store_true", help="skip the Lemma 11 (Eq. 4) bound")
    p.add_argument(
        "--gap-study",
        action="store_true",
        help="print the Lemma 11 vs Thm. 15 gap study instead (total delta 1e-6)",
    )
    p.add_argument("--quick", action="store_true", help="small grid for --gap-study")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_limit_options(p)
    p.set_defaults(func=run)


def _gap_study(args: argparse.Namespace) -> int:
    from ..optdel.cost import gap_study_estimate
    from ..optdel.gap import DEFAULT_GRID, QUICK_GRID, gap_study
    from ..progress import Reporter

    grid = QUICK_GRID if args.quick else DEFAULT_GRID
    limits_from_args(args).check(gap_study_estimate(grid))
    jobs = 1
    for axis in grid:
        jobs *= len(axis)
    with Reporter(progress_from_args(args), jobs, "gap study", unit="row") as bar:
        rows = gap_study(grid, "1e-6", progress=lambda i, n: bar.advance())
    if args.json:
        print_json({"delta_total": "1e-6", "rows": [r.to_json() for r in rows]})
        return 0
    table = []
    for r in rows:
        if r.ratio is None:
            table.append([r.epsilon, r.delta_k, r.k_n, r.n, "-", "-", "-", "-", "-", "infeasible"])
            continue
        assert r.costs is not None and r.eq4 is not None and r.thm15 is not None  # feasible row
        assert r.eq4.lower is not None  # the gap study asks Eq. (4) for its lower bound
        assert r.saving_last is not None and r.saving_uniform is not None
        table.append(
            [
                r.epsilon,
                r.delta_k,
                r.k_n,
                r.n,
                f"{float(r.costs[-1]):.4f}",
                f"{float(r.eq4.lower):.4g}",
                f"{float(r.thm15.upper):.4g}",
                f"{r.ratio:.3f}",
                f"{float(r.saving_last):.4f}",
                f"{float(r.saving_uniform):.4f}",
            ]
        )
    print(
        "Lemma 11 (Eq. 4) vs Thm. 15 (Eq. 3); costs from Lemma 11 with total delta 1e-6 split "
        "equally over the n evenly spaced stops"
    )
    print(
        format_table(
            [
                "eps_k",
                "delta_k",
                "k_n",
                "n",
                "E(P_n)",
                "Eq.4 >=",
                "OptDel <=",
                "ratio >=",
                "save last",
                "save all",
            ],
            table,
        )
    )
    return 0


def run(args: argparse.Namespace) -> int:
    from ..budget import format_fraction, parse_delta
    from ..errors import InvalidParameter
    from ..optdel import DEFAULT_MAX_CELLS, lemma11_costs, lemma11_delta, optdel
    from ..optdel.cost import estimate

    if args.gap_study:
        return _gap_study(args)
    limits, progress = limits_from_args(args), progress_from_args(args)
    if args.steps_file:
        # the file the user named is read (or refused) before anything else is asked for
        if args.epsilon is not None:
            raise InvalidParameter("give either --epsilon/--delta or --steps-file, not both")
        steps: list[tuple[Any, Any]] = _read_steps(args.steps_file, limits)
    missing = [flag for flag, value in (("--stops", args.stops), ("--costs", args.costs))
               if not value]
    if missing:
        raise InvalidParameter(f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} "
                               "required (or use --gap-study)")
    stops = _expand(args.stops, "stops", integer=True, limits=limits)
    for before, after in zip([0, *stops], stops):
        if after < 1:
            raise InvalidParameter(f"a stopping point must be an integer >= 1, got {after}")
        if after <= before:
            raise InvalidParameter(f"--stops must increase strictly, got {before} then {after}")
    if args.k is not None and args.k < 1:
        raise InvalidParameter(f"--k must be >= 1, got {args.k}")
    if args.max_cells is not None and args.max_cells < 1:
        raise InvalidParameter(f"--max-cells must be >= 1, got {args.max_cells}")
    max_cells = args.max_cells or DEFAULT_MAX_CELLS
    if args.grid is not None:  # a positive number in odp's range (1e-300 .. 1e300), exactly
        from ..budget import parse_positive

        parse_positive(args.grid, name="--grid")
    spec = args.costs.strip()
    if args.steps_file:
        if args.k is not None and args.k != len(steps):
            raise InvalidParameter(f"--k {args.k} but --steps-file has {len(steps)} steps")
        k_n = len(steps)
    else:
        if args.epsilon is None:
            raise InvalidParameter("give --epsilon (and --delta) or --steps-file")
        k_n = args.k if args.k is not None else stops[-1]
    if stops[-1] != k_n:
        raise InvalidParameter(
            f"the last stopping point ({stops[-1]}) must equal the number of steps "
            f"({k_n}): the mechanism always stops after k_n steps"
        )
    # the whole run is estimated before the steps are built (odp.optdel.cost)
    phases = ["thm15"] + ([] if args.no_lemma11 else ["lemma11"])
    if spec.startswith("lemma11:"):
        phases.insert(0, "lemma11_costs")
    fast = not args.steps_file and args.grid is None  # homogeneous fast paths
    parts = [estimate(phase, k_n, len(stops), max_cells, homogeneous=fast) for phase in phases]
    total = parts[0]
    for est in parts[1:]:
        total = total + est
    limits.check(type(total)(f"odp optdel ({' + '.join(phases)})", total.seconds,
                             total.memory, total.knobs))
    if not args.steps_file:
        steps = [(args.epsilon, args.delta)] * k_n
    guard = {"limits": limits, "progress": progress}
    if spec == "simple":
        from ..budget import parse_epsilon

        from itertools import accumulate

        prefix = [Fraction(0), *accumulate(parse_epsilon(e) for e, _ in steps)]
        costs = [prefix[k] for k in stops]
    elif spec.startswith("lemma11:"):
        costs = lemma11_costs(stops, steps, parse_delta(spec.split(":", 1)[1]),
                              max_cells=max_cells, **guard)
    else:
        costs = _expand(spec, "costs", integer=False, limits=limits)
    t0 = time.perf_counter()
    b15 = optdel(stops, steps, costs, grid=args.grid, max_cells=max_cells, **guard)
    t1 = time.perf_counter()
    b11 = None
    if not args.no_lemma11:
        b11 = lemma11_delta(stops, steps, costs, grid=args.grid, max_cells=max_cells, **guard)
    t2 = time.perf_counter()
    ratio = None
    if b11 is not None and b15.upper > 0:
        ratio = float(b11.lower / b15.upper)
    note = _uninformative(b15, b11, stops=stops, steps=steps, costs=costs, max_cells=max_cells,
                          grid_forced=args.grid is not None)
    if args.json:
        print_json(
            {
                "stops": stops,
                "k_n": len(steps),
                "costs": [format_fraction(c) for c in costs],
                "optdel_thm15": b15.to_json(),
                "lemma11_eq4": None if b11 is None else b11.to_json(),
                "lemma11_over_optdel_at_least": ratio,
                "uninformative": note,
                "seconds": {"thm15": round(t1 - t0, 4), "lemma11": round(t2 - t1, 4)},
            }
        )
        return 0
    rows = [
        [
            "OptDel (Thm. 15)",
            f"{float(b15.lower):.10g}",
            f"{float(b15.upper):.10g}",
            b15.method,
            f"{t1 - t0:.3f}",
        ]
    ]
    if b11 is not None:
        rows.append(
            [
                "Lemma 11 (Eq. 4)",
                f"{float(b11.lower):.10g}",
                f"{float(b11.upper):.10g}",
                b11.method,
                f"{t2 - t1:.3f}",
            ]
        )
    print(f"k_n = {len(steps)}, stops = {','.join(map(str, stops))}")
    print(f"costs E(P_i) = {', '.join(f'{float(c):.6g}' for c in costs)}")
    print(format_table(["delta", "lower", "upper", "method", "seconds"], rows))
    if ratio is not None:
        print(f"Lemma 11 / OptDel >= {ratio:.4g}")
    if note is not None:
        print(f"note: {note['message']}")
    elif b15.grid is not None and b15.details.get("epsilons_rounded"):
        print(f"(epsilons rounded to the grid h = {float(b15.grid):.3g}; bounds stay rigorous)")
    return 0


def _uninformative(b15: OptDelBound, b11: OptDelBound | None, *, stops: list[int],
                   steps: list[tuple[Any, Any]], costs: list[Any], max_cells: int,
                   grid_forced: bool) -> dict[str, Any] | None:
    """The "uninformative" note of :mod:`odp.optdel.advice` (``None`` if every bound says
    something); the steps are parsed again only when a bound is trivial or approximated."""
    results = {"thm15": b15, "lemma11": b11}
    if not any(b is not None and (b.upper >= 1 or not b.exact_states) for b in results.values()):
        return None
    from ..optdel.advice import uninformative
    from ..optdel.problem import EpsProblem

    return uninformative(results, EpsProblem.parse(stops, steps, costs), max_cells=max_cells,
                         grid_forced=grid_forced)
