"""The Sparse Vector Technique with ODP accounting (paper 002, Sec. 4.1: Alg. 2, Lemma 8).

The variant of Lyu, Su and Li (VLDB 2017, Alg. 1) with per-query thresholds, an explicit STOP
and a cut-off ``c``: the threshold noise ρ ~ Lap(Δ/ε1) is drawn once; each query gets fresh
noise ν_i ~ Lap(2cΔ/ε2) and is answered ⊤ (``True``) iff ``q_i(x) + ν_i ≥ T_i + ρ``, else ⊥
(``False``); the session ends at STOP or after ``c`` ⊤ answers.  Lemma 8: with 𝒫 the classes
``S_{c'}`` (outputs with ``c'`` ⊤'s), the mechanism is (𝒫, ℰ, 0)-ODP with
``ℰ(S_{c'}) = ε1 + (c'/c)·ε2``.  The partition label is ``c'`` (an ``int``).

**Discrete noise on a grid.**  Query values and thresholds are put on the grid ``g·ℤ`` exactly as
in :mod:`odp.mechanisms.noise`: ``n_i(x) = ⌊q_i(x)/g + 1/2⌋``, ``t_i = ⌊T_i/g + 1/2⌋``, so that
``|n_i(x) − n_i(x')| ≤ m := ⌈Δ/g⌉`` for neighbours.  Then ρ and ν_i are *discrete* Laplace
variables on ℤ (exact CKS samplers) with scales ``m/ε1`` and ``2cm/ε2`` grid units, and the
answer is ⊤ iff ``n_i + ν_i ≥ t_i + ρ``.  Lemma 8's proof goes through with sums over ℤ in
place of integrals, because it uses only three facts, each true for this noise:

1. the substitution ``z ↦ z − m`` is a bijection of ℤ and ``P(ρ = z − m) ≤ e^{ε1} P(ρ = z)``
   (ratio of discrete Laplace masses at distance m, scale m/ε1);
2. ``f_i(x, z − m) ≤ f_i(x', z)`` where ``f_i(x, z) = P(n_i(x) + ν_i < t_i + z)``, since
   ``n_i(x) ≥ n_i(x') − m``;
3. step (1) of the proof: ``P(ν_i ≥ k − 2m) ≤ e^{ε2/c} P(ν_i ≥ k)`` for every integer k —
   the pointwise bound ``P(ν = y − 2m) ≤ e^{2m/scale} P(ν = y)`` with scale ``2cm/ε2``, summed
   over ``y ≥ k``.

The ODP claim is also checked *without* this argument, against the mechanism's exact output
distribution: :func:`answer_probability` sums ``P(ρ = z) Π_i P(answer_i | z)`` over all of ℤ in
closed form (the two infinite tails are geometric series), for any noise parameters
``r = e^{−1/scale}``.  With rational ``r`` every probability is an exact rational, so
:mod:`odp.exact` decides the ODP inequality exactly (``tests/test_svt.py``); with the
mechanism's own (irrational) ``r`` the same closed form is evaluated at high precision.

Use it in batch (:class:`SparseVectorMechanism`, one accountant round whose release is the answer
vector) or interactively (:class:`SVTSession`: one interactive reservation, answers as queries
arrive, settled at class ``c'`` on STOP or at the cut-off).  :func:`sparse_vector_release` is
the application of Sec. 4.1 (SVT selection, then Laplace releases with the leftover budget).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Sequence

from ..budget import parse_epsilon, parse_positive, parse_positive_int
from ..errors import InvalidParameter, SessionClosed
from ..guarantees import ODP
from ..samplers import RandomSource, discrete_laplace, discrete_laplace_tail
from .base import Mechanism, query_name
from .noise import LaplaceMechanism, exact_value
from .pipeline import check_plan, keep_partial

__all__ = [
    "SessionClosed",
    "SVTParameters",
    "SparseVectorMechanism",
    "SVTSession",
    "SparseVectorRelease",
    "sparse_vector_release",
    "count_top",
    "svt_split",
    "answer_probability",
    "output_distribution",
    "adaptive_output_distribution",
]


def count_top(release: Sequence[bool]) -> int:
    """The ODP partition of Lemma 8: the number ``c'`` of ⊤ answers in the release."""
    return sum(1 for a in release if a)


