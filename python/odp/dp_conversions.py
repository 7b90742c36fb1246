"""Not public: the former home of the (ε, δ)-DP conversions, now :mod:`odp.conversions`.

Kept only for :mod:`odp.ledger.lanes`, which another change is editing; once it imports
:mod:`odp.conversions`, delete this file."""

from .conversions import rdp_to_dp_epsilon, zcdp_to_dp_epsilon

__all__ = ["rdp_to_dp_epsilon", "zcdp_to_dp_epsilon"]
