"""SVT through an accountant: the interactive session (:class:`SVTSession`, one interactive
reservation settled at class ``c'``) and the application of Hartmann et al. 2022, Sec. 4.1
(:func:`sparse_vector_release`: SVT selection, then Laplace releases with the leftover budget).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Sequence

from ...accountant import Accountant
from ...budget import parse_positive, parse_positive_int
from ...ledger import RoundRecord
from ...readable import ExactValue
from ...errors import InvalidParameter, SessionClosed
from ...neighbours import Neighbours
from ...samplers import discrete_laplace
from ..base import query_name
from ..builtin import class_intact, intact, register, seal
from ..noise import LaplaceMechanism, exact_value
from ..pipeline import check_plan, keep_partial
from .mechanism import SparseVectorMechanism, _check_c, _parameters, count_top

__all__ = ["DEFAULT_MAX_QUERIES", "SVTSession", "SparseVectorRelease", "entry_epsilon",
           "sparse_vector_release"]

#: The default declared maximum number of queries of an :class:`SVTSession`.
DEFAULT_MAX_QUERIES = 10**6


class SVTSession:
    """Interactive SVT through an accountant.

    The session reserves the whole round at its sup ε1 + ε2 when it opens (an *interactive*
    reservation), draws ρ, then answers :meth:`ask` queries as they come.  :meth:`stop` (the
    STOP query) — or the ``c``-th ⊤ answer — settles it at ``ℰ(S_{c'}) = ε1 + (c'/c)·ε2``.  The
    accountant refunds below the sup only if no other round was reserved on the same ledger
    while the session was open (else it charges the sup: reason ``interactive-overlap``).

    A query after STOP or after the cut-off raises :class:`SessionClosed` (nothing is drawn).
    Used as a context manager, leaving the block normally is a STOP; leaving it on an exception
    charges the sup.

    **Finite output space.**  The session declares ``max_queries`` (default
    :data:`DEFAULT_MAX_QUERIES`, recorded in the round's parameters): the ``max_queries``-th
    answer ends it like a STOP (settled at its class ``c'``), and query ``max_queries + 1``
    raises :class:`SessionClosed` without drawing noise or moving the budget.  So the output
    space — the answer sequences of length at most ``max_queries`` with at most ``c`` ⊤ — is
    finite, and Theorem 7 for finite output spaces applies.  Ending after ``max_queries`` is an
    analyst's STOP, which Lemma 8 allows at any point: the guarantee is unchanged.
    """

    #: The relation its guarantee is stated for, as for every built-in mechanism
    #: (:mod:`odp.neighbours`): an accountant of another refuses the session, nothing reserved.
    neighbours = Neighbours.REPLACE_ONE

    def __init__(self, accountant: Accountant, data: Any, *, epsilon1: Any, epsilon2: Any, c: int,
                 sensitivity: Any = 1, granularity: Any = None, name: str = "svt",
                 max_queries: int = DEFAULT_MAX_QUERIES):
        accountant._check_neighbours(self.neighbours, f"the SVT session {name!r}")
        self.svt = _parameters(epsilon1=epsilon1, epsilon2=epsilon2, c=c, sensitivity=sensitivity, granularity=granularity)
        #: the declared maximum number of queries (the session ends at the max_queries-th answer)
        self.max_queries = parse_positive_int(max_queries, name="max_queries")
        self._data = data
        self._rng = accountant.rng
        self.answers: list[bool] = []
        self.thresholds: list[Fraction] = []
        # odp's own session (exactly this class, untouched: odp.mechanisms.builtin), or declared
        self._builtin = type(self) is SVTSession and class_intact(SVTSession)
        self.reservation = accountant._reserve(
            self.svt.guarantee(), mechanism=name,
            params={**self.svt.params(), "session": True, "max_queries": self.max_queries},
            interactive=True, builtin="svt" if self._builtin else None)
        self._rho = discrete_laplace(self.svt.threshold_scale, self._rng)
        self.record = self.reservation.record
        seal(self, SVTSession)

    @property
    def count(self) -> int:
        """``c'``: ⊤ answers so far."""
        return count_top(self.answers)

    @property
    def open(self) -> bool:
        return self.reservation.open

    def ask(self, query: Callable[[Any], Any], threshold: Any) -> bool:
        """Answer one query: ``True`` (⊤) iff ``q(x) + ν ≥ T + ρ`` on the grid.  The ``c``-th
        ⊤ answer, or the ``max_queries``-th answer, ends the session (settled at its ``c'``)."""
        if not self.open:
            if self.count >= self.svt.c:
                why = f"it reached its cut-off of c={self.svt.c} ⊤ answers"
            elif len(self.answers) >= self.max_queries:
                why = f"it answered its declared maximum of max_queries={self.max_queries} queries"
            else:
                why = "STOP was sent"
            raise SessionClosed(f"this SVT session is closed ({why}); open a new session "
                                "(a new accountant round) to ask more queries")
        if not callable(query):
            raise InvalidParameter("query must be a function data -> number")
        t_value = exact_value(threshold, name="threshold")
        t = self.svt.to_grid(t_value, name="threshold")
        try:
            n = self.svt.to_grid(query(self._data))
        except Exception:
            self.reservation.abort()
            raise
        if self._builtin and not intact(self):  # e.g. by a query: checked before the noise
            self.reservation.abort()
            raise InvalidParameter(
                "this SVT session's parameters, noise or data were changed after it reserved "
                "its round as odp's SVT: the round is charged its sup and answers nothing more")
        top = n + discrete_laplace(self.svt.query_scale, self._rng) >= t + self._rho
        self.answers.append(top)
        self.thresholds.append(t_value)
        if self.count >= self.svt.c or len(self.answers) >= self.max_queries:
            self._settle()
        return top

    def stop(self) -> RoundRecord:
        """Send STOP: settle the round at class ``c'`` and return its ledger record."""
        if not self.open:
            return self.record
        return self._settle()

    def _settle(self) -> RoundRecord:
        self.record = self.reservation.settle_class(self.count)
        return self.record

    def __enter__(self) -> "SVTSession":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> None:
        if self.open:
            if exc_type is None:
                self.stop()
            else:
                self.reservation.abort()


# odp's own mechanism (odp.mechanisms.builtin): what the session's answers depend on is sealed
register(SVTSession, "svt", fields=("svt", "max_queries", "_data", "_rng", "_rho",
                                    "reservation", "_builtin"))


# --------------------------------------------------------------------------------------------


def entry_epsilon(tops: int, c: int, epsilon2: Fraction, epsilon3: Fraction, *,
                  odp: bool = True) -> Fraction:
    """ε per released entry.  ODP (Sec. 4.1): ``(ε3 + (c − c')/c·ε2)/c'``; the standard DP
    analysis: ``ε3/c`` whatever ``c'``."""
    if not odp:
        return epsilon3 / c
    if tops == 0:
        return Fraction(0)
    return (epsilon3 + Fraction(c - tops, c) * epsilon2) / tops


@dataclass
class SparseVectorRelease:
    """Result of :func:`sparse_vector_release`.  ``values`` maps each selected entry to its
    Laplace release; when a later round was refused or failed (see
    :func:`sparse_vector_release`) it holds the entries released before that, and
    :attr:`complete` is ``False``."""

    answers: tuple[bool, ...]
    selected: list[int]
    values: dict[int, ExactValue]
    epsilon_per_entry: Fraction
    svt_round: Any
    entry_rounds: list[Any]

    @property
    def count(self) -> int:
        return len(self.selected)

    @property
    def complete(self) -> bool:
        """Every selected entry was released."""
        return len(self.values) == len(self.selected)


def sparse_vector_release(accountant: Accountant, data: Any, entries: Sequence[Callable[[Any], Any]],
                          threshold: Any, *, c: int, epsilon1: Any, epsilon2: Any,
                          epsilon3: Any, sensitivity: Any = 1, granularity: Any = None,
                          names: Sequence[str] | None = None,
                          window: Any = None) -> SparseVectorRelease:
    """Sec. 4.1: find the entries ``f_i(x)`` with ``|f_i(x)|`` above ``threshold`` with SVT
    (budget ε1 + ε2, cut-off ``c``), then release each of the ``c'`` selected entries with the
    Laplace mechanism at ``(ε3 + (c − c')/c·ε2)/c'`` — the budget left by Lemma 8's a-posteriori
    charge plus ε3, split over the entries actually selected.

    Each ``f_i`` must have sensitivity ``sensitivity``; ``names`` (one per entry) label the
    Laplace rounds in the ledger; ``window`` is the Laplace releases' public window (query
    units; default: :class:`~odp.mechanisms.noise.LaplaceMechanism`'s).  The output space is
    finite: the SVT answers (at most one per entry) and, per selected entry, a point of the
    Laplace window.  Every step is an accountant round (the SVT round is charged
    ε1 + (c'/c)·ε2).  See :mod:`odp.mechanisms.pipeline`:

    * every parameter of both stages (ε's, ``c``, threshold, sensitivity, granularity, window,
      one function and one name per entry) is validated, and the mechanisms are built, before the
      first round: a mistake raises :class:`~odp.errors.InvalidParameter` and costs nothing;
    * the total plan ε1 + ε2 + ε3 must fit in the remaining budget (else ``BudgetExceeded``,
      nothing drawn or recorded);
    * that check is not atomic across processes sharing the ledger: if a Laplace round is then
      refused (``BudgetExceeded``) or fails, the error is re-raised with ``error.partial``, the
      :class:`SparseVectorRelease` of what was released so far (``complete`` is ``False``).
    """
    eps1 = parse_positive(epsilon1, name="epsilon1")
    eps2 = parse_positive(epsilon2, name="epsilon2")
    eps3 = parse_positive(epsilon3, name="epsilon3")
    cutoff = _check_c(c)
    entries = list(entries)
    if not entries or not all(callable(f) for f in entries):
        raise InvalidParameter("entries must be a non-empty list of functions data -> number")
    if names is None:
        labels = [f"entry {i}" for i in range(len(entries))]
    else:
        labels = [] if isinstance(names, (str, bytes)) else list(names)
        if len(labels) != len(entries):
            raise InvalidParameter(
                f"give one name per entry: {len(entries)} entries but "
                f"{'a single string' if isinstance(names, (str, bytes)) else len(labels)} "
                "names; nothing was drawn or recorded")

    def magnitude(f: Callable[[Any], Any]) -> Callable[[Any], Fraction]:
        def query(d: Any) -> Fraction:
            return abs(exact_value(f(d)))
        query.__name__ = f"abs({query_name(f)})"
        return query

    def laplace(i: int, epsilon: Fraction) -> LaplaceMechanism:
        mech = LaplaceMechanism(entries[i], epsilon=epsilon, sensitivity=sensitivity,
                                granularity=granularity, window=window)
        mech.name = f"laplace[{labels[i]}]"
        return mech

    svt = SparseVectorMechanism([magnitude(f) for f in entries], threshold, epsilon1=eps1,
                                epsilon2=eps2, c=cutoff, sensitivity=sensitivity,
                                granularity=granularity)
    # Validate the second stage now: its mechanisms differ from these only in their ε, which is
    # (ε3 + (c − c')/c·ε2)/c' > 0 for every possible c' ≥ 1.
    for i in range(len(entries)):
        laplace(i, entry_epsilon(1, cutoff, eps2, eps3))
    check_plan(accountant, eps1 + eps2 + eps3, Fraction(0), "the sparse-vector release (ε1+ε2+ε3)")

    answers = accountant.run(svt, data)
    selected = [i for i, a in enumerate(answers) if a]
    per_entry = entry_epsilon(len(selected), cutoff, eps2, eps3)
    result = SparseVectorRelease(tuple(answers), selected, {}, per_entry, accountant.last_round,
                                 [])
    for i in selected:
        try:
            result.values[i] = accountant.run(laplace(i, per_entry), data)
        except BaseException as error:  # refused (another process spent) or failed: keep the rest
            keep_partial(error, result)
            raise
        result.entry_rounds.append(accountant.last_round)
    return result
