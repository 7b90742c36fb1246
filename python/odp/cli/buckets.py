"""``odp buckets``: privacy-bucket bounds on the tight (ε, δ) of a composition.

One mechanism, composed COMPOSITIONS times::

    odp buckets --mechanism gaussian --sigma 1 --compositions 1000 --delta 1e-5 --json

Several mechanisms in one call -- repeat ``--mechanism`` and give each its own parameters and
``--compositions`` (options belong to the ``--mechanism`` before them)::

    odp buckets --mechanism gaussian --sigma 1 --compositions 500 \\
                --mechanism laplace --scale 10 --compositions 500 --delta 1e-5

or read them from a JSON/TOML spec (``odp.buckets.spec``)::

    odp buckets --spec composition.json --delta 1e-5

DP-SGD (Poisson sampling rate Q, noise multiplier S, T steps; add/remove neighbours, the worse
of the two directions)::

    odp buckets --mechanism poisson-gaussian --sampling-rate 0.01 --sigma 1.1 \\
                --compositions 10000 --delta 1e-5

prints an interval ``[lower, upper]`` that contains the true ε(δ) (upper: a rigorous bound you
may spend; lower: no analysis can do better) and the time taken.  ``--target-width W`` grows the
window (4× per attempt, then extended precision) until the interval is at most W wide or a limit
is reached (docs/buckets.md: the speed/width trade-off).
"""

from __future__ import annotations

import argparse
import math
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..buckets import PLDMechanism

from ._common import (
    Subparsers,
    add_limit_options,
    format_table,
    limits_from_args,
    print_json,
    progress_from_args,
    strict_int,
)

MECHANISMS = (
    "gaussian",
    "laplace",
    "randomized-response",
    "approximate-dp",
    "discrete-laplace",
    "discrete-gaussian",
    "poisson-gaussian",
    "poisson-laplace",
)

#: per-mechanism options, in the order they may follow ``--mechanism``
GROUP_OPTIONS = ("sigma", "scale", "sensitivity", "sampling_rate", "mechanism_epsilon",
                 "mechanism_delta", "num_values", "compositions")


class _NewGroup(argparse.Action):
    """``--mechanism KIND`` starts a new group of per-mechanism options."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 value: Any, option_string: str | None = None) -> None:
        groups = list(getattr(namespace, "groups", None) or [])
        groups.append({"mechanism": value})
        namespace.groups = groups


class _GroupOption(argparse.Action):
    """A per-mechanism option: it belongs to the last ``--mechanism`` (or, before any, to the
    first one)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 value: Any, option_string: str | None = None) -> None:
        groups = list(getattr(namespace, "groups", None) or [])
        if groups:
            target = groups[-1]
        else:
            target = dict(getattr(namespace, "leading", None) or {})
        if self.dest in target:
            owner = f"--mechanism {target['mechanism']}" if "mechanism" in target else \
                "the first --mechanism"
            parser.error(f"{option_string} given twice for {owner}")
        target[self.dest] = value
        if groups:
            namespace.groups = groups
        else:
            namespace.leading = target


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "buckets",
        help="privacy buckets: upper and lower bounds on composed (epsilon, delta)",
        description=(
            "Compose one or several mechanisms and bound the tight epsilon(delta) or "
            "delta(epsilon) from both sides with privacy buckets (Meiser & Mohammadi, CCS 2018). "
            "Repeat --mechanism (each followed by its own options and --compositions) or give "
            "--spec FILE to compose several."
        ),
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(groups=None, leading=None)
    p.add_argument("--mechanism", action=_NewGroup, choices=MECHANISMS,
                   help="a mechanism; repeat for a heterogeneous composition")
    p.add_argument("--spec", metavar="FILE",
                   help="JSON or TOML composition spec (instead of --mechanism groups)")
    g = p.add_argument_group("per-mechanism options (apply to the --mechanism before them)")
    g.add_argument("--sigma", action=_GroupOption,
                   help="noise standard deviation (gaussian, discrete-gaussian)")
    g.add_argument("--scale", action=_GroupOption, help="noise scale b (laplace, discrete-laplace)")
    g.add_argument("--sensitivity", action=_GroupOption,
                   help="sensitivity (default 1; for poisson-*: the clipping norm)")
    g.add_argument("--sampling-rate", action=_GroupOption, metavar="Q",
                   help="Poisson sampling rate q in (0, 1] (poisson-gaussian, poisson-laplace: "
                        "each record is in a run's sample independently with probability q; "
                        "fixed-size shuffled batches are not Poisson sampling)")
    g.add_argument("--mechanism-epsilon", action=_GroupOption,
                   help="epsilon of one run (randomized-response, approximate-dp)")
    g.add_argument("--mechanism-delta", action=_GroupOption,
                   help="delta of one run (approximate-dp; default 0)")
    g.add_argument("--num-values", action=_GroupOption,
                   help="outputs of randomized response (default 2)")
    g.add_argument("--compositions", action=_GroupOption, help="number of runs (default 1)")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--delta", help="report epsilon(delta) for this delta")
    target.add_argument("--epsilon", help="report delta(epsilon) for this epsilon")
    p.add_argument("--buckets", type=int, default=None,
                   help="buckets in the window (default 32768; with --target-width: start at "
                        "4096 and grow by the predicted factor)")
    p.add_argument("--factor", default=None, help="finest bucket factor f > 1 (default: automatic)")
    p.add_argument("--precision", choices=("auto", "extended", "double"), default="auto",
                   help="FFT precision (default auto: double with tilted round-off bounds, "
                        "extended where they would widen the answer)")
    p.add_argument("--target-width", metavar="W", default=None,
                   help="grow the window until upper - lower <= W (or a limit is reached)")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_limit_options(p)
    p.set_defaults(func=run)


