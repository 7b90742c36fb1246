"""``odp figure NAME -o FILE.png``: regenerate a figure of the papers (see odp.figures)."""

from __future__ import annotations

import argparse

from ._common import print_json


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "figure",
        help="regenerate a figure (1, 2, optdel, ...) as a PNG",
        description="Regenerate a figure as a PNG. Use 'odp figure list' to see the names.",
    )
    p.add_argument("name", help="figure name, or 'list'")
    p.add_argument("-o", "--output", help="output PNG path (default: fig<name>.png)")
    p.add_argument("--json", action="store_true", help="also print the plotted data as JSON")
    p.add_argument("--seed", type=int, default=None, help="seed for simulated parts (insecure RNG)")
    p.add_argument("--quick", action="store_true", help="fewer simulation runs (for tests)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..errors import OdpError
    from ..figures import registry

    figures = registry()
    if args.name == "list":
        for name, fig in figures.items():
            print(f"{name}\t{fig.description}")
        return 0
    if args.name not in figures:
        raise OdpError(f"unknown figure {args.name!r}; known: {', '.join(figures) or 'none'}")
    output = args.output or f"fig{args.name}.png"
    data = figures[args.name].render(output, {"seed": args.seed, "quick": args.quick})
    if args.json:
        print_json({"figure": args.name, "output": output, "data": data})
    else:
        print(f"wrote {output}")
    return 0
