"""What odp's API accepts: the protocol of a mechanism and the unions over the vocabulary.

The values themselves are the classes of :mod:`odp.guarantees`; the names they are made of
(:data:`~odp.types.Number`, :data:`~odp.types.Label`, …) are in :mod:`odp.types`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Mapping, Protocol, Sequence, Union

from .budget import Budget
from .guarantees import DP, GDP, ODP, RDP, ZCDP
from .types import Data, Number, RandomSource, Release

__all__ = ["Guarantee", "PrivacyCost", "DeclaresGuarantee", "MechanismLike", "CostLike",
           "Chargeable", "Convertible", "RDPCurve"]

#: A guarantee a mechanism declares before it runs (Hartmann et al. 2022, Def. 1 and 2).
Guarantee = Union[DP, ODP]

#: A normalised privacy cost, as filters and :mod:`odp.interactive` hold it.
PrivacyCost = Union[DP, ODP, ZCDP, RDP]


class DeclaresGuarantee(Protocol):
    """Anything with a declared ``guarantee`` (every odp mechanism)."""

    @property
    def guarantee(self) -> Guarantee: ...


class MechanismLike(DeclaresGuarantee, Protocol):
    """What :meth:`odp.Accountant.run` runs: a declared guarantee and ``release(data, rng)``
    (:class:`odp.Mechanism` and any object of that shape)."""

    def release(self, data: Data, rng: RandomSource) -> Release: ...


#: What the public API accepts as a cost and normalises (``odp.filters`` ``parse``): a
#: :data:`PrivacyCost`, an :class:`odp.Budget`, a number or an ``(ε, δ)`` pair, a mechanism
#: declaring a guarantee, or an RDP curve ``alpha -> epsilon``.
CostLike = Union[DP, ODP, ZCDP, RDP, Budget, Number, "tuple[Number, Number]",
                 "list[Number]", DeclaresGuarantee, "Callable[[Fraction], Number]"]

#: What :meth:`odp.Accountant.charge` accepts: a DP/ODP guarantee, or a zCDP, RDP (one order or a
#: list of orders) or Gaussian-DP guarantee converted at an explicit δ.
Chargeable = Union[DP, ODP, ZCDP, RDP, GDP, "list[RDP]", "tuple[RDP, ...]"]

#: An RDP curve: RDP values of one mechanism (or one composition) at several orders, or a
#: mapping ``{alpha: epsilon_alpha}``.
RDPCurve = Union[RDP, Sequence[RDP], Mapping[Any, Number]]  # Any: a key parse_alpha reads

#: A guarantee :func:`odp.conversions.to_dp` converts: zCDP (δ = 0), RDP at one order or as
#: a curve, or GDP.
Convertible = Union[ZCDP, RDP, GDP, Sequence[RDP]]