def svt_split(epsilon: Any, c: int, *, denominator: int = 10**6) -> tuple[Fraction, Fraction]:
    """Split ``ε = ε1 + ε2`` (exactly) with ``ε1/ε2 ≈ 1/(2c)^{2/3}`` — the ratio that Lyu et al.
    (2017, Sec. 4.2) recommend.  ``ε1`` is rounded to a multiple of ``ε/denominator``; any split
    is private, the ratio only matters for accuracy."""
    eps = parse_epsilon(epsilon)
    c = _check_c(c)
    if eps <= 0:
        raise InvalidParameter("epsilon must be > 0 to split it")
    share = 1.0 / (1.0 + (2.0 * c) ** (2.0 / 3.0))
    eps1 = eps * Fraction(round(share * denominator), denominator)
    return eps1, eps - eps1


#: Largest cut-off accepted: the declared guarantee has c + 1 classes, each recorded in the
#: ledger row of every SVT round.
MAX_C = 10**5


def _check_c(c: Any) -> int:
    value = parse_positive_int(c, name="the cut-off c")
    if value > MAX_C:
        raise InvalidParameter(f"the cut-off c={value} is above the limit {MAX_C} (its guarantee "
                               f"would declare c + 1 classes, each recorded in the ledger)")
    return value


@dataclass(frozen=True)
class SVTParameters:
    """The data-independent parameters of Alg. 2 and the grid they run on."""

    epsilon1: Fraction
    epsilon2: Fraction
    c: int
    sensitivity: Fraction = Fraction(1)
    granularity: Fraction | None = None
    units: int = field(init=False)
    threshold_scale: Fraction = field(init=False)
    query_scale: Fraction = field(init=False)

    def __post_init__(self) -> None:
        eps1 = parse_positive(self.epsilon1, name="epsilon1")
        eps2 = parse_positive(self.epsilon2, name="epsilon2")
        c = _check_c(self.c)
        delta = parse_positive(self.sensitivity, name="sensitivity")
        g = delta / 1000 if self.granularity is None else parse_positive(self.granularity, name="granularity")
        m = math.ceil(delta / g)
        object.__setattr__(self, "epsilon1", eps1)
        object.__setattr__(self, "epsilon2", eps2)
        object.__setattr__(self, "c", c)
        object.__setattr__(self, "sensitivity", delta)
        object.__setattr__(self, "granularity", g)
        object.__setattr__(self, "units", m)
        #: discrete Laplace scale of ρ and of each ν_i, in grid units
        object.__setattr__(self, "threshold_scale", Fraction(m) / eps1)
        object.__setattr__(self, "query_scale", Fraction(2 * c * m) / eps2)

    def cost(self, tops: int) -> Fraction:
        """ℰ(S_{c'}) = ε1 + (c'/c)·ε2 (Lemma 8)."""
        if not 0 <= tops <= self.c:
            raise InvalidParameter(f"c' must be in 0..{self.c}, got {tops}")
        return self.epsilon1 + Fraction(tops, self.c) * self.epsilon2

    def guarantee(self) -> ODP:
        """(𝒫, ℰ, 0)-ODP of Lemma 8, classes ``0..c`` (number of ⊤ answers)."""
        return ODP(count_top, {k: self.cost(k) for k in range(self.c + 1)}, 0)

    def to_grid(self, value: Any, *, name: str = "query value") -> int:
        """``⌊v/g + 1/2⌋``: a query value or threshold in grid units."""
        return math.floor(exact_value(value, name=name) / self.granularity + Fraction(1, 2))

    def noise_parameters(self) -> tuple[float, float]:
        """``(r_ρ, r_ν) = (e^{−1/threshold_scale}, e^{−1/query_scale})``: the discrete Laplace
        parameters (``P(x) ∝ r^{|x|}``) of the threshold and query noise."""
        return (math.exp(-1 / float(self.threshold_scale)), math.exp(-1 / float(self.query_scale)))

    def params(self) -> dict[str, Any]:
        return {"epsilon1": str(self.epsilon1), "epsilon2": str(self.epsilon2), "c": self.c,
                "sensitivity": str(self.sensitivity), "granularity": str(self.granularity)}


