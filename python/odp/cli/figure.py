"""``odp figure NAME -o FILE.png``: regenerate a figure of the papers (see odp.figures)."""

from __future__ import annotations

import argparse

from ._common import (
    Subparsers,
    add_limit_options,
    check_output_path,
    limits_from_args,
    print_json,
    progress_from_args,
)


def register(subparsers: Subparsers) -> None:
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
    add_limit_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..errors import InvalidParameter
    from ..figures import registry

    figures = registry()
    if args.name == "list":
        for name, fig in figures.items():
            print(f"{name}\t{fig.description}")
        return 0
    if args.name not in figures:
        raise InvalidParameter(f"unknown figure {args.name!r}; known: "
                               f"{', '.join(figures) or 'none'} (or 'list')")
    figure = figures[args.name]
    output = f"fig{args.name}.png" if args.output is None else args.output  # "" is refused
    check_output_path(output, "-o")  # before any work: a bad path fails in a second, not 40 s
    if not output.lower().endswith(".png"):  # matplotlib would pick (or refuse) a format
        raise InvalidParameter(f"-o {output}: figures are written as PNG; give a path ending "
                               "in .png")
    from ..figures import require_matplotlib

    require_matplotlib()  # a missing extra is reported before the work too
    limits_from_args(args).check(figure.estimate(args.quick))
    data = figure.render(output, {"seed": args.seed, "quick": args.quick,
                                  "progress": progress_from_args(args)})
    if args.json:
        print_json({"figure": args.name, "output": output, "data": data})
    else:
        print(f"wrote {output}")
    return 0
