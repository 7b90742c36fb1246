"""Concurrent composition of interactive mechanisms with adaptive privacy-loss parameters
(Haney et al. 2023): queryables, launches charged once, free interleaving, nested compositions."""

from .composition import (
    ChildHandle,
    ConcurrentComposition,
    ConcurrentCompositionRefused,
    SubComposition,
)
from .queryable import InteractiveMechanism, Queryable, QueryableClosed

__all__ = [
    "InteractiveMechanism", "Queryable", "QueryableClosed", "ConcurrentComposition",
    "SubComposition", "ChildHandle", "ConcurrentCompositionRefused",
]