def _int_option(group: dict[str, Any], name: str, default: int) -> int:
    from ..errors import InvalidParameter

    text = group.get(name)
    if text is None:
        return default
    try:
        value = strict_int(str(text))
    except ValueError:
        raise InvalidParameter(f"--{name.replace('_', '-')} must be an integer, got {text!r}") \
            from None
    if value < 1:
        raise InvalidParameter(f"--{name.replace('_', '-')} must be >= 1, got {value}")
    return value


def _mechanism(group: dict[str, Any]) -> PLDMechanism:
    from .. import buckets as b
    from ..errors import InvalidParameter

    kind = group["mechanism"]

    def need(name: str) -> str:
        value: str | None = group.get(name.replace("-", "_"))
        if value is None:
            raise InvalidParameter(f"--mechanism {kind} needs --{name}")
        return value

    allowed = {
        "gaussian": {"sigma", "sensitivity"},
        "laplace": {"scale", "sensitivity"},
        "randomized-response": {"mechanism_epsilon", "num_values"},
        "approximate-dp": {"mechanism_epsilon", "mechanism_delta"},
        "discrete-laplace": {"scale", "sensitivity"},
        "discrete-gaussian": {"sigma", "sensitivity"},
        "poisson-gaussian": {"sampling_rate", "sigma", "sensitivity"},
        "poisson-laplace": {"sampling_rate", "scale", "sensitivity"},
    }[kind]
    extra = sorted(set(group) - allowed - {"mechanism", "compositions"})
    if extra:
        names = ", ".join("--" + e.replace("_", "-") for e in extra)
        raise InvalidParameter(f"--mechanism {kind} does not take {names}")
    sensitivity = group.get("sensitivity", "1")
    if kind == "gaussian":
        return b.Gaussian(need("sigma"), sensitivity)
    if kind == "laplace":
        return b.Laplace(need("scale"), sensitivity)
    if kind == "randomized-response":
        return b.PLDRandomizedResponse(need("mechanism-epsilon"), _int_option(group, "num_values", 2))
    if kind == "approximate-dp":
        return b.ApproximateDP(need("mechanism-epsilon"), group.get("mechanism_delta", "0"))
    if kind == "poisson-gaussian":
        return b.PoissonSubsampled(b.Gaussian(need("sigma"), sensitivity), need("sampling-rate"))
    if kind == "poisson-laplace":
        return b.PoissonSubsampled(b.Laplace(need("scale"), sensitivity), need("sampling-rate"))
    if kind == "discrete-laplace":
        return b.DiscreteLaplace(need("scale"), _int_option(group, "sensitivity", 1))
    return b.DiscreteGaussian(need("sigma"), _int_option(group, "sensitivity", 1))


def composition(args: argparse.Namespace) -> list[tuple[PLDMechanism, int]]:
    """``[(mechanism, count), ...]`` from --spec or the --mechanism groups."""
    from ..buckets.spec import load_spec
    from ..errors import InvalidParameter

    groups = list(args.groups or [])
    leading = dict(args.leading or {})
    if args.spec is not None:
        if groups or leading:
            raise InvalidParameter("give either --spec or --mechanism groups, not both")
        return load_spec(args.spec)
    if not groups:
        raise InvalidParameter("give --mechanism KIND (repeatable) or --spec FILE")
    for key, value in leading.items():  # options written before the first --mechanism
        if key in groups[0]:
            raise InvalidParameter(f"--{key.replace('_', '-')} given twice for the first "
                                   "--mechanism")
        groups[0][key] = value
    return [(_mechanism(g), _int_option(g, "compositions", 1)) for g in groups]


