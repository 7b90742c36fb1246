"""Which lane a round goes to, and what it costs there (:mod:`odp.ledger.lanes` holds the lanes
themselves).

A round names its lane (``lane="…"``), or goes to the first lane of the ledger whose notion its
guarantee fits, trying the guarantee's natural notions in order:

=====================================  ==============================================
guarantee                              lanes tried, in order (first the ledger has)
=====================================  ==============================================
``ZCDP(ρ)``                            zCDP (ρ), Rényi (αρ at each order)
an RDP curve (list of ``RDP``,         Rényi (its value at each of the lane's orders)
``{α: ε}`` or ``alpha -> ε``)
``DP(ε)`` / one-class ``ODP``, δ = 0   ODP, advanced (ε, 0), zCDP (ε²/2), Rényi
                                       (min(ε, αε²/2))
``DP(ε, δ)``, δ > 0                    ODP, advanced (ε, δ)
``ODP`` with several classes           ODP (refunds), advanced (its sup)
=====================================  ==============================================

A mechanism offers its natural guarantees through ``lane_guarantees()`` (its ``guarantee``
otherwise): :class:`odp.GaussianMechanism` offers its exact ρ first (the discrete Gaussian's
zCDP, Canonne–Kamath–Steinke 2020, Thm. 4), then its (ε, δ); an OpenDP zCDP measurement its ρ.
Conversions: ρ = ε²/2 (Bun & Steinke 2016, Prop. 1.4), αρ (their Def. 1.1), min(ε, αε²/2)
(:func:`odp.conversions.pure_dp_to_rdp`) — all exact.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Iterable, Mapping, Sequence

from .. import conversions as cv
from ..budget import parse_epsilon
from ..errors import InvalidGuarantee, InvalidParameter, budget_error_as
from ..guarantees import DP, GDP, ODP, RDP, ZCDP
from ..ledger.lanes import Lane, LaneCharge

__all__ = ["Lane", "LaneCharge", "natural_guarantees", "lane_cost", "route"]


def natural_guarantees(what: Any) -> list[Any]:
    """The guarantees a round may be charged by, best first: a mechanism's
    ``lane_guarantees()`` (or its ``guarantee``), or the guarantee itself."""
    offer = getattr(what, "lane_guarantees", None)
    if callable(offer):
        return list(offer())
    guarantee = getattr(what, "guarantee", None)
    if guarantee is not None and hasattr(what, "release"):
        return [guarantee]
    return [what]


def _is_curve(g: Any) -> bool:
    return (isinstance(g, RDP) or isinstance(g, Mapping) or callable(g)
            or (isinstance(g, (list, tuple)) and bool(g) and all(isinstance(x, RDP) for x in g)))


def _notions(g: Any) -> tuple[str, ...]:
    """The lane notions ``g`` can be charged in, best first (module docstring)."""
    if isinstance(g, ZCDP):
        return () if g.approximate else ("zcdp", "renyi")
    if isinstance(g, (DP, ODP)):
        if isinstance(g, ODP) and len(g.costs) > 1:
            return ("odp", "advanced")
        if g.delta == 0:
            return ("odp", "advanced", "zcdp", "renyi")
        return ("odp", "advanced")
    if isinstance(g, GDP):
        return ()
    if _is_curve(g):
        return ("renyi",)
    return ()


def _curve_at(g: Any, alpha: Fraction) -> Fraction:
    """The value at ``alpha`` of an RDP curve (a list of RDP, a mapping or a callable)."""
    with budget_error_as(InvalidParameter):
        if isinstance(g, RDP):
            g = [g]
        if isinstance(g, (list, tuple)):
            for x in g:
                if x.alpha == alpha:
                    return Fraction(x.epsilon)
            raise InvalidParameter(f"the RDP curve has no value at the lane's order {alpha}; "
                                   "give it at every order of the lane")
        if isinstance(g, Mapping):
            for a, e in g.items():
                if Fraction(a) == alpha:
                    return parse_epsilon(e, name=f"the RDP curve at α={alpha}")
            raise InvalidParameter(f"the RDP curve has no value at the lane's order {alpha}; "
                                   "give it at every order of the lane")
        return parse_epsilon(g(alpha), name=f"the RDP curve at α={alpha}")


def lane_cost(lane: Lane, g: Any) -> tuple[Fraction, ...]:
    """The cost of guarantee ``g`` in ``lane``'s coordinates (exact), or
    :class:`InvalidParameter` if the lane cannot take it."""
    notion = lane.notion
    if notion not in _notions(g):
        raise InvalidParameter(f"lane {lane.name!r} ({notion}) cannot take {g!r}")
    if notion == "zcdp":
        rho = g.rho if isinstance(g, ZCDP) else cv.pure_dp_to_zcdp(g.sup_epsilon)
        return (rho,)
    if notion == "renyi":
        if isinstance(g, ZCDP):
            return tuple(cv.zcdp_to_rdp(g.rho, a) for a in lane.orders)
        if isinstance(g, (DP, ODP)):
            return tuple(cv.pure_dp_to_rdp(g.sup_epsilon, a) for a in lane.orders)
        return tuple(_curve_at(g, a) for a in lane.orders)
    if notion == "advanced":
        return (g.sup_epsilon, g.delta)
    raise InvalidParameter(f"lane {lane.name!r} is the ODP lane: it takes ODP rounds")


def route(lanes: Sequence[Lane], what: Any, name: str | None = None
          ) -> tuple[Lane, Any]:
    """``(lane, guarantee)``: the lane a round goes to and the guarantee it is charged by
    (module docstring).  ``name`` picks the lane; :class:`InvalidParameter` if no lane fits."""
    offered = natural_guarantees(what)
    if name is not None:
        lane = next((x for x in lanes if x.name == name), None)
        if lane is None:
            raise InvalidParameter(f"this ledger has no lane {name!r} (its lanes: "
                                   f"{', '.join(x.name for x in lanes)}); nothing was charged")
        for g in offered:
            if lane.notion in _notions(g):
                return lane, g
        raise InvalidParameter(f"lane {name!r} ({lane.notion}) cannot take {_names(offered)}; "
                               "nothing was charged")
    for g in offered:
        for notion in _notions(g):
            lane = next((x for x in lanes if x.notion == notion), None)
            if lane is not None:
                return lane, g
    hint = ""
    if any(isinstance(g, GDP) for g in offered):
        hint = (" (there is no Gaussian-DP lane: odp's discrete Gaussian is not μ-GDP, "
                "docs/filters.md; convert with delta= into the ODP lane)")
    raise InvalidParameter(f"no lane of this ledger ({', '.join(x.name for x in lanes)}) takes "
                           f"{_names(offered)}{hint}; nothing was charged")


def _names(gs: Iterable[Any]) -> str:
    return " or ".join(repr(g) if not callable(g) or isinstance(g, (DP, ODP)) else
                       "an RDP curve" for g in gs)


#: A callback a stepwise mechanism (DP-SGD) calls before running ``count`` more steps.
Pay = Callable[[int], None]


def charge_of(lane: Lane, g: Any) -> LaneCharge:
    """The ledger record of charging ``g`` to ``lane``."""
    try:
        return LaneCharge.of(lane, lane_cost(lane, g))
    except InvalidGuarantee as exc:
        raise InvalidParameter(str(exc)) from None
