"""Mechanisms that declare their guarantee before they run and draw exact, secure noise."""

from .base import BOTTOM, Mechanism
from .noise import (
    GaussianMechanism,
    LaplaceMechanism,
    RandomizedResponse,
    ToyMechanism,
    value_or_bottom,
)

# Hartmann et al. 2022, Secs. 4-6: SVT, PTR, iterative mechanisms with early stopping,
# test-and-release
from .dpsgd import DPSGD, LogisticRegressionModel, MLPModel
from .erm import OutputPerturbationERM, TestedLogisticRegression
from .iterative import IterativeMechanism, NoisyGradientDescent
from .ptr import ExponentialMedian, IQRMechanism, PTRFunction, iqr_then_median
from .svt import SparseVectorMechanism, SVTSession, sparse_vector_release

__all__ = [
    "BOTTOM",
    "Mechanism",
    "GaussianMechanism",
    "LaplaceMechanism",
    "RandomizedResponse",
    "ToyMechanism",
    "value_or_bottom",
    "SparseVectorMechanism",
    "SVTSession",
    "sparse_vector_release",
    "PTRFunction",
    "IQRMechanism",
    "ExponentialMedian",
    "iqr_then_median",
    "IterativeMechanism",
    "NoisyGradientDescent",
    "DPSGD",
    "LogisticRegressionModel",
    "MLPModel",
    "OutputPerturbationERM",
    "TestedLogisticRegression",
]
