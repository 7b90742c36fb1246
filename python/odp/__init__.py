"""odp: output differential privacy with exact, certified accounting.

The public names are importable from the top level::

    import odp
    acc = odp.Accountant(epsilon="1", delta="1e-6")
"""

from __future__ import annotations

__version__ = "0.1.0"

from .budget import Budget
from .errors import (
    BudgetExceeded,
    CertificateError,
    FloatBudgetWarning,
    InvalidBudget,
    InvalidGuarantee,
    InvalidParameter,
    LedgerError,
    OdpError,
)

__all__ = [
    "__version__",
    "Budget",
    "BudgetExceeded",
    "CertificateError",
    "FloatBudgetWarning",
    "InvalidBudget",
    "InvalidGuarantee",
    "InvalidParameter",
    "LedgerError",
    "OdpError",
]
