"""Composition lanes: a ledger's budget (ε_t, δ_t) divided, when the ledger is created, into
lanes, each a valid fully adaptive privacy filter with its own share (ε_j, δ_j), Σε_j = ε_t and
Σδ_j = δ_t exactly.  The session is the concurrent composition of its lanes, hence
(Σε_j, Σδ_j) = (ε_t, δ_t)-DP (Haney, Shoemate, Tian, Vadhan, Vyrros, Xu, Zhang 2023, Thm. 1.8
— Lyu 2022; Vadhan & Zhang 2023 — with basic composition; the argument is in docs/filters.md).

==========  ===================================  ==========================================
notion      the lane continues iff                why the lane is (ε_j, δ_j)-DP
==========  ===================================  ==========================================
``odp``     Alg. 1's sum rule on the realised     Hartmann et al. 2022, Theorem 7 (Alg. 1 is an
            costs (today's accountant)            (ε_j, δ_j)-DP interactive mechanism)
``zcdp``    Σ ρ_i ≤ ρ_j                           Haney et al. 2023, Thm. 4.10 (the lane is
                                                  ρ_j-zCDP), converted once at δ_j
                                                  (:func:`odp.conversions.zcdp_to_dp_epsilon`)
``renyi``   some order α_k has Σ ε_i(α_k) ≤ b_k   Haney et al. 2023, Thm. 4.6 (1.22) at each
                                                  order, a union bound over the m orders (δ_j/m
                                                  each; docs/filters.md), and the conversion of
                                                  Canonne–Kamath–Steinke 2020, Prop. 12
``advanced``Σ ε_i² ≤ S and Σ δ_i ≤ δ_j − δ″        Whitehouse–Ramdas–Rogers–Wu 2023 as Haney et
                                                  al. 2023, Thm. 3.7 / Cor. 3.5
==========  ===================================  ==========================================

Each notion lane holds its budget in its own coordinates, exact ``Fraction``s sized when the
lane is made so that they convert to at most ε_j at δ_j (rigorous upper bounds, rounded so the
lane never claims more): ``(ρ_j,)``; ``(b_1, …, b_m)`` at the orders; ``(S, δ_j − δ″)`` with
``S`` a rational lower bound on the largest Σε_i² the Whitehouse et al. rule admits.  A round in
a notion lane is a :class:`LaneCharge`: its cost vector in the lane's coordinates (ρ_i; ε_i(α_k)
at every order; (ε_i², δ_i)).  The sums only grow, so "the final sums fit" and "every admission
fitted" are the same statement — what certificates and the Lean ledger rules check.

No Gaussian-DP lane: the discrete Gaussian odp samples is **not** μ-GDP for μ = Δ/σ (its
δ(ε) exceeds the continuous Gaussian's, e.g. σ = 10, ε = 0: 0.0398942 > 0.0398776; docs and
``tests/test_lanes.py``), so the fully adaptive GDP filter of Smith & Thakurta 2022 does not
apply to it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterable, Sequence

from ..budget import Budget, display_fraction, display_named, parse_alpha, parse_delta, parse_epsilon
from ..errors import InvalidGuarantee, InvalidParameter, LedgerError, budget_error_as
from ..guarantees import GuaranteeRecord
from ..types import Number

__all__ = ["Lane", "LaneCharge", "LaneBook", "LaneStatus", "NOTIONS", "lanes_json",
           "lanes_from_json", "check_lanes", "check_same_lanes", "whole_budget_lane",
           "session_totals", "is_lane_charge"]

#: The lane notions, in the order certificates number them (``Odp.LedgerCore`` lane kinds).
NOTIONS = ("odp", "zcdp", "renyi", "advanced")
#: Notion budgets are sized on this grid (rounded down: a lane never holds more than converts).
GRID = 10**12
#: The most orders a Rényi lane may list (each costs a share δ_j/m of its δ).
MAX_ORDERS = 64
#: Lane names: short identifiers (they appear in ledgers, certificates and the CLI).
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")


def _eps(value: Any, name: str) -> Fraction:
    with budget_error_as(InvalidParameter):
        return parse_epsilon(value, name=name)


def _dlt(value: Any, name: str) -> Fraction:
    with budget_error_as(InvalidParameter):
        return parse_delta(value, name=name)


def _check_name(name: Any) -> str:
    if (not isinstance(name, str) or not name or len(name) > 32
            or not set(name) <= _NAME_CHARS):
        raise InvalidParameter(f"a lane name is 1 to 32 characters a-z, 0-9, '_' or '-', got "
                               f"{name!r}")
    return name


def _text(x: Fraction) -> str:
    return str(x)


def _exact(value: Any, what: str) -> Fraction:
    """An exact number recorded as canonical text (``str(Fraction)``)."""
    if not isinstance(value, str):
        raise LedgerError(f"the lanes record {what} as {value!r}, not exact text")
    try:
        x = Fraction(value)
    except (ValueError, ZeroDivisionError):
        raise LedgerError(f"the lanes record {what} as {value!r}, not a number") from None
    if str(x) != value or x < 0:
        raise LedgerError(f"the lanes record {what} as {value!r}, not a canonical number >= 0")
    return x


@dataclass(frozen=True)
class Lane:
    """One lane of a ledger: its ``name``, ``notion`` (:data:`NOTIONS`), its share
    ``(epsilon, delta)`` of the ledger's budget and — for a notion lane — its ``budget`` in its
    own coordinates (sized by the constructors below, never by hand), the Rényi ``orders`` and
    the advanced-composition lane's ``tail_delta`` δ″.

    Make lanes with :meth:`odp` / :meth:`zcdp` / :meth:`renyi` / :meth:`advanced` and pass them
    to :class:`odp.Accountant` (``lanes=[…]``); their shares must add up to the budget exactly.
    """

    name: str
    notion: str
    epsilon: Fraction
    delta: Fraction
    budget: tuple[Fraction, ...] = ()
    orders: tuple[Fraction, ...] = ()
    tail_delta: Fraction | None = None

    # ------------------------------------------------------------------ constructors
    @classmethod
    def odp(cls, epsilon: Number, delta: Number = 0, *, name: str = "odp") -> "Lane":
        """The ODP lane: Alg. 1 (Hartmann et al. 2022) with its sum rule on the realised costs — SVT, PTR,
        early stopping and every refund, exactly as an accountant without lanes."""
        return cls(_check_name(name), "odp", _eps(epsilon, "epsilon"), _dlt(delta, "delta"))

    @classmethod
    def zcdp(cls, epsilon: Number, delta: Number, *, name: str = "zcdp") -> "Lane":
        """A zCDP lane: Σρ_i ≤ ρ_j with ρ_j the largest multiple of 1e-12 whose conversion at
        δ_j (:func:`odp.conversions.zcdp_to_dp_epsilon`) is at most ε_j."""
        from ..filters.renyi import ZCDPFilter

        e, d = _eps(epsilon, "epsilon"), _dlt(delta, "delta")
        if e == 0 or d == 0:
            raise InvalidParameter("a zCDP lane needs epsilon > 0 and delta > 0: ρ-zCDP is "
                                   "(ε, δ)-DP only for δ > 0")
        rho = ZCDPFilter.for_dp(e, d).budget.rho
        if rho == 0:
            raise InvalidParameter(f"a zCDP lane of epsilon={e} at delta={d} holds no ρ > 0 on "
                                   "the 1e-12 grid; give it more")
        return cls(_check_name(name), "zcdp", e, d, (rho,))

    @classmethod
    def renyi(cls, epsilon: Number, delta: Number, *, orders: Iterable[Number],
              name: str = "renyi") -> "Lane":
        """A Rényi lane at a fixed, finite list of orders α_1 < … < α_m: it continues while
        *some* order has Σε_i(α_k) ≤ b_k, with b_k the largest multiple of 1e-12 whose
        conversion at δ_j/m (:func:`odp.conversions.rdp_to_dp_epsilon`, Canonne–Kamath–Steinke
        2020, Prop. 12) is at most ε_j — a union bound over the orders (docs/filters.md).  One
        order costs no split."""
        from ..filters.renyi import RDPFilter

        e, d = _eps(epsilon, "epsilon"), _dlt(delta, "delta")
        if e == 0 or d == 0:
            raise InvalidParameter("a Rényi lane needs epsilon > 0 and delta > 0")
        if isinstance(orders, (str, bytes)):
            raise InvalidParameter("orders must be a list of Rényi orders > 1")
        with budget_error_as(InvalidParameter):
            alphas = tuple(sorted({parse_alpha(a, name="a Rényi order") for a in orders}))
        if not alphas or len(alphas) > MAX_ORDERS:
            raise InvalidParameter(f"a Rényi lane needs 1 to {MAX_ORDERS} orders, got "
                                   f"{len(alphas)}")
        share = d / len(alphas)
        budgets = []
        for a in alphas:
            try:
                budgets.append(RDPFilter.for_dp(a, e, share).budget.epsilon)
            except InvalidParameter:
                raise InvalidParameter(
                    f"order {a} holds no Rényi budget for epsilon={e} at delta={d}/"
                    f"{len(alphas)}: its conversion offset alone exceeds epsilon; drop it or "
                    "raise epsilon") from None
        return cls(_check_name(name), "renyi", e, d, tuple(budgets), alphas)

    @classmethod
    def advanced(cls, epsilon: Number, delta: Number = 0, *, tail_delta: Number | None = None,
                 name: str = "advanced") -> "Lane":
        """An advanced-composition lane: the Whitehouse et al. filter
        √(2 ln(1/δ″) Σε_i²) + ½Σε_i² ≤ ε_j and Σδ_i ≤ δ_j − δ″ (:class:`odp.filters.
        WhitehouseFilter`), for many small DP rounds.  ``tail_delta`` δ″ ∈ (0, δ_j] defaults
        to δ_j (then only pure-DP rounds fit)."""
        from ..filters.whitehouse import WhitehouseFilter
        from ..rational import floor_fraction

        e, d = _eps(epsilon, "epsilon"), _dlt(delta, "delta")
        if e == 0 or d == 0:
            raise InvalidParameter("an advanced-composition lane needs epsilon > 0 and "
                                   "delta > 0 (its tail δ″ sits inside a logarithm)")
        tail = d if tail_delta is None else _dlt(tail_delta, "tail_delta")
        wf = WhitehouseFilter(e, d, tail)
        s_max = floor_fraction(wf._smax[0], GRID)
        if s_max == 0:
            raise InvalidParameter(f"an advanced-composition lane of epsilon={e} holds no "
                                   "Σε_i² > 0 on the 1e-12 grid; give it more")
        return cls(_check_name(name), "advanced", e, d, (s_max, d - tail), (), tail)

    # ------------------------------------------------------------------ meaning
    @property
    def kind(self) -> int:
        """The notion's number in certificates (``Odp.LedgerCore`` lane kinds)."""
        return NOTIONS.index(self.notion)

    @property
    def share(self) -> Budget:
        return Budget._trusted(self.epsilon, self.delta)

    @property
    def coordinates(self) -> int:
        return len(self.budget)

    @property
    def some_fit(self) -> bool:
        """Whether the lane continues while *some* coordinate fits (the Rényi lane) rather than
        all of them."""
        return self.notion == "renyi"

    def fits(self, spent: Sequence[Fraction]) -> bool:
        """The lane's rule on its coordinates' sums."""
        pairs = zip(spent, self.budget, strict=True)
        if self.some_fit:
            return any(s <= b for s, b in pairs)
        return all(s <= b for s, b in pairs)

    def vector(self, cost: Sequence[Fraction]) -> tuple[Fraction, ...]:
        """A charge's cost in the lane's coordinates: ``(ρ,)``, ``(ε(α_1), …)``, or
        ``(ε², δ)`` for a round ``(ε, δ)`` of the advanced-composition lane."""
        if self.notion == "advanced":
            return (cost[0] * cost[0], cost[1])
        return tuple(cost)

    def reading(self, spent: Sequence[Fraction], rounds: int) -> tuple[Fraction, Fraction]:
        """What the lane's rounds have used, as (ε, δ) (an odometer reading: compare it with a
        threshold fixed before the session; the lane's guarantee is its share): (0, 0) before
        its first round; else the zCDP sum converted at δ_j, the best order's conversion at
        δ_j/m, or the Whitehouse et al. odometer (Haney et al. 2023, Thm. 3.8)."""
        from .. import conversions as cv

        if rounds == 0:
            return Fraction(0), Fraction(0)
        if self.notion == "zcdp":
            return cv.zcdp_to_dp_epsilon(spent[0], self.delta), self.delta
        if self.notion == "renyi":
            share = self.delta / len(self.orders)
            return (min(cv.rdp_to_dp_epsilon(a, s, share) for a, s in zip(self.orders, spent)),
                    self.delta)
        if self.notion == "advanced":
            from ..filters.whitehouse import WhitehouseAccumulator

            assert self.tail_delta is not None
            loss = WhitehouseAccumulator(self.tail_delta).loss((spent[0], spent[1]))
            return loss.epsilon, loss.delta
        raise LedgerError(f"lane {self.name}: the ODP lane's reading is its ledger's")

    def check(self) -> None:
        """Re-check that the lane's recorded budget converts to at most its share (rigorous,
        from scratch): :class:`LedgerError` naming what fails.  Used when a ledger or a
        certificate is read."""
        from .. import conversions as cv

        what = f"lane {self.name!r} ({self.notion})"
        if self.notion == "odp":
            if self.budget or self.orders or self.tail_delta is not None:
                raise LedgerError(f"{what} records a notion budget")
            return
        if self.epsilon <= 0 or self.delta <= 0:
            raise LedgerError(f"{what} needs a share with epsilon > 0 and delta > 0")
        if self.notion == "zcdp":
            if len(self.budget) != 1 or self.orders or self.tail_delta is not None:
                raise LedgerError(f"{what} must record exactly its ρ")
            if cv.zcdp_to_dp_epsilon(self.budget[0], self.delta) > self.epsilon:
                raise LedgerError(f"{what}: ρ={self.budget[0]} converts to more than "
                                  f"epsilon={self.epsilon} at delta={self.delta}")
        elif self.notion == "renyi":
            if (not self.orders or len(self.orders) != len(self.budget)
                    or len(self.orders) > MAX_ORDERS or self.tail_delta is not None
                    or list(self.orders) != sorted(set(self.orders))
                    or any(a <= 1 for a in self.orders)):
                raise LedgerError(f"{what} must record increasing orders > 1, one budget each")
            share = self.delta / len(self.orders)
            for a, b in zip(self.orders, self.budget):
                if cv.rdp_to_dp_epsilon(a, b, share) > self.epsilon:
                    raise LedgerError(f"{what}: the budget {b} at order {a} converts to more "
                                      f"than epsilon={self.epsilon} at delta={share}")
        elif self.notion == "advanced":
            from ..filters.whitehouse import WhitehouseFilter

            tail = self.tail_delta
            if (len(self.budget) != 2 or self.orders or tail is None or not 0 < tail <= self.delta
                    or self.budget[1] != self.delta - tail):
                raise LedgerError(f"{what} must record (Σε² budget, δ − δ″) and 0 < δ″ <= δ")
            if not WhitehouseFilter(self.epsilon, self.delta, tail)._epsilon_ok(self.budget[0]):
                raise LedgerError(f"{what}: Σε² <= {self.budget[0]} is more than the Whitehouse "
                                  f"et al. rule admits at epsilon={self.epsilon}")
        else:
            raise LedgerError(f"unknown lane notion {self.notion!r}")

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "notion": self.notion,
                               "epsilon": _text(self.epsilon), "delta": _text(self.delta)}
        if self.notion != "odp":
            out["budget"] = [_text(b) for b in self.budget]
        if self.orders:
            out["orders"] = [_text(a) for a in self.orders]
        if self.tail_delta is not None:
            out["tail_delta"] = _text(self.tail_delta)
        return out

    @classmethod
    def from_json(cls, data: Any) -> "Lane":
        """The inverse of :meth:`to_json` (exact, canonical text only); the budget is checked
        (:meth:`check`)."""
        if not isinstance(data, dict):
            raise LedgerError(f"a lane is a JSON object, got {data!r}")
        notion = data.get("notion")
        if notion not in NOTIONS:
            raise LedgerError(f"unknown lane notion {notion!r}")
        allowed = {"name", "notion", "epsilon", "delta"} | (
            {"budget"} if notion != "odp" else set()) | (
            {"orders"} if notion == "renyi" else set()) | (
            {"tail_delta"} if notion == "advanced" else set())
        if set(data) != allowed:
            raise LedgerError(f"lane {data.get('name')!r}: fields {sorted(data)}, expected "
                              f"{sorted(allowed)}")
        try:
            name = _check_name(data["name"])
        except InvalidParameter as exc:
            raise LedgerError(str(exc)) from None

        def nums(key: str) -> tuple[Fraction, ...]:
            values = data.get(key, [])
            if not isinstance(values, list):
                raise LedgerError(f"lane {name!r}: {key} must be a list")
            return tuple(_exact(v, f"{key} of lane {name!r}") for v in values)

        tail = data.get("tail_delta")
        lane = cls(name, notion, _exact(data["epsilon"], f"epsilon of lane {name!r}"),
                   _exact(data["delta"], f"delta of lane {name!r}"), nums("budget"),
                   nums("orders"), None if tail is None else _exact(tail, "tail_delta"))
        if lane.delta >= 1:
            raise LedgerError(f"lane {name!r}: delta >= 1")
        lane.check()
        return lane

    def describe(self) -> str:
        """One line for people: the share and the notion budget."""
        share = f"ε={display_fraction(self.epsilon, 'down')} δ={display_fraction(self.delta, 'down')}"
        if self.notion == "zcdp":
            extra = f"ρ ≤ {display_fraction(self.budget[0], 'down')}"
        elif self.notion == "renyi":
            extra = "Σε(α) ≤ " + ", ".join(f"{display_fraction(b, 'down')} at α={a}"
                                          for a, b in zip(self.orders, self.budget))
        elif self.notion == "advanced":
            assert self.tail_delta is not None
            extra = (f"Σε² ≤ {display_fraction(self.budget[0], 'down')}, "
                     f"δ″={display_fraction(self.tail_delta, 'down')}")
        else:
            extra = "Alg. 1 (sum of realised costs)"
        return f"{self.name} [{self.notion}] {share}: {extra}"


