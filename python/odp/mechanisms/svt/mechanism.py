"""Alg. 2 (Hartmann et al. 2022, Sec. 4.1) as a mechanism: its parameters and grid
(:class:`SVTParameters`), Lemma 8's declared guarantee, and the batch mechanism
:class:`SparseVectorMechanism` (one accountant round whose release is the answer vector).

See :mod:`odp.mechanisms.svt` for the mechanism, the discrete-noise argument and the audit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Sequence

from ...budget import parse_epsilon, parse_positive, parse_positive_int
from ...errors import InvalidParameter
from ...neighbours import Neighbours
from ...guarantees import ODP
from ...samplers import discrete_laplace
from ..base import Mechanism
from ..builtin import register, seal
from ..noise import exact_value
from ...types import RandomSource

__all__ = ["MAX_C", "SVTParameters", "SparseVectorMechanism", "count_top", "svt_split"]


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
        assert self.granularity is not None  # set by __post_init__
        return math.floor(exact_value(value, name=name) / self.granularity + Fraction(1, 2))

    def noise_parameters(self) -> tuple[float, float]:
        """``(r_ρ, r_ν) = (e^{−1/threshold_scale}, e^{−1/query_scale})``: the discrete Laplace
        parameters (``P(x) ∝ r^{|x|}``) of the threshold and query noise."""
        return (math.exp(-1 / float(self.threshold_scale)), math.exp(-1 / float(self.query_scale)))

    def params(self) -> dict[str, Any]:
        return {"epsilon1": str(self.epsilon1), "epsilon2": str(self.epsilon2), "c": self.c,
                "sensitivity": str(self.sensitivity), "granularity": str(self.granularity)}


def _parameters(*, epsilon1: Any, epsilon2: Any, c: Any, sensitivity: Any, granularity: Any
                ) -> SVTParameters:  # Any: user input, parsed by SVTParameters
    return SVTParameters(epsilon1, epsilon2, c, sensitivity, granularity)


class SparseVectorMechanism(Mechanism):
    """Batch SVT (Alg. 2): answers ``queries`` in order against ``thresholds`` (one number for
    all, or one per query); the end of the list is the STOP.  The release is the tuple of answers
    (``True`` = ⊤), at most ``c`` of them ``True`` (the last answer is then ⊤: cut-off).

    Every query must have sensitivity at most ``sensitivity`` (as computed).  Declared guarantee:
    Lemma 8, (𝒫, ℰ, 0)-ODP with ``ℰ(S_{c'}) = ε1 + (c'/c)·ε2``.  Output space: the answer
    tuples of length at most ``len(queries)`` — finite by construction (the noise ρ, ν_i is
    never released)."""

    neighbours = Neighbours.REPLACE_ONE  #: what its guarantee is stated for (odp.neighbours)

    name = "svt"

    def __init__(self, queries: Sequence[Callable[[Any], Any]], thresholds: Any, *,
                 epsilon1: Any, epsilon2: Any, c: int, sensitivity: Any = 1,
                 granularity: Any = None):
        self.svt = _parameters(epsilon1=epsilon1, epsilon2=epsilon2, c=c, sensitivity=sensitivity, granularity=granularity)
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
        seal(self, SparseVectorMechanism)

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


register(SparseVectorMechanism, "svt")  # odp.mechanisms.builtin
