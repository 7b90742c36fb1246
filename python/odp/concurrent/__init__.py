"""Deprecated alias of :mod:`odp.interactive` (renamed in 0.2: ``concurrent`` shadowed the
standard library's package of that name).  Importing it warns once; it will be removed in the
release after 0.2.  ``odp.concurrent.composition`` and ``odp.concurrent.queryable`` are aliases
of the modules of :mod:`odp.interactive` too."""

from __future__ import annotations

import sys
import warnings

from ..interactive import (
    ChildHandle,
    ConcurrentComposition,
    ConcurrentCompositionRefused,
    InteractiveMechanism,
    Queryable,
    QueryableClosed,
    SubComposition,
)
from ..interactive import composition, queryable

warnings.warn("odp.concurrent is deprecated: import odp.interactive instead (same classes)",
              DeprecationWarning, stacklevel=2)

sys.modules[__name__ + ".composition"] = composition
sys.modules[__name__ + ".queryable"] = queryable

__all__ = [
    "InteractiveMechanism", "Queryable", "QueryableClosed", "ConcurrentComposition",
    "SubComposition", "ChildHandle", "ConcurrentCompositionRefused",
]
