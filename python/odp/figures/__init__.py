"""Figures reproducible from the command line (``odp figure NAME -o FILE.png``).

Each module ``odp.figures.<module>`` defines ``FIGURES``: a dict mapping a figure name (e.g.
``"1"``, ``"2"``, ``"optdel"``) to a :class:`Figure`.  Modules are discovered automatically.
Rendering needs matplotlib (``pip install "odp[plots]"``).
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


def registry() -> dict[str, Figure]:
    figures: dict[str, Figure] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        figures.update(getattr(module, "FIGURES", {}))
    return figures


def require_matplotlib():
    """Import matplotlib with a non-interactive backend, or fail with a clear message."""
    try:
        import matplotlib
    except ImportError as exc:  # pragma: no cover - depends on the environment
        from ..errors import OdpError

        raise OdpError('figures need matplotlib: pip install "odp[plots]"') from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
