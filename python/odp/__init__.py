"""odp: output differential privacy with exact, certified accounting.

The names a newcomer needs first are at the top level::

    import odp
    acc = odp.Accountant(epsilon="1", delta="1e-6")
    count = odp.LaplaceMechanism(len, epsilon="0.3", sensitivity=1)
    print(acc.run(count, [23, 41, 37]))      # a DP count, charged ε = 0.3

Everything else is reached through its subpackage, each loaded by ``import odp``:

* :mod:`odp.mechanisms` — every mechanism (SVT, PTR, iterative, ERM, DP-SGD, …);
* :mod:`odp.composition` — δ rules for early-stopped iterations (Lemma 11, OptDel) and the
  composition theorems they use;
* :mod:`odp.optdel` — the optimal δ for early stopping (Hartmann et al. 2022, Thm. 15);
* :mod:`odp.filters` — privacy filters and odometers; :mod:`odp.interactive` — concurrent
  composition of interactive mechanisms;
* :mod:`odp.buckets` — privacy buckets; :mod:`odp.conversions` — zCDP, RDP and GDP to (ε, δ);
* :mod:`odp.dpsgd` — accounting of a DP-SGD training loop; :mod:`odp.ledger`,
  :mod:`odp.certs` — the durable ledger and its certificates; :mod:`odp.errors` — every error.
"""

__version__ = "0.1.0"

# The accountant, its budget and the neighbouring relation its rounds hold for
from .accountant import Accountant, Reservation
from .budget import Budget
from .ledger import Lane
from .neighbours import Neighbours

# Guarantees (values)
from .guarantees import DP, GDP, ODP, RDP, ZCDP, SubsetDP

# The mechanisms a newcomer uses first, and where their noise comes from
from .mechanisms import (
    BOTTOM,
    GaussianMechanism,
    LaplaceMechanism,
    Mechanism,
    RandomizedResponse,
    ToyMechanism,
)
from .adapters import from_opendp  # imports OpenDP only when called
from .samplers import SecureRandom, SeededRandom

# Errors (the rest are in odp.errors)
from .errors import (
    BudgetExceeded,
    CertificateError,
    InvalidBudget,
    InvalidGuarantee,
    InvalidParameter,
    LedgerCorrupted,
    LedgerError,
    OdpError,
)

# The subpackages (none imports torch, Opacus or OpenDP)
from . import (  # noqa: F401
    buckets,
    certs,
    composition,
    conversions,
    dpsgd,
    errors,
    filters,
    interactive,
    ledger,
    mechanisms,
    optdel,
)

__all__ = [
    # the accountant, its budget and its neighbouring relation
    "Accountant",
    "Reservation",
    "Budget",
    "Lane",
    "Neighbours",
    # guarantees
    "DP",
    "ODP",
    "SubsetDP",
    "ZCDP",
    "RDP",
    "GDP",
    # mechanisms and randomness
    "Mechanism",
    "BOTTOM",
    "LaplaceMechanism",
    "GaussianMechanism",
    "RandomizedResponse",
    "ToyMechanism",
    "from_opendp",
    "SecureRandom",
    "SeededRandom",
    # errors
    "OdpError",
    "InvalidParameter",
    "InvalidBudget",
    "InvalidGuarantee",
    "BudgetExceeded",
    "LedgerError",
    "LedgerCorrupted",
    "CertificateError",
]