def run(args: argparse.Namespace) -> int:
    from .. import buckets as b
    from ..buckets.tighten import tighten
    from ..errors import InvalidParameter

    from ..budget import parse_delta, parse_epsilon

    # the query is a privacy parameter: the same range as everywhere in odp (0, or a magnitude
    # between 1e-300 and 1e300), so 1e-400 is refused, not answered with [x, inf]
    if args.delta is not None:
        parse_delta(args.delta, name="--delta")
    else:
        parse_epsilon(args.epsilon, name="--epsilon")
    items = composition(args)
    options = {"precision": args.precision}
    if args.buckets is not None:
        options["buckets"] = args.buckets
    if args.factor is not None:
        options["factor"] = args.factor
    limits, progress = limits_from_args(args), progress_from_args(args)
    query = "epsilon" if args.delta is not None else "delta"
    given = {"delta": args.delta} if args.delta is not None else {"epsilon": args.epsilon}
    t0 = time.perf_counter()
    tightened = None
    if args.target_width is not None:
        from ..budget import parse_positive

        # parsed like every odp number (ASCII digits, no underscores, a finite value in range),
        # then handed to tighten as the float it compares widths with
        width = float(parse_positive(args.target_width, name="--target-width"))
        options.setdefault("buckets", "auto")
        tightened = tighten(items, target_width=width, limits=limits, progress=progress,
                            delta=args.delta, epsilon=args.epsilon, **options)
        acc, value = tightened.accountant, tightened.interval
    else:
        acc = b.PrivacyBucketsAccountant(limits=limits, progress=progress, **options)
        for mech, count in items:
            acc.compose(mech, count)
        value = (acc.get_epsilon_interval(args.delta) if args.delta is not None
                 else acc.get_delta_interval(args.epsilon))
    wall = time.perf_counter() - t0
    if args.factor is not None:
        bounds = value.to_json()
        trivial = (bounds["lower_float"] == 0 and
                   bounds["upper_float"] == (math.inf if query == "epsilon" else 1.0))
        if trivial:  # sound but empty: say so instead of printing [0, inf] as an answer
            raise InvalidParameter(
                f"--factor {args.factor}: its grid is too coarse for these mechanisms (every "
                "privacy loss falls in one or two buckets), so the bounds are the trivial "
                f"[0, {'inf' if query == 'epsilon' else '1'}]; use a factor closer to 1 or omit "
                "--factor (automatic)")
    if query == "epsilon" and value.upper == math.inf:
        # sound but no answer: say why (the true ε is infinite, or the window cannot certify a
        # finite one at this δ) instead of printing "upper bound inf" with exit 0
        reason = acc.no_finite_epsilon_reason(args.delta)
        raise InvalidParameter(reason.replace(
            "raise delta, lower tail_mass, or use precision='extended'",
            "raise delta above that floor (in the API, a smaller tail_mass= and "
            "precision='extended' lower it)") + "; nothing was certified")
    report = acc.report()
    total = sum(count for _, count in items)
    if args.json:
        print_json(
            {
                "query": query,
                **given,
                query: value.to_json(),
                "mechanism": report["mechanisms"][0],
                "mechanisms": report["mechanisms"],
                "compositions": total,
                "buckets": acc.buckets,
                "precision": acc.precision,
                "precision_used": acc.effective_precision,
                "numerics": report["directions"],
                "seconds": wall,
                "target": None if tightened is None else tightened.to_json(),
            }
        )
        return 0
    data = value.to_json()
    rows = [
        [f"{query} lower bound", f"{data['lower_float']:.10g}", data["lower"]],
        [f"{query} upper bound", f"{data['upper_float']:.10g}", data["upper"]],
    ]
    described = " + ".join(
        f"{m['count']} x {m['mechanism']}("
        + ", ".join(f"{k}={v}" for k, v in m.items() if k not in ("mechanism", "count")) + ")"
        for m in report["mechanisms"])
    print(f"{described}, " + ", ".join(f"{k} = {v}" for k, v in given.items()))
    print(format_table(["bound", "value", "exact rational"], rows))
    used = acc.effective_precision
    precision = (f"{used} precision" if used == acc.precision
                 else f"{acc.precision} precision, {used} because round-off mattered at this {'delta' if query == 'epsilon' else 'epsilon'}")
    print(f"width {value.width:.3g} with {acc.buckets} buckets ({precision}), "
          f"{wall:.3f} s; the true value lies between the two bounds")
    if "precision_note" in report:
        print(f"note: {report['precision_note']}")
    if tightened is not None:
        steps = ", ".join(f"{a.buckets}:{a.width:.2g}" for a in tightened.attempts)
        status = "reached" if tightened.reached else f"NOT reached: {tightened.reason}"
        print(f"target width {tightened.target_width:g} {status} (buckets:width tried: {steps})")
    return 0
