"""Validated inputs of the early-stopping problem (Hartmann et al. 2022, Sec. 5, Alg. 3).

Two parametrisations are accepted, both exact:

* :class:`EpsProblem` -- the ordinary one: per-step ``(epsilon_k, delta_k)`` and per-stop costs
  ``E(P_i)``, all parsed exactly with :func:`odp.budget.parse_epsilon` /
  :func:`odp.budget.parse_delta` ("0.1", "1e-6", "1/3", ints, Fractions, floats as their exact
  binary value).  ``e**epsilon`` is irrational, so results are rigorous rational *brackets*.
* :class:`ExpProblem` -- the exponential one: per-step ``(w_k, delta_k)`` with ``w_k = e**eps_k``
  and per-stop ``W_i = e**E(P_i)``, all exact rationals ``>= 1``.  Every probability of the
  randomized-response mechanisms of Lemma 12 is then rational and Thm. 15 / Eq. (4) have exact
  rational values.

``stops`` are the stopping points ``k_1 < k_2 < ... < k_n`` of Alg. 3 (positive integers); the
mechanism runs at most ``k_n`` steps, so exactly ``k_n`` per-step pairs must be given, and exactly
``n`` costs (one per stopping point; the last stopping point is where the mechanism always stops).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..budget import parse_delta, parse_epsilon, to_fraction
from ..stops import parse_stops
from ..errors import InvalidParameter

__all__ = ["EpsProblem", "ExpProblem", "parse_stops"]


def _pairs(steps: Any, k_n: int, what: str) -> list[tuple[Any, Any]]:
    try:
        pairs = [tuple(p) for p in steps]
    except TypeError:
        raise InvalidParameter(f"steps must be a sequence of ({what}, delta) pairs") from None
    if len(pairs) != k_n:
        raise InvalidParameter(
            f"expected {k_n} per-step ({what}, delta) pairs (the last stopping point is {k_n}), "
            f"got {len(pairs)}"
        )
    for p in pairs:
        if len(p) != 2:
            raise InvalidParameter(f"each step must be a ({what}, delta) pair, got {p!r}")
    return pairs


def _costs(costs: Any, n: int) -> list[Any]:
    if isinstance(costs, (str, bytes)) or not hasattr(costs, "__iter__"):
        raise InvalidParameter(f"costs must be a sequence with one value per stop, got {costs!r}")
    costs = list(costs)
    if len(costs) != n:
        raise InvalidParameter(f"expected {n} costs (one per stopping point), got {len(costs)}")
    return costs


def _parse_each(values: Any, parse: Any, name: str) -> tuple[Fraction, ...]:
    """``parse(v, name=f"{name}_{k}")`` for every value, parsing each distinct raw value once
    (long homogeneous runs repeat the same value thousands of times).  Values are keyed by
    type and value, so ``1``, ``1.0``, ``True`` and ``"1"`` are each parsed on their own."""
    seen: dict[Any, Fraction] = {}
    out: list[Fraction] = []
    last: Any = object()
    for k, v in enumerate(values):
        if v is last:  # the same object as the previous value (repeated steps): same result
            out.append(out[-1])
            continue
        last = v
        try:
            key = (type(v), v)
            hit = seen.get(key)
        except TypeError:  # unhashable: parse it (the parser reports what is wrong)
            key, hit = None, None
        if hit is None:
            hit = parse(v, name=f"{name}_{k + 1}")
            if key is not None:
                seen[key] = hit
        out.append(hit)
    return tuple(out)


def _same(values: tuple[Fraction, ...]) -> bool:
    first = values[0]
    return all(v is first or v == first for v in values)


@dataclass(frozen=True)
class EpsProblem:
    """Stopping points, per-step ``(epsilon_k, delta_k)`` and per-stop costs ``E(P_i)``."""

    stops: tuple[int, ...]
    epsilons: tuple[Fraction, ...]
    deltas: tuple[Fraction, ...]
    costs: tuple[Fraction, ...]

    @classmethod
    def parse(cls, stops: Any, steps: Any, costs: Any) -> EpsProblem:
        st = parse_stops(stops)
        pairs = _pairs(steps, st[-1], "epsilon")
        eps = _parse_each((e for e, _ in pairs), parse_epsilon, "epsilon")
        dels = _parse_each((d for _, d in pairs), parse_delta, "delta")
        cs = tuple(
            parse_epsilon(c, name=f"cost E(P_{i + 1})")
            for i, c in enumerate(_costs(costs, len(st)))
        )
        return cls(st, eps, dels, cs)

    @property
    def k_n(self) -> int:
        return self.stops[-1]

    @property
    def homogeneous(self) -> bool:
        return _same(self.epsilons) and _same(self.deltas)


@dataclass(frozen=True)
class ExpProblem:
    """Stopping points, per-step ``(w_k, delta_k)`` with ``w_k = e**eps_k`` and per-stop
    ``W_i = e**E(P_i)``: every number an exact rational (``w_k >= 1``, ``W_i >= 1``)."""

    stops: tuple[int, ...]
    ws: tuple[Fraction, ...]
    deltas: tuple[Fraction, ...]
    Ws: tuple[Fraction, ...]

    @classmethod
    def parse(cls, stops: Any, steps: Any, Ws: Any) -> ExpProblem:
        st = parse_stops(stops)
        pairs = _pairs(steps, st[-1], "w")
        ws = []
        for k, (w, _) in enumerate(pairs):
            wf = to_fraction(w, name=f"w_{k + 1}")
            if wf < 1:
                raise InvalidParameter(f"w_{k + 1} = e**epsilon_{k + 1} must be >= 1, got {wf}")
            ws.append(wf)
        dels = tuple(parse_delta(d, name=f"delta_{k + 1}") for k, (_, d) in enumerate(pairs))
        Wf = []
        for i, W in enumerate(_costs(Ws, len(st))):
            x = to_fraction(W, name=f"W_{i + 1}")
            if x < 1:
                raise InvalidParameter(f"W_{i + 1} = e**E(P_{i + 1}) must be >= 1, got {x}")
            Wf.append(x)
        return cls(st, tuple(ws), dels, tuple(Wf))

    @property
    def k_n(self) -> int:
        return self.stops[-1]

    def step_probabilities(self, k: int) -> tuple[Fraction, Fraction, Fraction]:
        """``(Pr0(0), Pr0(1), Pr0(2))`` of step ``k`` (1-based) of Lemma 12's mechanism; under
        ``b = 1`` the roles of 1/2 and of 0/3 swap."""
        w, d = self.ws[k - 1], self.deltas[k - 1]
        return d, (1 - d) * w / (1 + w), (1 - d) / (1 + w)