def _parameters(epsilon1, epsilon2, c, sensitivity, granularity) -> SVTParameters:
    return SVTParameters(epsilon1, epsilon2, c, sensitivity, granularity)


class SparseVectorMechanism(Mechanism):
    """Batch SVT (Alg. 2): answers ``queries`` in order against ``thresholds`` (one number for
    all, or one per query); the end of the list is the STOP.  The release is the tuple of answers
    (``True`` = ⊤), at most ``c`` of them ``True`` (the last answer is then ⊤: cut-off).

    Every query must have sensitivity at most ``sensitivity`` (as computed).  Declared guarantee:
    Lemma 8, (𝒫, ℰ, 0)-ODP with ``ℰ(S_{c'}) = ε1 + (c'/c)·ε2``."""

    name = "svt"

    def __init__(self, queries: Sequence[Callable[[Any], Any]], thresholds: Any, *,
                 epsilon1: Any, epsilon2: Any, c: int, sensitivity: Any = 1,
                 granularity: Any = None):
        self.svt = _parameters(epsilon1, epsilon2, c, sensitivity, granularity)
        self.queries = list(queries)
        if not self.queries or not all(callable(q) for q in self.queries):
            raise InvalidParameter("queries must be a non-empty list of functions data -> number")
        if isinstance(thresholds, (list, tuple)):
            if len(thresholds) != len(self.queries):
                raise InvalidParameter(
                    f"give one threshold or one per query ({len(self.queries)}), "
                    f"got {len(thresholds)}")
            raw = list(thresholds)
        else:
            raw = [thresholds] * len(self.queries)
        self.thresholds = [exact_value(t, name="threshold") for t in raw]
        self._threshold_units = [self.svt.to_grid(t, name="threshold") for t in self.thresholds]
        self._guarantee = self.svt.guarantee()

    @property
    def guarantee(self) -> ODP:
        return self._guarantee

    def params(self) -> dict[str, Any]:
        out = self.svt.params()
        out["queries"] = len(self.queries)
        distinct = sorted(set(self.thresholds))
        out["thresholds"] = ([str(t) for t in self.thresholds] if len(distinct) > 1
                             else str(distinct[0]))
        return out

    def release(self, data: Any, rng: RandomSource) -> tuple[bool, ...]:
        rho = discrete_laplace(self.svt.threshold_scale, rng)
        answers: list[bool] = []
        tops = 0
        for query, t in zip(self.queries, self._threshold_units):
            if tops >= self.svt.c:
                break
            n = self.svt.to_grid(query(data))
            top = n + discrete_laplace(self.svt.query_scale, rng) >= t + rho
            answers.append(top)
            tops += top
        return tuple(answers)


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
    """

    def __init__(self, accountant: Any, data: Any, *, epsilon1: Any, epsilon2: Any, c: int,
                 sensitivity: Any = 1, granularity: Any = None, name: str = "svt"):
        self.svt = _parameters(epsilon1, epsilon2, c, sensitivity, granularity)
        self._data = data
        self._rng = accountant.rng
        self.answers: list[bool] = []
        self.thresholds: list[Fraction] = []
        self.reservation = accountant.reserve(
            self.svt.guarantee(), mechanism=name, params={**self.svt.params(), "session": True},
            interactive=True)
        self._rho = discrete_laplace(self.svt.threshold_scale, self._rng)
        self.record = self.reservation.record

    @property
    def count(self) -> int:
        """``c'``: ⊤ answers so far."""
        return count_top(self.answers)

    @property
    def open(self) -> bool:
        return self.reservation.open

    def ask(self, query: Callable[[Any], Any], threshold: Any) -> bool:
        """Answer one query: ``True`` (⊤) iff ``q(x) + ν ≥ T + ρ`` on the grid.  The ``c``-th
        ⊤ answer ends the session (settled at ``c' = c``)."""
        if not self.open:
            why = (f"it reached its cut-off of c={self.svt.c} ⊤ answers"
                   if self.count >= self.svt.c else "STOP was sent")
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
        top = n + discrete_laplace(self.svt.query_scale, self._rng) >= t + self._rho
        self.answers.append(top)
        self.thresholds.append(t_value)
        if self.count >= self.svt.c:
            self._settle()
        return top

    def stop(self) -> Any:
        """Send STOP: settle the round at class ``c'`` and return its ledger record."""
        if not self.open:
            return self.record
        return self._settle()

    def _settle(self) -> Any:
        self.record = self.reservation.settle_class(self.count)
        return self.record

    def __enter__(self) -> "SVTSession":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self.open:
            if exc_type is None:
                self.stop()
            else:
                self.reservation.abort()


