"""Rényi DP of the Poisson-subsampled **discrete** Gaussian step of DP-SGD on an integer grid,
and the general Poisson-subsampling bound of Zhu & Wang for any base RDP curve.

The step (:class:`odp.mechanisms.dpsgd.DPSGD`): every record is kept independently with
probability ``q``; each kept record contributes an integer vector ``v ∈ ℤ^p`` with
``‖v‖₂² ≤ K`` (verified exactly, in integers); the contributions are summed and independent
discrete Gaussian noise ``N_ℤ(0, σ_u²)`` (:func:`odp.samplers.discrete_gaussian`) is added to each
coordinate, with ``σ_u² = σ²·K`` (``σ`` the noise multiplier).  Neighbouring databases differ by
adding or removing one record.

**Reduction to one pair.**  Fix the released history (so the model and every other record's
vector) and let ``x' = x ∪ {z}``.  Write ``μ_s`` for the law of ``s + Y``, ``Y`` the noise.
Then ``M(x) = E_B[μ_{S_B}]`` and ``M(x') = E_B[(1−q)μ_{S_B} + q·μ_{S_B+v}]`` with ``B`` the Poisson
sample of ``x``, ``S_B`` its sum and ``v`` the vector of ``z``.  ``(P, Q) ↦ Σ P^α Q^{1−α}`` is
jointly convex for α > 1, and ``μ_{s}`` is a shift, so in both directions the Rényi divergence of
order α is at most that of the single pair ``P = (1−q)μ_0 + q·μ_v`` and ``Q = μ_0``
(``μ_0 = N_ℤ(0, σ_u²)^{⊗p}``).

**Direction D_α(P‖Q), integer α ≥ 2 — exact.**  With ``L = μ_v/μ_0``,
``e^{(α−1)D_α(P‖Q)} = E_Q[((1−q) + qL)^α] = Σ_{k=0}^{α} C(α,k)(1−q)^{α−k} q^k E_Q[L^k]`` and,
coordinate by coordinate, ``E_Q[L^k] = Σ_z N(z)^{1−k} N(z − v_j)^k = e^{(k²−k)v_j²/(2σ_u²)}
·Σ_z N(z − k v_j)``: the last sum is the normaliser of the discrete Gaussian, unchanged by the
*integer* shift ``k·v_j``.  So ``E_Q[L^k] = e^{(k²−k)‖v‖²/(2σ_u²)}`` exactly, which increases with
``‖v‖²``; at ``‖v‖² = K`` it is ``e^{(k²−k)/(2σ²)}``.  Hence

    e^{(α−1)D_α(P‖Q)} ≤ A_α := Σ_{k=0}^{α} C(α,k) (1−q)^{α−k} q^k e^{(k²−k)/(2σ²)},

which is *the same number* as the continuous sampled Gaussian's ``A_α`` of Mironov, Talwar,
Zhang 2019 (Sec. 3.3.1) at noise multiplier σ — evaluated rigorously by
:func:`odp.rdp.subsampled_gaussian_rdp` (outward-rounded intervals).  Only integer orders are
used: for fractional α the discrete sum has no such closed form.

**Direction D_α(Q‖P) — dominated (a symmetric-pair lemma).**  The reflection ``T(y) = v − y``
maps ``μ_0`` to ``μ_v`` and back (the noise is symmetric), so the law of ``L`` under ``Q`` is that
of ``1/L`` under ``μ_v``: ``E_Q[F(L)] = E_Q[L·F(1/L)]`` for every ``F ≥ 0``.  With
``f(ℓ) = (1−q+qℓ)^α`` and ``g(ℓ) = (1−q+qℓ)^{1−α}``, ``e^{(α−1)D_α(P‖Q)} = E_Q[f(L)]`` and
``e^{(α−1)D_α(Q‖P)} = E_Q[g(L)]``; moving the event ``{L < 1}`` onto ``{L > 1}`` with the identity,

    E_Q[f(L)] − E_Q[g(L)] = E_Q[1{L>1}·h(L)],   h(ℓ) = f(ℓ) + ℓf(1/ℓ) − g(ℓ) − ℓg(1/ℓ).

For ``ℓ > 1`` put ``t = q(ℓ−1)`` and ``φ(x) = x^α − x^{1−α}``: ``h(ℓ) = φ(1+t) − t·ψ(s)/s`` with
``ψ(s) = (1−s)^{1−α} − (1−s)^α`` and ``s = t/ℓ = qt/(q+t)``.  ``ψ`` is convex on ``[0, 1)``
(``ψ'' = α(α−1)[(1−s)^{−α−1} − (1−s)^{α−2}] ≥ 0``) with ``ψ(0) = 0``, so ``ψ(s)/s`` does not
decrease in ``s``, and ``s`` increases with ``q``: for fixed ``t`` the subtracted term is largest
at ``q = 1``, where ``h = 0`` identically (``f(ℓ) = ℓ^α`` etc.).  So ``h ≥ 0`` and
``D_α(Q‖P) ≤ D_α(P‖Q)`` for every real α > 1 and every symmetric pair.  (The same domination is
stated for the continuous Gaussian by MTZ 2019, Sec. 3; the argument above uses only the
symmetry.)  ``tests/test_dpsgd_rdp.py`` checks both directions against an independent mpmath
summation of the discrete pair, and ``h ≥ 0`` on a grid.

**Result.**  One step is ``(α, ln(A_α)/(α−1))``-RDP for every integer α ≥ 2
(:func:`subsampled_discrete_gaussian_rdp`); T adaptive steps add (Mironov 2017, Prop. 1).  With
``q = 1`` this is ``α/(2σ²)``: the multivariate discrete Gaussian with ``Σ_j Δ_j²/σ_u² ≤ 1/σ²`` is
``1/(2σ²)``-zCDP — Canonne, Kamath, Steinke 2020 (arXiv:2004.00010), Thm. 14 (one draw per
coordinate; the τ terms of Kairouz, Liu, Steinke 2021, Thm. 1, bound *sums* of several discrete
Gaussians and are 0 here), from the one-dimensional CKS Prop. 5 (``D_α(N_ℤ(μ,σ²)‖N_ℤ(ν,σ²)) ≤
α(μ−ν)²/(2σ²)`` for integers μ, ν) and additivity over independent coordinates.

**The cited general bound** (:func:`zhu_wang_rdp`): Zhu & Wang, *Poisson Subsampled Rényi
Differential Privacy* (ICML 2019, PMLR 97), general upper bound for integer α ≥ 2 — for *any*
mechanism that is ``(ℓ, ε(ℓ))``-RDP for ``ℓ = 2 … α``, its Poisson-subsampled version (rate γ,
add/remove neighbours) is ``(α, ε'(α))``-RDP with

    ε'(α) ≤ 1/(α−1) · ln( (1−γ)^{α−1}(αγ − γ + 1) + C(α,2) γ² (1−γ)^{α−2} e^{ε(2)}
                           + 3 Σ_{ℓ=3}^{α} C(α,ℓ) (1−γ)^{α−ℓ} γ^ℓ e^{(ℓ−1)ε(ℓ)} ).

(It is Thm. 5 of the PMLR version in the numbering of Kairouz–Liu–Steinke's accounting code,
``distributed_dp/accounting_utils.py``; the issue calls it Thm. 6.)  Applied to the discrete
Gaussian's ``ε(ℓ) = ℓ/(2σ²)`` it differs from ``A_α`` only by the factor 3 on the terms ℓ ≥ 3,
so it is never smaller; it is provided for comparison and for base mechanisms given only by an
RDP curve, and evaluated rigorously (outward-rounded decimal intervals, result rounded up).
"""

