"""Run-time enforcement: re-check each budget transition before its settle row is committed.

``Accountant(enforce="generated")`` (the default) checks every transition with the rules
generated from ``Odp/LedgerCore.lean``; ``enforce="lean"`` sends each transition to the
compiled Lean checker ``odpcheck`` (a long-lived process, :mod:`odp.certs.lean`); ``None``
turns the re-check off.  A transition is the Alg. 1 state (ε_r, δ_r) just before the round and
the round's (sup ε, charged ε, δ) with its declared class costs and realised class; the check
passes when the Lemma 4 row passes ``blocksOk``, the ``mech`` row (when the caller passes the
round's recorded ``mechanism`` and ``params``, from which :mod:`odp.certs.mechanisms` derives it)
passes ``mechOk``, the charge passes ``refundJustified``, ``admits`` accepts the step, and
``update`` gives exactly ``(ε_r − charged, δ_r − δ)``.  On a disagreement the ledger charges the
round its sup and raises :class:`~odp.errors.CertificateError`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any, Callable

from .. import _lean_rules as lean
from ..errors import CertificateError, InvalidParameter
from . import mechanisms
from .format import to_units
from .transition import transition_text

if TYPE_CHECKING:
    from ..ledger.lanes import LaneBook, LaneCharge

__all__ = ["Check", "generated_check", "generated_lane_check", "lane_rows", "transition_check",
           "transition_text"]

Check = Callable[[Fraction, Fraction, Fraction, Fraction, Fraction, "list[Fraction] | None",
                  "int | None"], bool]


def generated_check(eps_r: Fraction, delta_r: Fraction, sup: Fraction, charged: Fraction,
                    delta: Fraction, blocks: list[Fraction] | None = None,
                    realized: int | None = None, *, mechanism: str | None = None,
                    params: dict[str, Any] | None = None) -> bool:
    """The transition passes the generated step check (``odp._lean_rules.check_step``:
    ``blocksOk``, ``mechOk``, ``refundJustified``, ``admits``) and ``update`` gives exactly
    ``(ε_r − charged, δ_r − δ)``.  ``mechanism``/``params``: the round's recorded name and
    parameters; for one of odp's built-in mechanisms (:func:`odp.certs.mechanisms.derive`) its
    ``mech`` row is checked too (a user's own mechanism is declared: nothing to check)."""
    mech = None if mechanism is None else mechanisms.derive(mechanism, params)
    amounts = mech.amounts() if mech is not None else []
    n = len(blocks or ())
    try:  # a negative amount is no natural number of units: such a transition is refused
        d, scaled = to_units((eps_r, delta_r, sup, charged, delta, *(blocks or ()), *amounts))
    except CertificateError:
        return False
    e_r, d_r, s, c, dl = scaled[:5]
    after, _ = lean.check_step(lean.State(e_r, d_r), lean.Entry(s, c, dl),
                               blocks=scaled[5:5 + n] if blocks is not None else None,
                               realized=realized,
                               mech=None if mech is None else mechanisms.lean_args(mech.row(d)))
    return after is not None and after.eps == e_r - c and after.delta == d_r - dl


def lane_rows(book: "LaneBook", extra: "LaneCharge | None" = None
              ) -> tuple[int, tuple[lean.Share, ...], tuple[lean.Slot, ...], tuple[lean.Cost, ...],
                         tuple[int, int]]:
    """A laned ledger's lanes as the Lean ledger rules take them (``Odp.LedgerCore.Share``,
    ``Slot``, ``Cost``, in units of 1/D): the shares, every notion lane's budget coordinates,
    the sums charged so far (one cost per coordinate of a lane that was charged) and ``extra``'s
    cost; with D and the total budget."""
    lanes = book.lanes
    index = {lane.name: j for j, lane in enumerate(lanes)}
    costs: list[tuple[int, int, Fraction]] = []
    for lane in lanes:
        if lane.notion != "odp" and book.counts[lane.name]:
            costs += [(index[lane.name], k, v) for k, v in enumerate(book.spent[lane.name])]
    if extra is not None:
        lane = book.lane_of(extra)
        costs += [(index[lane.name], k, v) for k, v in enumerate(lane.vector(extra.cost))]
    values: list[Fraction] = []
    for lane in lanes:
        values += [lane.epsilon, lane.delta, *lane.budget]
    values += [v for _, _, v in costs]
    total_eps = sum((lane.epsilon for lane in lanes), Fraction(0))
    total_delta = sum((lane.delta for lane in lanes), Fraction(0))
    d, scaled = to_units([*values, total_eps, total_delta])
    it = iter(scaled)
    shares, slots = [], []
    for j, lane in enumerate(lanes):
        shares.append(lean.Share(lane.kind, next(it), next(it)))
        slots += [lean.Slot(j, k, next(it)) for k in range(len(lane.budget))]
    cost_rows = tuple(lean.Cost(j, k, next(it)) for j, k, _ in costs)
    return d, tuple(shares), tuple(slots), cost_rows, (next(it), next(it))


def generated_lane_check(book: "LaneBook", charge: "LaneCharge") -> bool:
    """A lane round's admission re-checked with the rules generated from
    ``Odp/LedgerCore.lean``: ``lanesOk`` holds for the ledger's lanes with the round's cost
    added (:func:`lane_rows`).  Used under every ``enforce`` mode (the ``odpcheck`` line
    protocol carries no lane rows)."""
    try:
        _, shares, slots, costs, total = lane_rows(book, charge)
    except CertificateError:
        return False
    return lean.lanesOk(lean.State(*total), shares, slots, costs)


def transition_check(mode: str | None) -> Check | None:
    """The check for ``Accountant(enforce=mode)``."""
    if mode is None or mode == "off":
        return None
    if mode == "generated":
        return generated_check
    if mode == "lean":
        from .lean import LeanTransitionCheck

        return LeanTransitionCheck()
    raise InvalidParameter(f"enforce must be 'generated', 'lean' or None, got {mode!r}")
