"""Optimal output differential privacy for early stopping (Hartmann et al. 2022, Sec. 5 and App. C).

An iterative mechanism (Alg. 3) runs ``(epsilon_k, delta_k)``-DP steps and may stop after
``k_1 < k_2 < ... < k_n`` steps; the partition ``P_i`` = "stopped after ``k_i`` steps" carries the
cost ``E(P_i)``.  Two deltas for its ``(P, E, delta)``-ODP guarantee are computed here:

* **OptDel** (Thm. 15, Eq. (3)): the *smallest* delta valid for every choice of the steps and of
  the stopping rules.  The paper evaluates it by enumerating exponentially many output sets; here
  it is computed by backward induction over privacy-loss states (proofs in
  :mod:`odp.optdel.exact`): exact in ``O(k_n^2)`` for homogeneous steps, exact whenever losses
  merge (rigorous floating point on the exact lattice, :mod:`odp.optdel.lattice`), and
  otherwise bracketed: a second-order upper bound from the convexity of the value function
  (:mod:`odp.optdel.interp`) and a lower bound with every ``epsilon_k`` rounded down.
* **Lemma 11 / Eq. (4)**: the delta obtained from Lemma 11 with the optimal composition theorem
  for each prefix (Murtagh-Vadhan), ``sum_i delta^{k_i}``.  It is never smaller than OptDel and is
  strictly larger as soon as ``n >= 2`` and all ``delta_k > 0``.

Stable API
----------
``optdel_upper(stops, steps, costs) -> Fraction``
    A rigorous rational **upper** bound of OptDel: ``stops`` the stopping points, ``steps`` the
    ``(epsilon_k, delta_k)`` pairs (``k_n`` of them), ``costs`` the ``E(P_i)`` (one per stop); all
    numbers parsed exactly ("0.1", "1e-6", Fractions, ints).  Rounded up to 12 significant digits.
    With ``exponential=True`` the inputs are ``(w_k, delta_k)`` with ``w_k = e**epsilon_k`` and
    ``W_i = e**E(P_i)`` as exact rationals and the exact value is returned.  This is the entry
    point for accountants that offer "optimal" composition for early stopping.
``optdel(...) -> OptDelBound``
    The bracket ``lower <= OptDel <= upper`` with the method used.
``lemma11_delta(...) -> OptDelBound``
    The same for Eq. (4).
``lemma11_costs(stops, steps, delta)``
    Costs ``E(P_i)`` with Eq. (4) ``<= delta`` (Lemma 11, equal split of delta).
``optdel_saving(stops, steps, costs, delta)``
    How much the last (or every) cost can be lowered while OptDel stays ``<= delta``.

Brute-force references (:mod:`odp.optdel.reference`) and the exact algorithms
(:mod:`odp.optdel.exact`) are importable for testing and auditing; :mod:`odp.optdel.gap` holds
the Lemma 11 vs Thm. 15 study (``odp optdel --gap-study``, ``odp figure optdel``).  Write-up:
``docs/optdel.md``.
"""

from __future__ import annotations

from . import bounds as _bounds
from . import costs as _costs
from .bounds import DEFAULT_MAX_CELLS, OptDelBound, round_up_significant
from .cost import guarded as _guarded
from .problem import EpsProblem, ExpProblem

# The public entry points estimate their cost first and take ``limits`` and ``progress``
# (odp.optdel.cost); the implementations in .bounds/.costs are unchanged.
optdel = _guarded(_bounds.optdel, "thm15")
optdel_upper = _guarded(_bounds.optdel_upper, "thm15_upper")
lemma11_delta = _guarded(_bounds.lemma11_delta, "lemma11")
lemma11_delta_upper = _guarded(_bounds.lemma11_delta_upper, "lemma11_upper")
lemma11_costs = _guarded(_costs.lemma11_costs, "lemma11_costs")
optdel_saving = _guarded(_costs.optdel_saving, "saving")

__all__ = [
    "DEFAULT_MAX_CELLS",
    "EpsProblem",
    "ExpProblem",
    "OptDelBound",
    "lemma11_costs",
    "lemma11_delta",
    "lemma11_delta_upper",
    "optdel",
    "optdel_saving",
    "optdel_upper",
    "round_up_significant",
]