from __future__ import annotations

import functools
import math
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable, Iterable

from . import conversions as cv
from .budget import parse_epsilon, to_fraction
from .errors import InvalidParameter, budget_error_as
from .floats import round_up_significant
from .guarantees import RDP
from .neighbours import Neighbours
from .intervals import Arith, DecimalInterval
from .rdp import (MAX_ORDER, check_rate, check_sigma, check_steps, parse_orders,
                  subsampled_gaussian_rdp)

__all__ = [
    "INTEGER_ORDERS",
    "check_integer_order",
    "subsampled_discrete_gaussian_rdp",
    "subsampled_discrete_gaussian_curve",
    "subsampled_discrete_gaussian_epsilon",
    "discrete_gaussian_rdp",
    "zhu_wang_rdp",
]

#: The integer Rényi orders used for the discrete step: 2 … 64, then 80 … 256.
INTEGER_ORDERS: tuple[int, ...] = tuple(range(2, 65)) + (80, 96, 128, 192, 256)

#: Significant decimal digits of the interval arithmetic of :func:`zhu_wang_rdp`.
DIGITS = 40

#: Significant digits kept when a result is rounded up.
_RESULT_DIGITS = 20


def check_integer_order(alpha: Any) -> int:
    """An integer Rényi order ``2 <= α <= MAX_ORDER`` (exactly; ``3.0``, ``"3"`` accepted)."""
    with budget_error_as(InvalidParameter):
        a = to_fraction(alpha, name="alpha (a Rényi order)", warn=False)
    if a.denominator != 1 or not 2 <= a <= MAX_ORDER:
        raise InvalidParameter(
            f"the subsampled discrete Gaussian is accounted at integer Rényi orders 2..{MAX_ORDER} "
            f"(its closed form holds there), got {alpha!r}")
    return int(a)


