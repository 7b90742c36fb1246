"""Privacy filters and odometers (Rogers, Roth, Ullman, Vadhan 2016; Haney et al. 2023) and the
ODP filter (Hartmann et al. 2022, App. A).

==========================  ===================================================  ===================
class                       rule (CONT iff …)                                    source
==========================  ===================================================  ===================
BasicFilter(ε, δ=0)         Σ ε_i ≤ ε and Σ δ_i ≤ δ (exact)                      Rogers et al. 2016,
                                                                                 Thm. 3.4
WhitehouseFilter(ε,δ,δ″)    √(2 ln(1/δ″) Σε_i²) + ½Σε_i² ≤ ε and Σδ_i ≤ δ−δ″     Haney et al. 2023,
                                                                                 Thm. 3.7
ZCDPFilter(ρ, δ=0)          Σ ρ_i ≤ ρ (and Σ δ_i ≤ δ: sequential only)           Haney et al. 2023,
                                                                                 Thm. 4.10
RDPFilter(α, ε)             Σ ε_i(α) ≤ ε at the fixed order α                    Haney et al. 2023,
                                                                                 Thm. 4.6
ODPFilter()                 Alg. 6 with the sum filter, as Accountant admission  Hartmann et al.
                                                                                 2022, App. A
==========================  ===================================================  ===================

A durable, certified ledger can hold several of these at once as **lanes**
(:class:`Lane`, :mod:`odp.ledger.lanes`; routing in :mod:`odp.filters.lanes`).

Odometers: :class:`BasicOdometer`, :class:`WhitehouseOdometer`, :class:`ZCDPOdometer`,
:class:`RDPOdometer`.  See ``docs/filters.md``.
"""

from .base import Accumulator, PrivacyFilter, PrivacyOdometer
from .basic import BasicAccumulator, BasicFilter, BasicOdometer, parse_dp_cost
from .lanes import Lane
from .odp_filter import IncrementalFilter, ODPFilter, realised_sequence, sum_filter
from .renyi import (
    RDP,
    ZCDP,
    RDPAccumulator,
    RDPFilter,
    RDPOdometer,
    ZCDPAccumulator,
    ZCDPFilter,
    ZCDPOdometer,
)
from .whitehouse import WhitehouseAccumulator, WhitehouseFilter, WhitehouseOdometer

__all__ = [
    "Accumulator", "PrivacyFilter", "PrivacyOdometer",
    "BasicAccumulator", "BasicFilter", "BasicOdometer", "parse_dp_cost",
    "WhitehouseAccumulator", "WhitehouseFilter", "WhitehouseOdometer",
    "ZCDP", "RDP", "ZCDPAccumulator", "RDPAccumulator", "ZCDPFilter", "ZCDPOdometer",
    "RDPFilter", "RDPOdometer",
    "ODPFilter", "IncrementalFilter", "sum_filter", "realised_sequence", "Lane",
]
