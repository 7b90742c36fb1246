"""The exact output distribution of Alg. 2 (for audits and tests): :func:`answer_probability`
sums ``P(ρ = z) Π_i P(answer_i | z)`` over all of ℤ in closed form (the two infinite tails are
geometric series), so with rational noise parameters every probability is an exact rational
and :mod:`odp.exact` decides Lemma 8's ODP inequality exactly (``tests/test_svt.py``).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ...errors import InvalidParameter
from ...samplers import discrete_laplace_tail
from .mechanism import _check_c, count_top

__all__ = ["answer_probability", "adaptive_output_distribution", "output_distribution"]


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
                       r_query: Any) -> Any:  # Any: Fraction, float or mpf, as given
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
                                 r_threshold: Any, r_query: Any, *,
                                 max_queries: int | None = None) -> dict[tuple, Any]:
    """Exact output distribution of Alg. 2 against an adaptive analyst.

    ``strategy(history)`` returns the next query as ``(n, t)`` — its value and threshold in
    grid units on the database at hand — or ``None`` for STOP; ``history`` is the tuple of
    answers so far.  The session also ends after ``c`` ⊤ answers, and after ``max_queries``
    answers (an :class:`~odp.mechanisms.svt.SVTSession`'s declared maximum; ``None``: only
    the strategy's STOP ends it).  Returns ``{answers: probability}`` over all possible answer
    tuples."""
    c = _check_c(c)
    out: dict[tuple, Any] = {}

    def walk(history: tuple, gaps: tuple) -> None:
        ended = count_top(history) >= c or (max_queries is not None
                                             and len(history) >= max_queries)
        nxt = None if ended else strategy(history)
        if nxt is None:
            out[history] = answer_probability(history, gaps, r_threshold, r_query)
            return
        n, t = nxt
        for a in (True, False):
            walk(history + (a,), gaps + (int(t) - int(n),))

    walk((), ())
    return out


def output_distribution(values: Sequence[int], thresholds: Sequence[int] | int, *, c: int,
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
