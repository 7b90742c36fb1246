"""Mechanisms that declare their guarantee before they run and draw exact, secure noise."""

from .base import BOTTOM, Mechanism
from .noise import (
    GaussianMechanism,
    LaplaceMechanism,
    RandomizedResponse,
    ToyMechanism,
    value_or_bottom,
)

__all__ = [
    "BOTTOM",
    "Mechanism",
    "GaussianMechanism",
    "LaplaceMechanism",
    "RandomizedResponse",
    "ToyMechanism",
    "value_or_bottom",
]
