"""The Sparse Vector Technique with ODP accounting (Hartmann et al. 2022, Sec. 4.1: Alg. 2,
Lemma 8).

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

The package is split by job: :mod:`~odp.mechanisms.svt.mechanism` (parameters, guarantee, the
batch mechanism), :mod:`~odp.mechanisms.svt.session` (the interactive session and the Sec. 4.1
application through an accountant) and :mod:`~odp.mechanisms.svt.audit` (the exact output
distribution).  Every name is importable from ``odp.mechanisms.svt`` as before.

Use it in batch (:class:`SparseVectorMechanism`, one accountant round whose release is the answer
vector) or interactively (:class:`SVTSession`: one interactive reservation, answers as queries
arrive, settled at class ``c'`` on STOP, at the cut-off or at its declared ``max_queries``-th
answer).  Both have finite output spaces: answer tuples of length at most the number of queries
given (batch) or ``max_queries`` (session), so Theorem 7 for finite output spaces covers them.  :func:`sparse_vector_release` is
the application of Sec. 4.1 (SVT selection, then Laplace releases with the leftover budget).
"""

from __future__ import annotations

from ...errors import SessionClosed
from .audit import adaptive_output_distribution, answer_probability, output_distribution
from .mechanism import MAX_C, SparseVectorMechanism, SVTParameters, count_top, svt_split
from .session import (
    DEFAULT_MAX_QUERIES,
    SparseVectorRelease,
    SVTSession,
    entry_epsilon,
    sparse_vector_release,
)

__all__ = [
    "SessionClosed",
    "SVTParameters",
    "SparseVectorMechanism",
    "SVTSession",
    "SparseVectorRelease",
    "sparse_vector_release",
    "count_top",
    "svt_split",
    "entry_epsilon",
    "MAX_C",
    "DEFAULT_MAX_QUERIES",
    "answer_probability",
    "output_distribution",
    "adaptive_output_distribution",
]