# --------------------------------------------------------------------------------------------
# Exact output distribution (for audits and tests)
# --------------------------------------------------------------------------------------------


def _poly_mul_linear(poly: list, const: Any, coef: Any) -> list:
    """``poly(w)·(const + coef·w)`` for coefficient lists indexed by the power of w."""
    out = [const * p for p in poly] + [0 * coef]
    for j, p in enumerate(poly):
        out[j + 1] = out[j + 1] + coef * p
    return out


def answer_probability(answers: Sequence[bool], gaps: Sequence[int], r_threshold: Any,
                       r_query: Any) -> Any:
    """Exact ``P(the SVT answers are exactly `answers`)`` given the grid gaps
    ``d_i = t_i − n_i(x)`` of the queries asked, for discrete Laplace noise with parameters
    ``r_threshold`` (ρ) and ``r_query`` (each ν_i) — ``P(x) ∝ r^{|x|}``.

    ``= Σ_{z∈ℤ} P(ρ=z) Π_i P(answer_i | ρ=z)`` where ⊤ has probability ``P(ν ≥ d_i + z)``.
    The sum over the finitely many ``z`` between the breakpoints ``{0} ∪ {1 − d_i}`` is done
    term by term; beyond them every factor is affine in ``r_query^{±z}``, so each tail is a
    finite sum of geometric series, summed in closed form.  With rational inputs the result is
    an exact ``Fraction``.  (STOP and cut-off do not enter: they depend on the answers only.)
    """
    if len(answers) != len(gaps):
        raise InvalidParameter("answers and gaps must have the same length")
    r1, r2 = r_threshold, r_query
    c1 = (1 - r1) / (1 + r1)
    breaks = [0] + [1 - int(d) for d in gaps]
    lo, hi = min(breaks), max(breaks)
    total = 0 * r1
    for z in range(lo, hi + 1):
        term = c1 * r1 ** abs(z)
        for a, d in zip(answers, gaps):
            g = discrete_laplace_tail(d + z, r2)
            term = term * (g if a else 1 - g)
        total = total + term
    # right tail, z ≥ hi + 1: P(ν ≥ d+z) = a·w with w = r2^z, a = r2^d/(1+r2)
    poly = [1 + 0 * r1]
    for a, d in zip(answers, gaps):
        coef = r2**d / (1 + r2)
        poly = _poly_mul_linear(poly, 0, coef) if a else _poly_mul_linear(poly, 1, -coef)
    start = hi + 1
    for j, cj in enumerate(poly):
        x = r1 * r2**j
        total = total + cj * c1 * x**start / (1 - x)
    # left tail, z ≤ lo − 1, u = −z: P(ν ≥ d+z) = 1 − b·v with v = r2^u, b = r2^{1−d}/(1+r2)
    poly = [1 + 0 * r1]
    for a, d in zip(answers, gaps):
        coef = r2 ** (1 - d) / (1 + r2)
        poly = _poly_mul_linear(poly, 1, -coef) if a else _poly_mul_linear(poly, 0, coef)
    start = 1 - lo
    for j, cj in enumerate(poly):
        x = r1 * r2**j
        total = total + cj * c1 * x**start / (1 - x)
    return total