def subsampled_discrete_gaussian_rdp(q: Any, sigma: Any, alpha: Any, steps: Any = 1) -> Fraction:
    """An upper bound on the order-α RDP (integer α ≥ 2, add/remove neighbours) of ``steps``
    adaptive compositions of the Poisson-subsampled discrete Gaussian step (module docstring):
    ``T·ln(A_α)/(α−1)``, the exact integer-order value, rounded up (by
    :func:`odp.rdp.subsampled_gaussian_rdp`, which evaluates the same ``A_α``)."""
    a = check_integer_order(alpha)
    return subsampled_gaussian_rdp(check_rate(q), check_sigma(sigma), a, check_steps(steps))


def subsampled_discrete_gaussian_curve(q: Any, sigma: Any, steps: Any = 1, *,
                                       orders: Iterable[Any] = INTEGER_ORDERS) -> list[RDP]:
    """:func:`subsampled_discrete_gaussian_rdp` at every (integer) order, each value stating
    add/remove neighbours (``RDP.neighbours``)."""
    qq, s, t = check_rate(q), check_sigma(sigma), check_steps(steps)
    return [RDP(a, subsampled_discrete_gaussian_rdp(qq, s, a, t),
                neighbours=Neighbours.ADD_REMOVE) for a in _orders(orders)]


def subsampled_discrete_gaussian_epsilon(q: Any, sigma: Any, steps: Any, delta: Any, *,
                                         orders: Iterable[Any] = INTEGER_ORDERS
                                         ) -> tuple[Fraction, Fraction]:
    """``(ε, α)``: an upper bound on the ε at ``delta`` of ``steps`` subsampled discrete
    Gaussian steps (the best order of the conversion :func:`odp.conversions.best_rdp_to_dp`)."""
    return cv.best_rdp_to_dp(subsampled_discrete_gaussian_curve(q, sigma, steps, orders=orders),
                             delta)


def discrete_gaussian_rdp(sigma: Any) -> Callable[[int], Fraction]:
    """The RDP curve ``ℓ ↦ ℓ/(2σ²)`` of the (unsubsampled) multivariate discrete Gaussian step
    with ``σ_u² = σ²K`` and ``‖Δ‖² ≤ K`` (CKS 2020, Thm. 14 and Prop. 5; module docstring)."""
    s = check_sigma(sigma)
    return lambda ell: Fraction(ell) / (2 * s * s)


def _orders(orders: Iterable[Any]) -> tuple[int, ...]:
    return parse_orders(orders, check_integer_order, "integer Rényi orders >= 2")


# ----------------------------------------------------------------------- Zhu & Wang 2019


def zhu_wang_rdp(q: Any, base_rdp: Callable[[int], Any], alpha: Any) -> Fraction:
    """Zhu & Wang 2019's general upper bound (module docstring) on the order-α RDP (integer α ≥ 2)
    of the Poisson-subsampled version (rate ``q``) of a mechanism whose RDP at order ℓ is at most
    ``base_rdp(ℓ)`` (called with the ints 2 … α; exact numbers).  Rounded up; ``q = 1`` returns
    ``base_rdp(α)`` (no subsampling)."""
    qq = check_rate(q)
    a = check_integer_order(alpha)
    eps = {ell: _base_value(base_rdp, ell) for ell in range(2, a + 1)}
    if qq == 1:
        return eps[a]
    return _zhu_wang(qq, tuple(sorted(eps.items())), a)


def _base_value(base_rdp: Callable[[int], Any], ell: int) -> Fraction:
    with budget_error_as(InvalidParameter):
        return parse_epsilon(base_rdp(ell), name=f"the base RDP at order {ell}")


@functools.lru_cache(maxsize=4096)
def _zhu_wang(q: Fraction, eps: tuple[tuple[int, Fraction], ...], a: int) -> Fraction:
    ar = Arith.at(DIGITS)
    lq, l1q = ar.ln(ar.of(q)), ar.ln(ar.of(1 - q))
    values = dict(eps)
    # ln of each (positive) term: ln(coefficient) + ℓ ln q + (α−ℓ) ln(1−q) + (ℓ−1) ε(ℓ)
    logs: list[DecimalInterval] = [ar.add(ar.scale(l1q, a - 1), ar.ln(ar.of(a * q - q + 1)))]
    for ell in range(2, a + 1):
        coefficient = math.comb(a, ell) * (1 if ell == 2 else 3)
        rest = ar.add(ar.add(ar.scale(lq, ell), ar.scale(l1q, a - ell)),
                      ar.of((ell - 1) * values[ell]))
        logs.append(ar.add(ar.ln(ar.of(coefficient)), rest))
    shift = max(t.hi for t in logs)
    m = DecimalInterval(shift, shift)
    total = DecimalInterval(Decimal(0), Decimal(0))
    for t in logs:
        total = ar.add(total, ar.exp(ar.sub(t, m)))
    log_sum = ar.add(m, ar.ln(total))
    return round_up_significant(max(Fraction(log_sum.hi), Fraction(0)) / (a - 1),
                                _RESULT_DIGITS)
