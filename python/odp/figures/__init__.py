"""Figures reproducible from the command line (``odp figure NAME -o FILE.png``).

Each module ``odp.figures.<module>`` defines ``FIGURES``: a dict mapping a figure name (e.g.
``"1"``, ``"2"``, ``"optdel"``) to a :class:`Figure`.  Modules are discovered automatically.
Rendering needs matplotlib (the ``plots`` extra: ``pip install -e ".[plots]"`` in the odp
source directory).  Each figure states its estimated time (``seconds``, full and ``--quick``,
measured on a 2-core machine) so the command line can refuse it above ``--max-seconds`` and
check the output path before any work; ``render`` reports progress to ``options["progress"]``
(:mod:`odp.progress`).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Figure:
    name: str
    description: str
    #: ``render(output_path, options) -> dict`` writes a PNG and returns the plotted data
    #: (JSON-able) so ``--json`` can print it.
    render: Callable[[str, dict[str, Any]], dict[str, Any]]
    #: estimated seconds (full, quick) and peak memory in bytes
    seconds: tuple[float, float] = (60.0, 10.0)
    memory: int = 300 * 2**20

    def estimate(self, quick: bool):
        from ..limits import Estimate

        return Estimate(f"figure {self.name}{' (quick)' if quick else ''}",
                        self.seconds[1 if quick else 0], self.memory,
                        knobs="" if quick else f"--quick takes about {self.seconds[1]:.0f} s")


def registry() -> dict[str, Figure]:
    figures: dict[str, Figure] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        figures.update(getattr(module, "FIGURES", {}))
    return figures


def require_matplotlib() -> Any:  # Any: matplotlib.pyplot (untyped)
    """Import matplotlib with a non-interactive backend, or fail with a clear message."""
    from ..extras import require

    matplotlib = require("matplotlib", "figures (odp figure)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
