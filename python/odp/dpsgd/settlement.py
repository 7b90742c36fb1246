"""The seam of :class:`odp.dpsgd.Accounting`: how a training run is charged.

A :class:`Settlement` reserves or pays for a run's steps before they run and settles the run
when it stops.  :class:`odp.dpsgd.OdpLaneSettlement` reserves the worst case as one ODP round
and settles by Lemma 11 of Hartmann et al. 2022; :class:`odp.dpsgd.RenyiLaneSettlement` pays
each stretch of steps to a Rényi lane before it runs.  :class:`TrainingRun` is what a
settlement reads of the run (the accounting itself).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import InvalidParameter
from ..ledger import RoundRecord
from ..rdp import check_delta
from ..readable import Interval

if TYPE_CHECKING:
    from ..accountant import Accountant
    from ..neighbours import Neighbours
    from .schedule import Schedule

__all__ = ["Settlement", "TrainingRun"]


class TrainingRun(Protocol):
    """The public facts of a training run a settlement reads (:class:`odp.dpsgd.Accounting`)."""

    accountant: "Accountant"
    schedule: "Schedule"
    stops: list[int]
    max_steps: int
    delta: Fraction
    neighbours: "Neighbours"
    name: str
    params: dict[str, Any]

    def tight_epsilon(self, delta: Any = None) -> Interval:
        ...


class Settlement(ABC):
    """How a training run is charged: reserved (or paid) in the ledger before its steps run,
    settled when it stops (:mod:`odp.dpsgd.accounting`, "a seam").  One settlement serves one
    :class:`~odp.dpsgd.Accounting`."""

    name: str = "settlement"

    @abstractmethod
    def open(self, run: "TrainingRun") -> None:
        """Reserve the run's worst case in ``run.accountant`` (raises ``BudgetExceeded`` and
        records nothing if it does not fit)."""

    @abstractmethod
    def charge_at(self, steps: int) -> tuple[int, Fraction]:
        """``(class, ε)``: what :meth:`close` would charge for a run of ``steps`` steps."""

    @abstractmethod
    def close(self, steps: int) -> RoundRecord:
        """Settle the round for a run of ``steps`` steps."""

    @abstractmethod
    def abort(self, reason: str) -> RoundRecord:
        """Settle the round at its worst case."""

    @property
    @abstractmethod
    def reserved(self) -> tuple[Fraction, Fraction]:
        """``(ε, δ)`` held in the ledger until the run is settled."""

    def details(self) -> dict[str, Any]:
        """What the ledger records about the settlement (JSON)."""
        return {"settlement": self.name}

    @property
    def round_id(self) -> str | None:
        """The ledger round the run is recorded in (``None`` before :meth:`open`)."""
        return None

    def delta_for(self, accountant: "Accountant", delta: Any) -> Fraction:
        """The run's δ from the ``delta`` given (checked; this route needs one)."""
        if delta is None:
            raise InvalidParameter("give the run's delta (delta=...)")
        return check_delta(delta)

    def before_steps(self, done: int, count: int) -> None:
        """Called before steps ``done+1 … done+count`` are counted (and, by a loop that follows
        the protocol, before their noise is drawn); may charge them or raise (then they are
        not counted and must not run).  The ODP route reserved the whole run: nothing to do."""

    def epsilon(self, run: "TrainingRun", steps: int, delta: Fraction) -> Interval | None:
        """What :meth:`odp.dpsgd.Accounting.epsilon` reports for ``steps`` steps at ``delta``, or ``None``
        for privacy buckets' interval of the tight ε (:meth:`odp.dpsgd.Accounting.tight_epsilon`)."""
        return None
