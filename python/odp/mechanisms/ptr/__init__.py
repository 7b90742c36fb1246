"""Propose-Test-Release with ODP accounting (Hartmann et al. 2022, Sec. 4.2: Def. 9, Lemma 10).

* :class:`PTRFunction` — an (ε, δ)-PTR function ``T(x, s)`` (Def. 9).  As a mechanism it is
  (𝒫, ℰ, δ)-ODP with 𝒫 = {values, {⊥}}, ℰ(values) = 2ε, ℰ({⊥}) = ε (Sec. 4.2).
* :class:`IQRMechanism` — Dwork and Lei's ``M_IQR`` (STOC 2009, Sec. 3.1): two PTR functions
  that estimate the interquartile range on logarithmic bins, the second discretisation shifted
  by half a bin; the second runs only if the first returns ⊥.  Lemma 10: (𝒫, ℰ, δ)-ODP with
  ℰ(ℝ) = 3ε and ℰ({⊥}) = 2ε.
* :class:`ExponentialMedian` — an ε-DP median (exponential mechanism on a public grid).
* :func:`iqr_then_median` — the application of Sec. 4.2: a ⊥ from ``M_IQR`` is charged 2ε1
  instead of 3ε1, which leaves (ε1 + ε2, δ2) for the median.

Neighbouring databases here are lists of the same public size ``n`` that differ in one record
(replace-one), as in Dwork and Lei.

**The IQR PTR function** (one discretisation with offset ``o`` ∈ {0, 1/2}, base ``b`` > 1
rational, ``L`` sub-bins per bin).  Bins are ``B_k = [b^{k+o}, b^{k+1+o})`` on (0, ∞).  With
``x_(i)`` the order statistics (``x_(i) = −∞`` for i < 1, ``+∞`` for i > n) and the quartile
ranks ``l = ⌈n/4⌉``, ``h = ⌈3n/4⌉``, the IQR is ``x_(h) − x_(l)``.  Replacing t records moves
``x_(i)`` within ``[x_(i−t), x_(i+t)]``, so every database within t replacements has its IQR in
``I(t) = [x_(h−t) − x_(l+t), x_(h+t) − x_(l−t)]``.  The test statistic is
``A(x) = min {t ≥ 1 : I(t) ⊄ bin of IQR(x)}`` (``A = 1`` when the IQR is 0).  Then

* ``A`` is 1-Lipschitz (``I_{x'}(t) ⊆ I_x(t+1)`` for neighbours, and ``A = 1`` on both sides
  when their IQRs lie in different bins), and
* ``A(x) ≥ 2`` implies that every neighbour's IQR lies in the same bin as ``x``'s.

The function draws ``Z`` ~ discrete Laplace of scale 1/ε and passes iff ``A(x) + Z ≥ K + 1``,
with ``K ≥ 1`` the least integer such that ``P(Z ≥ K) = r^K/(1+r) ≤ δ'`` (``r = e^{−ε}``, taken
at its rigorous upper bracket).  On a pass it releases the sub-bin index
``ĵ = ⌊L·(log_b IQR − o)⌋ + W``, ``W`` ~ discrete Laplace of scale ``(L−1)/ε`` (no noise for
L = 1).  Def. 9 holds with G(T, x) = {s : A(x) ≥ 2}: (2) by the Lipschitz property, (4) since
``A ≥ 1`` always and a bad ``s`` has ``A = 1``, (3) because a good ``s`` fixes the bin for all
neighbours, so the unnoised index moves by at most L − 1 (test e^ε × release e^ε).

``M_IQR(ε, δ)`` uses two such functions, each with δ' = δ/2; the proof of Lemma 10 plus the
case analysis of Dwork and Lei (a bad discretisation leaks at most δ/2 each) gives
(3ε, δ) on values and (2ε, 0) on ⊥, hence δ in total (Lemma 6).
The package is split by job: :mod:`~odp.mechanisms.ptr.mechanism` (the PTR functions and
mechanisms), :mod:`~odp.mechanisms.ptr.audit` (the exact output distribution) and
:mod:`~odp.mechanisms.ptr.pipeline` (the Sec. 4.2 application through an accountant); every name
is importable from ``odp.mechanisms.ptr`` as before.

``tests/test_ptr.py`` tests the declared guarantee against the exact output distribution
(:func:`iqr_output_distribution`) on every neighbouring pair of a few families of small
databases — exactly in rationals for noise parameters chosen rational, and with 50-digit
arithmetic at one setting of the mechanism's own parameters — and ties
``IQRMechanism.release()`` to that model by a goodness-of-fit test of seeded releases.  This is
tested, not proved: Lemma 10 itself is argued above and in the paper.
"""

from __future__ import annotations

from .audit import iqr_output_distribution
from .mechanism import (
    MAX_PASS_THRESHOLD,
    ExponentialMedian,
    IQREstimate,
    IQRMechanism,
    LogBinIQR,
    PTRFunction,
    PTRMechanism,
    _Grid,
    _quartile_ranks,
    default_base,
    iqr_of,
    pass_threshold,
    stability,
)
from .pipeline import IQRMedianResult, iqr_then_median

__all__ = [
    "PTRFunction",
    "PTRMechanism",
    "IQREstimate",
    "LogBinIQR",
    "IQRMechanism",
    "ExponentialMedian",
    "IQRMedianResult",
    "iqr_then_median",
    "default_base",
    "iqr_of",
    "stability",
    "iqr_output_distribution",
    "pass_threshold",
    "MAX_PASS_THRESHOLD",
    "_Grid",
    "_quartile_ranks",
]
