"""``odp buckets``: privacy-bucket bounds on the tight (ε, δ) of an r-fold composition.

Example::

    odp buckets --mechanism gaussian --sigma 1 --compositions 1000 --delta 1e-5 --json

prints an interval ``[lower, upper]`` that contains the true ε(δ) of 1000 Gaussian mechanisms
with σ = 1 (upper: a rigorous bound you may spend; lower: no analysis can do better).
"""

from __future__ import annotations

import argparse

from ._common import format_table, print_json

MECHANISMS = (
    "gaussian",
    "laplace",
    "randomized-response",
    "approximate-dp",
    "discrete-laplace",
    "discrete-gaussian",
)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "buckets",
        help="privacy buckets: upper and lower bounds on r-fold (epsilon, delta)",
        description=(
            "Compose a mechanism COMPOSITIONS times and bound the tight epsilon(delta) or "
            "delta(epsilon) from both sides with privacy buckets (Meiser & Mohammadi, CCS 2018)."
        ),
    )
    p.add_argument("--mechanism", required=True, choices=MECHANISMS)
    p.add_argument("--sigma", help="noise standard deviation (gaussian, discrete-gaussian)")
    p.add_argument("--scale", help="noise scale b (laplace, discrete-laplace)")
    p.add_argument("--sensitivity", default="1", help="sensitivity (default 1)")
    p.add_argument(
        "--mechanism-epsilon",
        help="epsilon of one run (randomized-response, approximate-dp)",
    )
    p.add_argument("--mechanism-delta", default="0", help="delta of one run (approximate-dp)")
    p.add_argument("--num-values", type=int, default=2, help="outputs of randomized response")
    p.add_argument("--compositions", type=int, default=1, help="number of runs (default 1)")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--delta", help="report epsilon(delta) for this delta")
    target.add_argument("--epsilon", help="report delta(epsilon) for this epsilon")
    p.add_argument("--buckets", type=int, default=None, help="buckets in the window (default 32768)")
    p.add_argument("--factor", default=None, help="finest bucket factor f > 1 (default: automatic)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def _need(args: argparse.Namespace, name: str) -> str:
    value = getattr(args, name.replace("-", "_"))
    if value is None:
        from ..errors import InvalidParameter

        raise InvalidParameter(f"--mechanism {args.mechanism} needs --{name}")
    return value


def _mechanism(args: argparse.Namespace):
    from .. import buckets as b

    kind = args.mechanism
    if kind == "gaussian":
        return b.Gaussian(_need(args, "sigma"), args.sensitivity)
    if kind == "laplace":
        return b.Laplace(_need(args, "scale"), args.sensitivity)
    if kind == "randomized-response":
        return b.RandomizedResponse(_need(args, "mechanism-epsilon"), args.num_values)
    if kind == "approximate-dp":
        return b.ApproximateDP(_need(args, "mechanism-epsilon"), args.mechanism_delta)
    if kind == "discrete-laplace":
        return b.DiscreteLaplace(_need(args, "scale"), int(args.sensitivity))
    return b.DiscreteGaussian(_need(args, "sigma"), int(args.sensitivity))


def run(args: argparse.Namespace) -> int:
    from .. import buckets as b
    from ..errors import InvalidParameter

    if args.compositions < 1:
        raise InvalidParameter(f"--compositions must be >= 1, got {args.compositions}")
    options = {}
    if args.buckets is not None:
        options["buckets"] = args.buckets
    if args.factor is not None:
        options["factor"] = args.factor
    acc = b.PrivacyBucketsAccountant(**options)
    acc.compose(_mechanism(args), args.compositions)
    if args.delta is not None:
        query, value = "epsilon", acc.get_epsilon(args.delta)
        given = {"delta": args.delta}
    else:
        query, value = "delta", acc.get_delta(args.epsilon)
        given = {"epsilon": args.epsilon}
    report = acc.report()
    if args.json:
        print_json(
            {
                "query": query,
                **given,
                query: value.to_json(),
                "mechanism": report["mechanisms"][0],
                "compositions": args.compositions,
                "numerics": report["directions"],
                "seconds": report["seconds"],
            }
        )
        return 0
    lo, up = value.to_json()["lower_float"], value.to_json()["upper_float"]
    rows = [
        [f"{query} lower bound", f"{lo:.10g}", value.to_json()["lower"]],
        [f"{query} upper bound", f"{up:.10g}", value.to_json()["upper"]],
    ]
    print(
        f"{args.compositions} x {args.mechanism}, "
        + ", ".join(f"{k} = {v}" for k, v in given.items())
    )
    print(format_table(["bound", "value", "exact rational"], rows))
    print(f"({report['seconds']:.3f} s; the true value lies between the two bounds)")
    return 0
