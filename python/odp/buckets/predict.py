"""Predict the grid step a composition needs for a target width, from one run's buckets.

:func:`odp.buckets.tighten.tighten` uses this to choose its first window (``buckets="auto"``)
instead of trying windows until one is narrow enough.  A prediction only chooses *which*
rigorous computation to run: whatever it predicts, the interval returned is the accountant's
(sound for every grid); a miss costs another attempt.

**The model.**  The interval's width comes mostly from rounding one run's privacy loss onto the
grid ``i·h`` (Meiser & Mohammadi 2018, §3–4), and that rounding is repeated in every one of the
``k`` runs.  Write ``u = e^{−ℓ}``: the split upper pair (:mod:`odp.buckets.state`) keeps each
bucket's A- and B-mass, i.e. the A-mean of ``u``, and moves the mass to the bucket's two ends —
a mean-preserving spread — while one atom per bucket at ``ℓ̄ = ln(a/b)`` (its exact masses) is a
mean-preserving contraction.  For ``θ > 0``, ``e^{θℓ} = u^{−θ}`` is convex in ``u``, so the
cumulant generating functions ``K(θ) = ln E_A[e^{θℓ}]`` of the three pairs are ordered
``K_mid ≤ K_true ≤ K_up``, and their gap is second order in ``h``.  Cumulants add under
composition, and the Chernoff estimate ``ε ≈ (Σ_i k_i K_i(θ*) − ln δ)/θ*`` moves by
``Σ_i k_i ΔK_i(θ*)/θ*`` when each ``K_i`` moves by ``ΔK_i``; so the predicted width is

    W(h) = Σ_i k_i (K_up,i(θ*) − K_mid,i(θ*)) / θ*,   W ∝ h²,

at the Chernoff-optimal ``θ*`` for the query's δ, in the direction with the larger Chernoff ε
(the one that decides the answer).  For q = 0.01, σ = 1.1, k = 10⁴, δ = 1e-5 it predicts
1.30e-3 at h = 2⁻¹¹ and 3.25e-4 at 2⁻¹² where the accountant's intervals are 1.37e-3 and
3.5e-4 wide (the coarsenings of later, wider states add the rest).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .mechanisms import PLDMechanism
from .state import from_cells

__all__ = ["Prediction", "predict_step", "THETAS", "cgf", "cell_mean_losses", "chernoff_epsilon",
           "chernoff_log_delta"]

#: The tilts θ searched for the Chernoff estimate (as :data:`odp.buckets.accountant.TILT_GRID`).
THETAS = tuple(2.0 ** (k / 8) for k in range(-64, 57))

#: A pilot grid holds one run's loss range in about this many steps.
PILOT_STEPS = 256


@dataclass(frozen=True)
class Prediction:
    """The predicted width ``W(h) = coefficient · h²`` of the direction ``reverse`` (the one
    with the larger Chernoff estimate ``epsilon``, at tilt ``theta``)."""

    coefficient: float
    reverse: bool
    theta: float
    epsilon: float

    def width(self, h: float) -> float:
        return self.coefficient * h * h

    def step_for(self, width: float) -> float:
        """The grid step whose predicted width is ``width``."""
        return math.sqrt(width / self.coefficient) if self.coefficient > 0 else math.inf


def cgf(masses: np.ndarray, losses: np.ndarray, thetas: np.ndarray) -> np.ndarray:
    """``ln Σ_j m_j e^{θ ℓ_j}`` for every θ of ``thetas`` at once (masses > 0 only)."""
    keep = masses > 0
    if not keep.any():
        return np.full(thetas.size, -np.inf)
    x = thetas[:, None] * losses[keep][None, :]
    top = np.max(x, axis=1)
    return top + np.log((masses[keep][None, :] * np.exp(x - top[:, None])).sum(axis=1))


def cell_mean_losses(c: Any) -> tuple[np.ndarray, np.ndarray]:
    """One run's buckets as atoms at their mean losses ``ln(a/B) = ih − ln(1 + excess/a)`` (the
    bucket's exact masses at one point: a contraction of the pair, second order in ``h`` even
    on a coarse grid, where bucket tops are first order) and their A-masses."""
    a = np.maximum(c.a, 0.0)
    excess = c.excess if c.excess is not None else c.bhat - c.a
    tops = (c.first + np.arange(a.size)) * c.h
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = tops - np.log1p(np.where(a > 0, np.maximum(excess, 0.0) / a, 0.0))
    loss = np.concatenate([mean, tops])
    mass = np.concatenate([a, np.maximum(c.atom, 0.0)])
    keep = (mass >= 1e-290) & np.isfinite(loss)  # subnormal masses would only slow the sums
    return loss[keep], mass[keep]


def _chernoff_terms(items: Sequence[tuple[np.ndarray, np.ndarray, int]]
                    ) -> tuple[np.ndarray, np.ndarray] | None:
    """``(θ, Σ count·ln E[e^{θL}])`` over :data:`THETAS` (``θ·max|L| <= 600``), for one run's
    losses and masses per mechanism; ``None`` when nothing is usable."""
    items = [(loss, mass, n) for loss, mass, n in items if loss.size]
    if not items:
        return None
    top = max(float(np.max(np.abs(loss))) for loss, _, _ in items)
    thetas = np.array([t for t in THETAS if t * top <= 600])
    if thetas.size == 0:
        return None
    total = np.zeros(thetas.size)
    for loss, mass, n in items:
        total += n * cgf(mass, loss, thetas)
    return thetas, total


def chernoff_epsilon(items: Sequence[tuple[np.ndarray, np.ndarray, int]], delta: float,
                     ) -> tuple[float, float]:
    """``(ε, θ*)``: the Chernoff estimate ``min_θ (Σ count·ln E[e^{θL}] − ln δ)/θ`` of ε(δ)
    and its θ (an estimate for choosing, never a bound reported; ``-inf`` when none)."""
    terms = _chernoff_terms(items)
    if terms is None:
        return -math.inf, 0.0
    thetas, total = terms
    eps = (total - math.log(delta)) / thetas
    if not np.isfinite(eps).any():
        return -math.inf, 0.0
    i = int(np.nanargmin(np.where(np.isfinite(eps), eps, np.nan)))
    return float(eps[i]), float(thetas[i])


def chernoff_log_delta(items: Sequence[tuple[np.ndarray, np.ndarray, int]], eps: float) -> float:
    """The Chernoff estimate ``min_θ (Σ count·ln E[e^{θL}] − θε)`` of ln δ(ε)."""
    terms = _chernoff_terms(items)
    if terms is None:
        return -math.inf
    thetas, total = terms
    return float(np.min(total - thetas * eps))


def _pilot_step(mech: PLDMechanism, reverse: bool, tail: float) -> float | None:
    lo, hi = mech.loss_range(reverse, tail)
    if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
        return None
    return (hi - lo) / PILOT_STEPS


def predict_step(items: Sequence[tuple[PLDMechanism, int]], delta: float,
                 tail: float) -> Prediction | None:
    """The :class:`Prediction` for a composition of ``items`` (``(mechanism, count)``) queried
    at ``delta``; ``None`` when it cannot be made (a lattice mechanism, whose grid is fixed; no
    usable tilt).  The deciding direction and ``θ*`` come from the Chernoff estimate of the
    mean-loss pairs (:func:`cell_mean_losses`); ``K_up`` from that direction's split pair."""
    if not items or any(m.lattice() is not None for m, _ in items) or not 0 < delta < 1:
        return None
    asymmetric = any(not m.symmetric for m, _ in items)
    best: tuple[float, float, bool, list[tuple[Any, bool, float, Any, int]]] | None = None
    for reverse in ((False, True) if asymmetric else (False,)):
        pilots = []
        for mech, count in items:
            rev = reverse and not mech.symmetric
            h = _pilot_step(mech, rev, tail)
            if h is None:
                return None
            lower = mech.cells(h, rev, tail, "lower")
            pilots.append((mech, rev, h, lower, count))
        eps, theta = chernoff_epsilon([(*cell_mean_losses(c), n) for *_, c, n in pilots], delta)
        if best is None or eps > best[0]:
            best = (eps, theta, reverse, pilots)
    if best is None:
        return None
    eps, theta, reverse, pilots = best
    if not (math.isfinite(eps) and theta > 0):
        return None
    at = np.array([theta])
    coefficient = 0.0
    for mech, rev, h, lower, count in pilots:
        st = from_cells(mech.cells(h, rev, tail, "upper"), "split")
        loss, mass = cell_mean_losses(lower)
        gap = max(float(cgf(st.pa, st.losses, at)[0] - cgf(mass, loss, at)[0]), 0.0)
        coefficient += count * gap / theta / (h * h)
    return Prediction(coefficient, reverse, theta, eps)