#: Canonical JSON (sorted keys, no spaces, ASCII escapes): :func:`odp.ledger.records.dumps`'s
#: encoder (not imported: that module imports this one).
_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"))


def lanes_json(lanes: Sequence[Lane]) -> str:
    """The canonical JSON text of a lane list (what the ledger's metadata and genesis hold)."""
    return _CANONICAL_JSON.encode([lane.to_json() for lane in lanes])


def lanes_from_json(text: str) -> tuple[Lane, ...]:
    """The lanes of a ledger from their recorded text; :class:`LedgerError` for anything odp did
    not write (the text must be canonical: the genesis hash covers it byte for byte)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise LedgerError(f"the recorded lanes are not JSON ({exc})") from None
    if not isinstance(data, list):
        raise LedgerError("the recorded lanes are not a list")
    lanes = tuple(Lane.from_json(item) for item in data)
    if lanes_json(lanes) != text:
        raise LedgerError("the recorded lanes are not in canonical form")
    return lanes


def _check_made(lane: Lane) -> None:
    """A lane as its constructors make it: exact fields of the right types, and a notion budget
    that converts to at most its share (:meth:`Lane.check`, rigorous) — a lane built by hand or
    with :func:`dataclasses.replace` must not hold more than its share."""
    def exact(x: Any) -> bool:
        return isinstance(x, Fraction) and x >= 0

    if (lane.notion not in NOTIONS or not exact(lane.epsilon) or not exact(lane.delta)
            or lane.delta >= 1 or not isinstance(lane.budget, tuple)
            or not all(exact(b) for b in lane.budget) or not isinstance(lane.orders, tuple)
            or not all(exact(a) for a in lane.orders)
            or not (lane.tail_delta is None or exact(lane.tail_delta))):
        raise InvalidParameter(f"lane {lane.name!r} is not one odp made: make lanes with "
                               "Lane.odp, Lane.zcdp, Lane.renyi or Lane.advanced")
    _check_name(lane.name)
    try:
        lane.check()
    except LedgerError as exc:
        raise InvalidParameter(f"{exc}; make lanes with Lane.odp, Lane.zcdp, Lane.renyi or "
                               "Lane.advanced, which size their budgets") from None


def check_lanes(lanes: Sequence[Lane], budget: Budget) -> tuple[Lane, ...]:
    """A valid lane list for ``budget``: lanes as odp's constructors make them (each notion
    budget re-checked against its share), at least one lane, unique names, at most one ODP
    lane, shares adding up to the budget exactly; :class:`InvalidParameter` otherwise."""
    out = tuple(lanes)
    if not out or not all(isinstance(lane, Lane) for lane in out):
        raise InvalidParameter("lanes must be a non-empty list of odp.Lane (Lane.odp, "
                               "Lane.zcdp, Lane.renyi, Lane.advanced)")
    for lane in out:
        _check_made(lane)
    names = [lane.name for lane in out]
    if len(set(names)) != len(names):
        raise InvalidParameter(f"lane names must be distinct, got {names}")
    if sum(1 for lane in out if lane.notion == "odp") > 1:
        raise InvalidParameter("a ledger has at most one ODP lane")
    if any(lane.notion == "odp" for lane in out[1:]):
        raise InvalidParameter("the ODP lane comes first in lanes= (certificates number it 0)")
    eps = sum((lane.epsilon for lane in out), Fraction(0))
    dlt = sum((lane.delta for lane in out), Fraction(0))
    if (eps, dlt) != (budget.epsilon, budget.delta):
        raise InvalidParameter(
            f"the lanes' shares add up to epsilon={eps}, delta={dlt}, not to the budget "
            f"epsilon={budget.epsilon}, delta={budget.delta}; lane budgets must sum to the "
            "total exactly")
    return out


def check_same_lanes(have: Sequence[Lane] | None, want: Sequence[Lane] | None,
                     where: str) -> None:
    """An existing ledger opened with ``lanes=`` must have exactly those lanes."""
    if want is None:
        return
    if have is None or tuple(have) != tuple(want):
        shown = "no lanes" if have is None else ", ".join(lane.name for lane in have)
        raise LedgerError(f"{where} has {shown}, not the lanes given "
                          f"({', '.join(lane.name for lane in want)}); open it without lanes= "
                          "(or with the same ones) to continue it")


def whole_budget_lane(composition: str, budget: Budget) -> tuple[Lane, ...] | None:
    """``Accountant(composition=…)``: ``"odp"`` (no lanes: today's ledger), ``"zcdp"`` or
    ``"advanced"`` (one lane holding the whole budget)."""
    if composition == "odp":
        return None
    if composition == "zcdp":
        return (Lane.zcdp(budget.epsilon, budget.delta),)
    if composition == "advanced":
        return (Lane.advanced(budget.epsilon, budget.delta),)
    if composition == "renyi":
        raise InvalidParameter("a Rényi lane needs its orders: lanes=[odp.Lane.renyi(epsilon, "
                               "delta, orders=[…])]")
    raise InvalidParameter(f"composition must be 'odp', 'zcdp' or 'advanced' (or give lanes=), "
                           f"got {composition!r}")


def parse_lane_spec(text: str) -> Lane:
    """A lane from the command line: ``NOTION:EPSILON:DELTA`` (``odp``, ``zcdp``), with the
    orders for a Rényi lane (``renyi:1:1e-6:8,16``) and optionally δ″ for an advanced lane
    (``advanced:1:1e-6:1e-7``); a ``NAME=`` prefix names the lane (default: its notion)."""
    name = None
    if "=" in text:
        name, text = text.split("=", 1)
    parts = text.split(":")
    notion = parts[0]
    if notion not in NOTIONS or len(parts) < 2 or len(parts) > 4:
        raise InvalidParameter(f"--lane {text!r}: expected NOTION:EPSILON[:DELTA[:MORE]] with "
                               f"NOTION one of {', '.join(NOTIONS)}")
    eps, delta = parts[1], parts[2] if len(parts) > 2 else "0"
    more = parts[3] if len(parts) > 3 else None
    label = name or notion
    if notion == "odp":
        if more is not None:
            raise InvalidParameter(f"--lane {text!r}: an ODP lane takes EPSILON[:DELTA]")
        return Lane.odp(eps, delta, name=label)
    if notion == "zcdp":
        if more is not None:
            raise InvalidParameter(f"--lane {text!r}: a zCDP lane takes EPSILON:DELTA")
        return Lane.zcdp(eps, delta, name=label)
    if notion == "renyi":
        if not more:
            raise InvalidParameter(f"--lane {text!r}: a Rényi lane needs its orders, e.g. "
                                   "renyi:1:1e-6:8,16")
        return Lane.renyi(eps, delta, orders=more.split(","), name=label)
    return Lane.advanced(eps, delta, tail_delta=more, name=label)


def ledger_statuses(state: Any) -> list[LaneStatus]:
    """Every lane of a ledger's state (:class:`~odp.ledger.BudgetState`) with what it has used;
    a ledger without lanes is one ODP lane holding the whole budget."""
    held = state.spent
    if state.lanes is None:
        lane = Lane.odp(state.budget.epsilon, state.budget.delta)
        return [LaneStatus(lane, len(state.rounds), (held.epsilon, held.delta),
                           (held.epsilon, held.delta))]
    odp_rounds = sum(1 for r in state.rounds if r.lane is None)
    return list(state.lanes.status(odp_rounds, held))


# ---------------------------------------------------------------------------- charges
@dataclass(frozen=True)
class LaneCharge(GuaranteeRecord):
    """A round charged to a notion lane, as the ledger records it in the reserve row's
    ``guarantee`` column: the lane's name and notion and the round's ``cost`` (ρ; ε(α_k) at each
    of the lane's orders; or (ε, δ) for the advanced-composition lane).  As an Alg. 1 round it
    is one class costing 0 with δ = 0 — it takes nothing from the ODP lane — so every ledger
    path (rows, chain, recovery) treats it like any round; the lane's sums hold its cost.

    ``{"type": "lane", "lane": …, "notion": …, "cost": ["…", …]}`` (exact canonical text)."""

    lane: str = ""
    notion: str = ""
    cost: tuple[Fraction, ...] = ()

    @classmethod
    def of(cls, lane: Lane, cost: Sequence[Fraction]) -> "LaneCharge":
        if lane.notion == "odp":
            raise InvalidParameter("the ODP lane takes ODP rounds, not lane charges")
        width = 2 if lane.notion == "advanced" else lane.coordinates
        values = tuple(cost)
        if len(values) != width or any(not isinstance(c, Fraction) or c < 0 for c in values):
            raise InvalidParameter(f"lane {lane.name!r} takes {width} exact costs >= 0, got "
                                   f"{values!r}")
        if lane.notion == "advanced" and values[1] >= 1:
            raise InvalidParameter("a round's delta must be < 1")
        return cls((("all", Fraction(0)),), Fraction(0), None, lane.name, lane.notion, values)

    def to_json(self) -> dict[str, Any]:
        return {"type": "lane", "lane": self.lane, "notion": self.notion,
                "cost": [_text(c) for c in self.cost]}

    @classmethod
    def from_json(cls, data: object) -> "LaneCharge":
        if (not isinstance(data, dict) or data.get("type") != "lane"
                or set(data) != {"type", "lane", "notion", "cost"}):
            raise InvalidGuarantee(f"not a recorded lane charge: {data!r}")
        name, notion, cost = data["lane"], data["notion"], data["cost"]
        if not isinstance(name, str) or notion not in NOTIONS[1:] or not isinstance(cost, list):
            raise InvalidGuarantee(f"not a recorded lane charge: {data!r}")
        try:
            values = tuple(_exact(c, "a lane cost") for c in cost)
        except LedgerError as exc:
            raise InvalidGuarantee(str(exc)) from None
        return cls((("all", Fraction(0)),), Fraction(0), None, name, notion, values)

    def describe(self) -> str:
        if self.notion == "zcdp":
            return f"ρ={display_fraction(self.cost[0])}"
        if self.notion == "advanced":
            return f"ε={display_fraction(self.cost[0])} δ={display_fraction(self.cost[1])}"
        return "ε(α)=" + ", ".join(display_fraction(c) for c in self.cost)


def is_lane_charge(guarantee: object) -> bool:
    return type(guarantee) is LaneCharge


# ---------------------------------------------------------------------------- state
@dataclass
class LaneStatus:
    """One lane as ``odp ledger show`` and :attr:`odp.Accountant.lanes` report it."""

    lane: Lane
    rounds: int
    spent: tuple[Fraction, ...]  # the notion sums (ODP lane: (ε held, δ held))
    current: tuple[Fraction, Fraction]  # what the rounds have used, as (ε, δ)

    def to_json(self) -> dict[str, Any]:
        lane = self.lane
        out: dict[str, Any] = {
            "name": lane.name, "notion": lane.notion,
            "budget": {"epsilon": _text(lane.epsilon), "delta": _text(lane.delta)},
            "rounds": self.rounds,
            "current": {"epsilon": _text(self.current[0]), "delta": _text(self.current[1])},
        }
        if lane.notion == "odp":
            out["spent"] = {"epsilon": _text(self.spent[0]), "delta": _text(self.spent[1])}
        else:
            keys = {"zcdp": ["rho"], "advanced": ["sum_epsilon_squared", "sum_delta"]}.get(
                lane.notion, [f"alpha={a}" for a in lane.orders])
            out["notion_budget"] = dict(zip(keys, (_text(b) for b in lane.budget)))
            out["spent"] = dict(zip(keys, (_text(s) for s in self.spent)))
        if lane.orders:
            out["orders"] = [_text(a) for a in lane.orders]
        if lane.tail_delta is not None:
            out["tail_delta"] = _text(lane.tail_delta)
        return out

    def describe(self) -> str:
        lane = self.lane
        used = (f"used {display_named('ε', self.current[0])} "
                f"{display_named('δ', self.current[1])}")
        if lane.notion == "zcdp":
            spent = (f"ρ {display_fraction(self.spent[0])} of "
                     f"{display_fraction(lane.budget[0], 'down')}")
        elif lane.notion == "renyi":
            spent = "Σε(α): " + ", ".join(
                f"{display_fraction(s)}/{display_fraction(b, 'down')} at α={a}"
                for a, s, b in zip(lane.orders, self.spent, lane.budget))
        elif lane.notion == "advanced":
            spent = (f"Σε² {display_fraction(self.spent[0])} of "
                     f"{display_fraction(lane.budget[0], 'down')}, Σδ "
                     f"{display_fraction(self.spent[1])} of "
                     f"{display_fraction(lane.budget[1], 'down')}")
        else:
            spent = "Alg. 1"
        return (f"{lane.name:<9} {lane.notion:<8} share ε={display_fraction(lane.epsilon, 'down')}"
                f" δ={display_fraction(lane.delta, 'down')}  {self.rounds} round(s)  {spent}  "
                f"{used}")


@dataclass
class LaneBook:
    """The running sums of a ledger's notion lanes (the ODP lane is the ledger's own Alg. 1
    state).  Charged when a lane round's reserve row is applied; O(lanes) to snapshot and
    restore (a failed batch puts it back)."""

    lanes: tuple[Lane, ...]
    spent: dict[str, tuple[Fraction, ...]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_name = {lane.name: lane for lane in self.lanes}
        for lane in self.lanes:
            if lane.notion != "odp":
                self.spent.setdefault(lane.name, tuple(Fraction(0) for _ in lane.budget))
                self.counts.setdefault(lane.name, 0)

    @property
    def odp_lane(self) -> Lane | None:
        return next((lane for lane in self.lanes if lane.notion == "odp"), None)

    @property
    def odp_share(self) -> Budget:
        """The ODP lane's share ((0, 0) without one): the budget of the ledger's Alg. 1 state."""
        lane = self.odp_lane
        return lane.share if lane is not None else Budget._trusted(Fraction(0), Fraction(0))

    def lane_of(self, charge: LaneCharge) -> Lane:
        lane = self.by_name.get(charge.lane)
        if lane is None or lane.notion != charge.notion or lane.notion == "odp":
            raise LedgerError(f"a charge to lane {charge.lane!r} ({charge.notion}), which this "
                              "ledger does not have")
        width = 2 if lane.notion == "advanced" else lane.coordinates
        if len(charge.cost) != width:
            raise LedgerError(f"a charge to lane {lane.name!r} with {len(charge.cost)} costs, "
                              f"not {width}")
        return lane

    def after(self, charge: LaneCharge) -> tuple[Lane, tuple[Fraction, ...]]:
        lane = self.lane_of(charge)
        vector = lane.vector(charge.cost)
        return lane, tuple(s + c for s, c in zip(self.spent[lane.name], vector))

    def admits(self, charge: LaneCharge) -> bool:
        """The lane's rule on its sums with ``charge`` added (the round's admission)."""
        lane, new = self.after(charge)
        return lane.fits(new)

    def apply(self, charge: LaneCharge) -> None:
        """Add ``charge`` to its lane's sums; :class:`LedgerError` (nothing changed) if the lane
        is unknown or its rule refuses (a row that could never have been written)."""
        lane, new = self.after(charge)
        if not lane.fits(new):
            raise LedgerError(f"a charge to lane {lane.name!r} that its budget refuses")
        self.spent[lane.name] = new
        self.counts[lane.name] += 1

    def mark(self) -> tuple[dict[str, tuple[Fraction, ...]], dict[str, int]]:
        return dict(self.spent), dict(self.counts)

    def restore(self, mark: tuple[dict[str, tuple[Fraction, ...]], dict[str, int]]) -> None:
        self.spent, self.counts = dict(mark[0]), dict(mark[1])

    def status(self, odp_rounds: int, odp_spent: Budget) -> list[LaneStatus]:
        """Every lane's :class:`LaneStatus`, in the ledger's order."""
        out = []
        for lane in self.lanes:
            if lane.notion == "odp":
                spent = (odp_spent.epsilon, odp_spent.delta)
                out.append(LaneStatus(lane, odp_rounds, spent, spent))
            else:
                n = self.counts[lane.name]
                out.append(LaneStatus(lane, n, self.spent[lane.name],
                                      lane.reading(self.spent[lane.name], n)))
        return out


def session_totals(statuses: Sequence[LaneStatus], budget: Budget) -> tuple[Budget, Budget]:
    """(spent, remaining) of a laned session: the lanes' readings added up, and the budget minus
    that (floored at 0 per component)."""
    eps = sum((s.current[0] for s in statuses), Fraction(0))
    dlt = sum((s.current[1] for s in statuses), Fraction(0))
    spent = Budget._trusted(eps, dlt)
    remaining = Budget._trusted(max(budget.epsilon - eps, Fraction(0)),
                                max(budget.delta - dlt, Fraction(0)))
    return spent, remaining