def adaptive_output_distribution(strategy: Callable[[tuple], tuple[int, int] | None], c: int,
                                 r_threshold: Any, r_query: Any) -> dict[tuple, Any]:
    """Exact output distribution of Alg. 2 against an adaptive analyst.

    ``strategy(history)`` returns the next query as ``(n, t)`` — its value and threshold in
    grid units on the database at hand — or ``None`` for STOP; ``history`` is the tuple of
    answers so far.  The session also ends after ``c`` ⊤ answers.  Returns
    ``{answers: probability}`` over all possible answer tuples."""
    c = _check_c(c)
    out: dict[tuple, Any] = {}

    def walk(history: tuple, gaps: tuple) -> None:
        nxt = None if count_top(history) >= c else strategy(history)
        if nxt is None:
            out[history] = answer_probability(history, gaps, r_threshold, r_query)
            return
        n, t = nxt
        for a in (True, False):
            walk(history + (a,), gaps + (int(t) - int(n),))

    walk((), ())
    return out


def output_distribution(values: Sequence[int], thresholds: Sequence[int] | int, c: int,
                        r_threshold: Any, r_query: Any) -> dict[tuple, Any]:
    """Exact output distribution of the batch mechanism for query values ``values`` and
    thresholds (grid units); see :func:`adaptive_output_distribution`."""
    values = [int(v) for v in values]
    ts = ([int(thresholds)] * len(values) if isinstance(thresholds, int)
          else [int(t) for t in thresholds])

    def strategy(history: tuple):
        i = len(history)
        return (values[i], ts[i]) if i < len(values) else None

    return adaptive_output_distribution(strategy, c, r_threshold, r_query)


# --------------------------------------------------------------------------------------------
# Application (Sec. 4.1): release the large entries of a sparse vector
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
    values: dict[int, Fraction]
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


def sparse_vector_release(accountant: Any, data: Any, entries: Sequence[Callable[[Any], Any]],
                          threshold: Any, *, c: int, epsilon1: Any, epsilon2: Any,
                          epsilon3: Any, sensitivity: Any = 1, granularity: Any = None,
                          names: Sequence[str] | None = None) -> SparseVectorRelease:
    """Sec. 4.1: find the entries ``f_i(x)`` with ``|f_i(x)|`` above ``threshold`` with SVT
    (budget ε1 + ε2, cut-off ``c``), then release each of the ``c'`` selected entries with the
    Laplace mechanism at ``(ε3 + (c − c')/c·ε2)/c'`` — the budget left by Lemma 8's a-posteriori
    charge plus ε3, split over the entries actually selected.

    Each ``f_i`` must have sensitivity ``sensitivity``; ``names`` (one per entry) label the
    Laplace rounds in the ledger.  Every step is an accountant round (the SVT round is charged
    ε1 + (c'/c)·ε2).  See :mod:`odp.mechanisms.pipeline`:

    * every parameter of both stages (ε's, ``c``, threshold, sensitivity, granularity, one
      function and one name per entry) is validated, and the mechanisms are built, before the
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

    def magnitude(f: Callable) -> Callable[[Any], Fraction]:
        def query(d: Any) -> Fraction:
            return abs(exact_value(f(d)))
        query.__name__ = f"abs({query_name(f)})"
        return query

    def laplace(i: int, epsilon: Fraction) -> LaplaceMechanism:
        mech = LaplaceMechanism(entries[i], epsilon=epsilon, sensitivity=sensitivity,
                                granularity=granularity)
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
