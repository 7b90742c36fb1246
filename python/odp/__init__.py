"""odp: output differential privacy with exact, certified accounting.

The public names are importable from the top level::

    import odp
    acc = odp.Accountant(epsilon="1", delta="1e-6")
"""

from __future__ import annotations

__version__ = "0.1.0"

from .accountant import Accountant, Reservation
from .budget import Budget
from .readable import ExactValue
from .errors import (
    BudgetExceeded,
    CertificateError,
    FloatBudgetWarning,
    InvalidBudget,
    InvalidGuarantee,
    InvalidParameter,
    LedgerCorrupted,
    LedgerError,
    LedgerUnavailable,
    OdpError,
    OutputError,
    SessionClosed,
)
from .guarantees import DP, GDP, ODP, RDP, ZCDP, SubsetDP
from .mechanisms import (
    BOTTOM,
    ExponentialMedian,
    GaussianMechanism,
    IQRMechanism,
    IterativeMechanism,
    LaplaceMechanism,
    Mechanism,
    NoisyGradientDescent,
    OutputPerturbationERM,
    PTRFunction,
    RandomizedResponse,
    SparseVectorMechanism,
    SVTSession,
    TestedLogisticRegression,
    ToyMechanism,
    iqr_then_median,
    sparse_vector_release,
)
from .composition import BasicComposition, BucketsComposition, Lemma11, OptDel, StepSpec
from .samplers import SecureRandom, SeededRandom
from .filters import (
    BasicFilter,
    BasicOdometer,
    Lane,
    ODPFilter,
    RDPFilter,
    WhitehouseFilter,
    WhitehouseOdometer,
    ZCDPFilter,
)
from .interactive import ConcurrentComposition, SubComposition
from .buckets import PrivacyBucketsAccountant
from .adapters import from_opendp  # imports OpenDP only when called
from . import dpsgd  # noqa: F401  (odp.dpsgd.Accounting etc.; imports neither torch nor Opacus)

__all__ = [
    "Lane",
    "GDP",
    "RDP",
    "ZCDP",
    "ExactValue",
    "from_opendp",
    "__version__",
    "Accountant",
    "Reservation",
    "Budget",
    "DP",
    "ODP",
    "SubsetDP",
    "BOTTOM",
    "Mechanism",
    "LaplaceMechanism",
    "GaussianMechanism",
    "RandomizedResponse",
    "ToyMechanism",
    "SparseVectorMechanism",
    "SVTSession",
    "sparse_vector_release",
    "PTRFunction",
    "IQRMechanism",
    "ExponentialMedian",
    "iqr_then_median",
    "IterativeMechanism",
    "NoisyGradientDescent",
    "OutputPerturbationERM",
    "TestedLogisticRegression",
    "StepSpec",
    "BasicComposition",
    "BucketsComposition",
    "Lemma11",
    "OptDel",
    "PrivacyBucketsAccountant",
    "SecureRandom",
    "SeededRandom",
    "BasicFilter",
    "BasicOdometer",
    "WhitehouseFilter",
    "WhitehouseOdometer",
    "ZCDPFilter",
    "RDPFilter",
    "ODPFilter",
    "ConcurrentComposition",
    "SubComposition",
    "BudgetExceeded",
    "CertificateError",
    "FloatBudgetWarning",
    "InvalidBudget",
    "InvalidGuarantee",
    "InvalidParameter",
    "LedgerError",
    "LedgerCorrupted",
    "LedgerUnavailable",
    "OdpError",
    "OutputError",
    "SessionClosed",
]
