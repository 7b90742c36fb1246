/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Adaptive steps, the chain rule and the prefix mechanism (Alg. 3, Hartmann et al. 2022, Sec. 5)

The part of the model of Alg. 3 that the hypotheses of the trust boundary (`Odp/Mech/Common/Noise.lean`:
`StepsDP`, `PrefixDP`, `L1Sensitive`) are stated about; the rest of the model (stops, stopping
rules, `M_iter`, its costs) is in `Odp/Mech/Iterative/Model.lean`.

* `Step X W R = List W → Mechanism X W R`: step `k` is the mechanism `M (s_1, …, s_{k−1})`, any
  function of the released history (adaptive steps), with outputs in a finite type `W` (odp
  clamps a step's release to a declared window; the Core's definitions need a finite output
  type).
* `chain M x pre t = ∏_j Pr(M_j(pre ++ t_{<j}, x) = t_j)`: the probability that, after the
  history `pre`, the next steps output `t` (chain rule); it sums to one over the histories of any
  fixed length (`chain_total`), and the steps after the first `a` do not change the probability of
  the first `a` outputs (`chain_marginal`).
* `prefixMech M k`: the prefix mechanism `M^k = (M_1, …, M_k)` of Lemma 11's proof (all `k`
  steps, adaptively, releasing the whole history).
* `l1 d u u'`: the L1 distance of two integer vectors of dimension `d` (the sensitivity of the
  gridded gradient of `NoisyGradientDescent`).

Nothing in this file is a hypothesis: it defines the model and proves it is a distribution.
-/
module

public import Odp.Mech.Common.Enum
public import Odp.Core.Defs

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech.Iter

open Odp.Core Odp.Core.ExpField

noncomputable section

variable {R X W : Type} [ExpField R] [Enum W]

/-- Step `k` of Alg. 3 (line 2): given the released history `(s_1, …, s_{k−1})`, the mechanism
`M_k((s_1, …, s_{k−1}), ·)` on the databases. -/
abbrev Step (X W R : Type) [ExpField R] [Enum W] := List W → Mechanism X W R

/-- `chain M x pre t = ∏_j Pr(M_j(pre ++ t_{<j}, x) = t_j)`: the probability that, after the
history `pre`, the next steps output `t` (chain rule). -/
def chain (M : Step X W R) (x : X) : List W → List W → R
  | _, [] => 1
  | pre, s :: t => (M pre x).mass s * chain M x (pre ++ [s]) t

theorem chain_nil (M : Step X W R) (x : X) (pre : List W) : chain M x pre [] = 1 := rfl

theorem chain_cons (M : Step X W R) (x : X) (pre : List W) (s : W) (t : List W) :
    chain M x pre (s :: t) = (M pre x).mass s * chain M x (pre ++ [s]) t := rfl

theorem chain_nonneg (M : Step X W R) (x : X) : ∀ (t pre : List W), 0 ≤ chain M x pre t
  | [], _ => by rw [chain_nil]; grind
  | s :: t, pre => by
    rw [chain_cons]
    exact mul_nonneg' ((M pre x).nonneg s) (chain_nonneg M x t _)

theorem chain_append (M : Step X W R) (x : X) :
    ∀ (u v pre : List W), chain M x pre (u ++ v) = chain M x pre u * chain M x (pre ++ u) v
  | [], v, pre => by
    rw [List.nil_append, chain_nil, List.append_nil]
    grind
  | s :: u, v, pre => by
    rw [List.cons_append, chain_cons, chain_cons, chain_append M x u v (pre ++ [s])]
    have e : pre ++ [s] ++ u = pre ++ s :: u := by simp
    rw [e]
    generalize (M pre x).mass s = a
    generalize chain M x (pre ++ [s]) u = b
    generalize chain M x (pre ++ s :: u) v = c
    grind

/-- The next `k` steps' outputs have total probability one, after any history. -/
theorem chain_total (M : Step X W R) (x : X) :
    ∀ (k : Nat) (pre : List W), fsum (fun t : Vec W k => chain M x pre t.1) = 1
  | 0, pre => by rw [fsum_vec_zero]; rfl
  | k + 1, pre => by
    rw [fsum_vec_succ, ← (M pre x).total]
    apply fsum_congr
    intro s
    show fsum (fun t : Vec W k => chain M x pre (s :: t.1)) = (M pre x).mass s
    simp only [chain_cons]
    rw [fsum_mul_left, chain_total M x k (pre ++ [s])]
    grind

/-- The steps after the first `a` do not change the probability of the first `a` outputs:
`∑_{t ∈ W^c} Pr(t) G(t_{≤a}) = ∑_{u ∈ W^a} Pr(u) G(u)` for `a ≤ c`. -/
theorem chain_marginal (M : Step X W R) (x : X) (G : List W → R) (a c : Nat) (hac : a ≤ c) :
    fsum (fun t : Vec W c => chain M x [] t.1 * G (t.1.take a))
      = fsum (fun u : Vec W a => chain M x [] u.1 * G u.1) := by
  have hs : fsum (fun t : Vec W c => chain M x [] t.1 * G (t.1.take a))
      = fsum (fun u : Vec W a => fsum (fun v : Vec W (c - a) =>
          chain M x [] (u.1 ++ v.1) * G ((u.1 ++ v.1).take a))) :=
    fsum_vec_split (fun l => chain M x [] l * G (l.take a)) a (c - a) c (by omega)
  rw [hs]
  apply fsum_congr
  intro u
  have e : ∀ v : Vec W (c - a), chain M x [] (u.1 ++ v.1) * G ((u.1 ++ v.1).take a)
      = (chain M x [] u.1 * G u.1) * chain M x u.1 v.1 := by
    intro v
    rw [chain_append, List.nil_append, List.take_left' u.2]
    generalize chain M x [] u.1 = p
    generalize chain M x u.1 v.1 = q
    generalize G u.1 = g
    grind
  rw [fsum_congr e, fsum_mul_left, chain_total]
  grind

/-- The prefix mechanism `M^k = (M_1, …, M_k)` of Lemma 11's proof: all `k` steps, adaptively,
releasing the whole history. -/
def prefixMech (M : Step X W R) (k : Nat) : Mechanism X (Vec W k) R := fun x =>
  { mass := fun t => chain M x [] t.1
    nonneg := fun t => chain_nonneg M x t.1 []
    total := chain_total M x k [] }

/-- `Σ_{j < d} |u_j − u'_j|`: the L1 distance of two integer vectors of dimension `d`. -/
def l1 : Nat → List Int → List Int → Nat
  | 0, _, _ => 0
  | d + 1, u, u' => (u.headD 0 - u'.headD 0).natAbs + l1 d u.tail u'.tail

end

end Odp.Mech.Iter
