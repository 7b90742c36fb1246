r"""Exact OptDel (Thm. 15, Eq. (3)) and the Lemma 11 bound (Eq. (4)) by backward induction.

Hartmann et al. 2022, Sec. 5.2 and App. C.  Inputs are in the exponential parametrisation
(:class:`~odp.optdel.problem.ExpProblem`: rational ``w_k = e**eps_k``, ``delta_k`` and
``W_i = e**E(P_i)``), so every number below is rational and the results are exact ``Fraction``\ s.

Why backward induction computes Eq. (3)
=======================================

Fix Lemma 12's mechanisms ``M~_k = M~_(eps_k, delta_k)``.  A node ``q`` of the output tree is a
sequence in ``{0,1,2,3}^k``; its masses are ``a(q) = Pr0(q)`` and ``b(q) = Pr1(q)`` (products
over the steps, because the ``M~_k`` are run non-adaptively on a fixed bit).  At a stopping depth
``k_i`` put ``phi(q) = a(q) - W_i b(q)``.  Eq. (3) maximises ``sum_{q in A} phi(q)`` over the
*prefix-disjoint* families ``A = Q_{k_1} u ... u Q_{k_n}`` -- the constraint is imposed for every
pair ``j < l`` (not only consecutive ones), and two different sequences of the same length are
never prefixes of each other, so these families are exactly the *antichains* of the prefix order
among nodes at stopping depths.  ``Q_{k_i}`` may be any subset of the sequences of length exactly
``k_i``, in particular it may leave out some of them.

**Lemma A (stop or continue).**  For a node ``q`` at depth ``k`` let ``V(q)`` be the maximum of
``sum phi`` over antichains inside the subtree of ``q`` (``q`` included).  Then

* ``V(q) = max(phi(q), sum_{children c} V(c))`` if ``k = k_i`` with ``i < n``;
* ``V(q) = max(phi(q), 0)`` if ``k = k_n``;
* ``V(q) = sum_c V(c)`` at every other depth (including the root), and Eq. (3) ``= V(root)``.

*Proof.*  An antichain ``A`` of the subtree either contains ``q`` -- then it contains no proper
descendant of ``q``, so ``A = {q}`` -- or it does not; then ``A`` is the disjoint union of the
antichains ``A cap subtree(c)`` of the children's subtrees, and conversely *any* choice of one
antichain per child subtree is an antichain, because nodes in different child subtrees are never
prefix-related.  The best antichain avoiding ``q`` therefore has value ``sum_c V(c)``.  At depth
``k_n`` the subtree is ``{q}`` and the only antichains are ``{}`` and ``{q}``.  The empty family
is allowed, so ``V >= 0``; "continue" is thus never worse than leaving a node out.  This is the
decomposition the proof of Thm. 15 uses in (12) = (13): a deterministic stopping rule is exactly
a choice "stop"/"continue" per node.  QED

**Lemma B (only the masses matter).**  The masses of the descendants ``q e`` of ``q`` are
``a(q) a_e`` and ``b(q) b_e``, where ``(a_e, b_e)`` are the masses of the suffix ``e`` under the
remaining steps.  Hence ``V(q) = Psi_k(a(q), b(q))`` with
``Psi_k(a, b) = max_A sum_{e in A} (a a_e - W_{i(e)} b b_e)`` (antichains ``A`` of the suffix tree).
``Psi_k`` is a maximum of linear functions with coefficients ``a_e >= 0`` and ``-W b_e <= 0``:
it is convex, positively homogeneous, non-decreasing in ``a`` and non-increasing in ``b``.

**Lemma C (the state is the privacy loss; delta-outputs handled explicitly).**

* If ``q`` contains output 0 (probability ``delta`` under ``b=0``, zero under ``b=1``), then
  ``b(q) = 0`` and ``Psi(a, 0) = a``: every term is ``<= a a_e``, the suffixes of an antichain are
  prefix-free so ``sum a_e <= 1``, and ``a`` is attained by the antichain of all descendants at the
  next stopping depth (or ``{q}`` itself).  Its loss is ``+infinity``; it is *not* a lattice state.
* If ``q`` contains output 3, ``a(q) = 0`` and ``Psi(0, b) = 0`` (all terms ``<= 0``; ``{}``).
* Otherwise ``q`` uses only outputs 1 and 2, and with ``c_k = prod_{l<=k} (1-delta_l)/(1+w_l)``
  ``a(q) = c_k prod_{l: q_l=1} w_l`` and ``b(q) = c_k prod_{l: q_l=2} w_l``.  So
  ``a b = c_k^2 prod_{l<=k} w_l`` and ``a / b = L(q) = prod w_l^{+-1} = e**(privacy loss)``: the
  pair ``(a, b)``, hence ``V(q)``, is a function of the depth ``k`` and ``L(q)`` alone.

Dividing by ``a`` gives the value per unit of ``Pr0``-mass, ``g_k(L) = Psi_k(a, b)/a`` in
``[0, 1]``, non-decreasing in ``L`` (Lemma B).  Expanding the children of a node (output 0 with
``Pr0``-weight ``delta``, value 1; outputs 1 and 2 with weights ``p = (1-delta) w/(1+w)`` and
``r = (1-delta)/(1+w)`` and losses ``L w`` and ``L / w``; output 3 with ``Pr0``-weight 0)::

    c_k(L) = delta_{k+1} + p_{k+1} g_{k+1}(L w_{k+1}) + r_{k+1} g_{k+1}(L / w_{k+1})
    g_k(L) = max(1 - W_i / L, c_k(L))   at k = k_i, i < n
           = max(1 - W_n / L, 0)        at k = k_n
           = c_k(L)                     elsewhere,         Eq. (3) = g_0(1).

The number of states at depth ``k`` is the number of distinct products ``prod w_l^{+-1}``:
``k + 1`` when all ``w_l`` are equal (any ``delta_l``), so the homogeneous case takes
``O(k_n^2)`` arithmetic operations.  :func:`thm15_exact` merges states by exact equality of ``L``
(exact for any rational input, polynomial whenever losses merge); :func:`thm15_lattice_exact` is
the fast exact integer version for ``w_k = w0**n_k`` (homogeneous: ``n_k = 1``).

**Lemma D (monotonicity; soundness of rounding).**  (i) ``g_k`` is non-decreasing in ``L``, so
replacing a state's loss by a larger one never lowers the value.  (ii) Eq. (3) is non-decreasing
in every ``eps_k`` and ``delta_k`` and non-increasing in every ``E(P_i)``.  For ``eps``: with
``w' >= w`` the two-point law ``(a p, b r)``/``(a r, b p)`` (``p = w/(1+w)``) is the mixture
``(1-t) X + t Y`` of the ``w'`` children ``X = (a p', b r'), Y = (a r', b p')`` with
``t = (p'-p)/(2p'-1)``; by convexity and homogeneity ``Psi(mix) <= (1-t) Psi(X) + t Psi(Y)``, and
summing both children gives the claim by induction from depth ``k_n`` upwards.  For ``delta``:
``(a(1-d) p, b(1-d) r) = (a(1-d') p, b(1-d') r) + (d'-d)(a p, b r)``, subadditivity and
``Psi(a p, b r) <= Psi(a p, 0) = a p`` show the children of ``delta`` are worth at most those of
``delta' >= delta``.  The same holds for Eq. (4) (each term is the case ``n = 1``).  This is what
makes the grid bounds of :mod:`odp.optdel.lattice` sound: rounding every ``eps_k`` *up* to a grid
gives an upper bound, *down* a lower bound.

Eq. (4) needs no decisions: ``sum_i [ (1 - prod_{l<=k_i}(1-delta_l)) +
sum_L Pr0^{1,2}_{k_i}(L) max(1 - W_i/L, 0) ]`` over the forward distribution of the loss.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from math import lcm
from operator import add

from ..errors import InvalidParameter
from .problem import ExpProblem

__all__ = [
    "DEFAULT_MAX_STATES",
    "common_lattice",
    "eq4_exact",
    "eq4_lattice_exact",
    "thm15_exact",
    "thm15_lattice_exact",
]

#: Refuse the state-merging algorithms when a depth has more distinct losses than this.
DEFAULT_MAX_STATES = 200_000


def _loss_levels(problem: ExpProblem, max_states: int) -> list[list[Fraction]]:
    levels: list[list[Fraction]] = [[Fraction(1)]]
    for k, w in enumerate(problem.ws, start=1):
        nxt = {L * w for L in levels[-1]} | {L / w for L in levels[-1]}
        if len(nxt) > max_states:
            raise InvalidParameter(
                f"depth {k} has {len(nxt)} distinct privacy-loss states (> max_states = "
                f"{max_states}): the losses do not merge; use odp.optdel.optdel (grid bounds)"
            )
        levels.append(sorted(nxt))
    return levels


def thm15_exact(problem: ExpProblem, *, max_states: int = DEFAULT_MAX_STATES) -> Fraction:
    """Exact Eq. (3) = OptDel of Thm. 15 by the recursion on ``g_k(L)`` (module docstring)."""
    levels = _loss_levels(problem, max_states)
    stop_index = {k: i for i, k in enumerate(problem.stops)}
    k_n = problem.k_n
    W = problem.Ws[-1]
    g = {L: (1 - W / L if L > W else Fraction(0)) for L in levels[k_n]}
    for k in range(k_n - 1, -1, -1):
        d, p, r = problem.step_probabilities(k + 1)
        w = problem.ws[k]
        new: dict[Fraction, Fraction] = {}
        i = stop_index.get(k)
        for L in levels[k]:
            c = d + p * g[L * w] + r * g[L / w]
            if i is not None:
                s = 1 - problem.Ws[i] / L
                c = max(c, s)
            new[L] = c
        g = new
    return g[Fraction(1)]


def eq4_exact(problem: ExpProblem, *, max_states: int = DEFAULT_MAX_STATES) -> Fraction:
    """Exact Eq. (4): Lemma 11 with the optimal composition for each prefix ``k_i``."""
    stop_index = {k: i for i, k in enumerate(problem.stops)}
    dist: dict[Fraction, Fraction] = {Fraction(1): Fraction(1)}
    survive = Fraction(1)  # prod (1 - delta_l): Pr0 of "no output 0 so far"
    total = Fraction(0)
    for k in range(1, problem.k_n + 1):
        d, p, r = problem.step_probabilities(k)
        w = problem.ws[k - 1]
        survive *= 1 - d
        nxt: dict[Fraction, Fraction] = {}
        for L, m in dist.items():
            nxt[L * w] = nxt.get(L * w, 0) + m * p
            nxt[L / w] = nxt.get(L / w, 0) + m * r
        if len(nxt) > max_states:
            raise InvalidParameter(
                f"depth {k} has {len(nxt)} distinct privacy-loss states (> {max_states})"
            )
        dist = nxt
        i = stop_index.get(k)
        if i is not None:
            W = problem.Ws[i]
            total += 1 - survive
            total += sum((m * (1 - W / L) for L, m in dist.items() if L > W), Fraction(0))
    return total


# --------------------------------------------------------------------------------------------
# Fast exact integer version on a lattice w_k = w0**n_k
# --------------------------------------------------------------------------------------------


def common_lattice(problem: ExpProblem) -> tuple[Fraction, list[int]] | None:
    """``(w0, units)`` with ``w_k = w0**units[k]`` when all ``w_k > 1`` are equal (then
    ``units = 1``); ``None`` otherwise (the general merge in :func:`thm15_exact` applies)."""
    ws = set(problem.ws)
    if len(ws) == 1:
        (w0,) = ws
        if w0 > 1:
            return w0, [1] * problem.k_n
    return None


class _Lattice:
    """Integer bookkeeping for ``w_k = w0**n_k``, ``w0 = P/Q``.

    On the ``1,2``-only paths the state at depth ``k`` is ``u = sum_{l: q_l = 1} n_l`` in
    ``[0, N_k]`` (``N_k = sum_{l<=k} n_l``), the loss is ``L = w0**(2u - N_k)`` and
    ``a = D_k P**u Q**(N_k-u)``, ``b = D_k P**(N_k-u) Q**u`` with
    ``D_k = prod_{l<=k} (1-delta_l) / (Q**n_l + P**n_l)``.  All values are kept as integers in
    units of ``1/U``, ``U = Den_{k_n} * lcm(denominators of W_i)``, where
    ``Den_k = prod_{l<=k} s_l (Q**n_l + P**n_l)`` and ``delta_l = r_l / s_l``.
    """

    def __init__(
        self, w0: Fraction, units: Sequence[int], deltas: Sequence[Fraction], Ws: Sequence[Fraction]
    ):
        if w0 <= 1:
            raise InvalidParameter("lattice base w0 must be > 1")
        if any((not isinstance(n, int)) or n < 0 for n in units):
            raise InvalidParameter("lattice units must be non-negative integers")
        self.P, self.Q = w0.numerator, w0.denominator
        self.units = list(units)
        k_n = len(units)
        self.N = [0] * (k_n + 1)
        for k, n in enumerate(units, start=1):
            self.N[k] = self.N[k - 1] + n
        s = [d.denominator for d in deltas]
        rr = [d.numerator for d in deltas]
        self.s, self.r = s, rr
        factor = [s[l] * (self.Q ** units[l] + self.P ** units[l]) for l in range(k_n)]
        # suffix[k] = Den_{k_n} / Den_k = prod_{l > k} factor[l-1]
        suffix = [1] * (k_n + 1)
        for k in range(k_n - 1, -1, -1):
            suffix[k] = suffix[k + 1] * factor[k]
        self.suffix = suffix
        self.lam = 1
        for W in Ws:
            self.lam = lcm(self.lam, W.denominator)
        self.U = suffix[0] * self.lam
        # prefix products of (s_l - r_l): Num_k
        num = [1] * (k_n + 1)
        for k in range(1, k_n + 1):
            num[k] = num[k - 1] * (s[k - 1] - rr[k - 1])
        self.num = num

    def a_scale(self, k: int) -> int:
        """``U * D_k`` (an integer)."""
        return self.num[k] * self.suffix[k] * self.lam

    def scaled_t_vector(self, k: int, scale: int) -> list[int]:
        """``[scale * P**u * Q**(N_k - u) for u in 0..N_k]`` by the exact chain
        ``x_{u+1} = x_u * P // Q`` (one big product, then only small multiplications)."""
        N = self.N[k]
        P, Q = self.P, self.Q
        x = scale * Q**N
        out = [x]
        for _ in range(N):
            x = x * P // Q
            out.append(x)
        return out

    def delta_part_scale(self, k0: int, k1: int) -> int:
        """``U * D_{k0} * (1 - prod_{k0 < l <= k1} (1 - delta_l))`` (an integer)."""
        s_prod = 1
        keep = 1
        for l in range(k0, k1):
            s_prod *= self.s[l]
            keep *= self.s[l] - self.r[l]
        return self.num[k0] * self.lam * (self.suffix[k0] // s_prod) * (s_prod - keep)


def thm15_lattice_exact(
    w0: Fraction,
    *,
    units: Sequence[int],
    deltas: Sequence[Fraction],
    stops: Sequence[int],
    Ws: Sequence[Fraction],
) -> Fraction:
    """Exact Eq. (3) for ``w_k = w0**units[k]`` with integer arithmetic only.

    Same recursion as :func:`thm15_exact`, written for the absolute values ``V`` of Lemma A
    (no division): between two stopping depths no decision is taken, so the value of a node is
    ``a * (1 - prod(1 - delta_l))`` (its descendants through an output 0, Lemma C) plus the sum
    of the values of its ``1,2``-only descendants at the next stopping depth, computed by
    repeated shifted additions ``G[u] <- G[u + n_l] + G[u]``.
    """
    stops = list(stops)
    lat = _Lattice(Fraction(w0), units, [Fraction(d) for d in deltas], [Fraction(W) for W in Ws])
    k_n = stops[-1]
    if len(units) != k_n or len(deltas) != k_n or len(Ws) != len(stops):
        raise InvalidParameter("need k_n units and deltas and one W per stopping point")
    G: list[int] | None = None
    bounds = [0] + stops
    for i in range(len(stops) - 1, -1, -1):
        k = stops[i]
        N = lat.N[k]
        W = Fraction(Ws[i])
        x, y = W.numerator, W.denominator
        # at[u] = U * a(u) = U * b(N - u): a and b are mirror images on the lattice
        at = lat.scaled_t_vector(k, lat.a_scale(k))
        half = (N + 1) // 2  # L >= 1 iff 2u >= N; stopping can only win where L > W >= 1
        V = [0] * (N + 1) if G is None else G
        for u in range(half, N + 1):
            s = at[u] - at[N - u] // y * x
            V[u] = max(V[u], s)
        # backward through the segment (bounds[i], k]: shifted additions only
        G = V
        for l in range(k, bounds[i], -1):
            n = lat.units[l - 1]
            m = lat.N[l - 1]
            G = list(map(add, G[n : n + m + 1], G[: m + 1]))
        k0 = bounds[i]
        C = lat.delta_part_scale(k0, k)
        if C:
            G = list(map(add, G, lat.scaled_t_vector(k0, C)))
    assert G is not None and len(G) == 1
    return Fraction(G[0], lat.U)


def eq4_lattice_exact(
    w0: Fraction,
    *,
    units: Sequence[int],
    deltas: Sequence[Fraction],
    stops: Sequence[int],
    Ws: Sequence[Fraction],
) -> Fraction:
    """Exact Eq. (4) for ``w_k = w0**units[k]``: path counts per lattice state, integers only."""
    stops = list(stops)
    lat = _Lattice(Fraction(w0), units, [Fraction(d) for d in deltas], [Fraction(W) for W in Ws])
    k_n = stops[-1]
    if len(units) != k_n or len(deltas) != k_n or len(Ws) != len(stops):
        raise InvalidParameter("need k_n units and deltas and one W per stopping point")
    counts = [1]  # number of 1,2-paths reaching u
    total = Fraction(0)
    k_prev = 0
    for i, k in enumerate(stops):
        for l in range(k_prev + 1, k + 1):
            n = lat.units[l - 1]
            m = lat.N[l]
            new = [0] * (m + 1)
            for u, c in enumerate(counts):
                if c:
                    new[u] += c
                    new[u + n] += c
            counts = new
        k_prev = k
        N = lat.N[k]
        W = Fraction(Ws[i])
        x, y = W.numerator, W.denominator
        at = lat.scaled_t_vector(k, lat.a_scale(k))
        acc = 0
        for u in range((N + 1) // 2, N + 1):
            if counts[u]:
                s = at[u] - at[N - u] // y * x
                if s > 0:
                    acc += counts[u] * s
        survive = Fraction(1)
        for l in range(k):
            survive *= 1 - Fraction(deltas[l])
        total += (1 - survive) + Fraction(acc, lat.U)
    return total
