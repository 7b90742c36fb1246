/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Basic composition of adaptive steps, from Theorem 7 (Hartmann et al. 2022)

**What is proved** (`Odp.Mech.basic_composition`): if step `k` of an adaptive sequence is
`(ε_k, δ_k)`-DP for every released history (`StepsDP`, the trust boundary
`Odp/Mech/Common/Noise.lean`), with `ε_k, δ_k ≥ 0`, then the first `k` steps together,
`M^k = (M_1, …, M_k)` releasing the whole history, are `(Σ_{k' ≤ k} ε_{k'}, Σ_{k' ≤ k} δ_{k'})`-DP
(basic composition, Dwork–Kenthapadi–McSherry–Mironov–Naor 2006, adaptive form; this is
`odp.composition.BasicComposition`). `Odp.Mech.prefixDP_basic` is the same for the prefixes
`M^{k_i}` at the stops: Lemma 11's COMP hypothesis (`PrefixDP`) discharged by basic composition.

**How.** Not re-proved: it is the Core's Theorem 7 (`Odp.Core.odp_composition`) applied to the
adversary of Alg. 1 that plays step `M_{j+1}(s_1, …, s_j)` in round `j + 1`, with the constant
cost `ε_{j+1}` and `δ_{j+1}` (each step DP ⇒ ODP with constant cost by Lemma 3,
`odpCost_of_dp`), on the pair `x, x'`, for `k` rounds (`compTree`). Its budget
`(Σ ε, Σ δ)` is respected along every path (`compTree_valid`), and the probability that its view
lies in `S` is `Pr(M^k(x) ∈ S)` (`compTree_prob`).

**Hypotheses:** `StepsDP` only (and `ε_k, δ_k ≥ 0`, `k ≤ |eps|`: every step up to `k` is
described). Nothing is narrower than the paper's basic composition.
-/
module

public import Odp.Mech.Common.Noise
public import Odp.Mech.Iterative.Model
public import Odp.Core.Composition

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech.Iter

open Odp.Core Odp.Core.ExpField

noncomputable section

variable {R X W : Type} [ExpField R] [Enum W]

/-- Round `|pre| + 1` of the composition experiment: step `M_{|pre|+1}(pre)` on `x₀`/`x₁`, with
the constant cost `ε_{|pre|+1}` and `δ_{|pre|+1}`. -/
def stepChoice (M : Step X W R) (x₀ x₁ : X) (eps dl : List R) (pre : List W) : Choice X W R where
  x₀ := x₀
  x₁ := x₁
  M := M pre
  cost := fun _ => eps.getD pre.length 0
  delta := dl.getD pre.length 0

theorem stepChoice_input (M : Step X W R) (x₀ x₁ : X) (eps dl : List R) (pre : List W)
    (b : Bool) : (stepChoice M x₀ x₁ eps dl pre).input b = cond b x₁ x₀ := by
  cases b <;> rfl

/-- The adversary of Alg. 1 that runs the next `m` steps after the history `pre`. -/
def compTree (M : Step X W R) (x₀ x₁ : X) (eps dl : List R) : Nat → List W → Adv X W R
  | 0, _ => .leaf
  | m + 1, pre => .node (stepChoice M x₀ x₁ eps dl pre)
      (fun s => compTree M x₀ x₁ eps dl m (pre ++ [s]))

/-- The view of `compTree` (the outputs of the `m` steps) has the law of the steps run on
`x_b`. -/
theorem compTree_prob (M : Step X W R) (x₀ x₁ : X) (eps dl : List R) (b : Bool) :
    ∀ (m : Nat) (pre : List W) (V : List W → Bool),
      (compTree M x₀ x₁ eps dl m pre).prob b V
        = fsum (fun t : Vec W m => chain M (cond b x₁ x₀) pre t.1 * (if V t.1 then 1 else 0))
  | 0, pre, V => by
    rw [fsum_vec_zero]
    show (if V [] then (1 : R) else 0) = 1 * (if V [] then 1 else 0)
    grind
  | m + 1, pre, V => by
    rw [compTree, Adv.prob_node, stepChoice_input, fsum_vec_succ]
    apply fsum_congr
    intro s
    rw [compTree_prob M x₀ x₁ eps dl b m (pre ++ [s]), ← fsum_mul_left]
    apply fsum_congr
    intro t
    show (M pre (cond b x₁ x₀)).mass s * (chain M (cond b x₁ x₀) (pre ++ [s]) t.1
        * (if V (s :: t.1) then 1 else 0))
      = chain M (cond b x₁ x₀) pre (s :: t.1) * (if V (s :: t.1) then 1 else 0)
    rw [chain_cons]
    generalize (M pre (cond b x₁ x₀)).mass s = a
    generalize chain M (cond b x₁ x₀) (pre ++ [s]) t.1 = c
    generalize (if V (s :: t.1) then (1 : R) else 0) = v
    grind

/-- `compTree` respects the budget `(Σ ε, Σ δ)` of its steps in every round (Alg. 1, line 4). -/
theorem compTree_valid (Nbr : X → X → Prop) (M : Step X W R) (x₀ x₁ : X) (hN : Nbr x₀ x₁)
    (eps dl : List R) (heps : ∀ j, 0 ≤ eps.getD j 0) (hdl : ∀ j, 0 ≤ dl.getD j 0)
    (hsteps : StepsDP Nbr M eps dl) :
    ∀ (m : Nat) (pre : List W) (ε δ : R), pre.length + m ≤ eps.length →
      prefSum eps (pre.length + m) - prefSum eps pre.length ≤ ε →
      prefSum dl (pre.length + m) - prefSum dl pre.length ≤ δ →
      (compTree M x₀ x₁ eps dl m pre).Valid Nbr ε δ
  | 0, _, _, _, _, _, _ => trivial
  | m + 1, pre, ε, δ, hlen, hε, hδ => by
    rw [compTree, Adv.valid_node]
    have ha : pre.length + (m + 1) = pre.length + 1 + m := by omega
    rw [ha] at hε hδ
    have hme := prefSum_mono eps heps (pre.length + 1) m
    have hmd := prefSum_mono dl hdl (pre.length + 1) m
    rw [prefSum_succ] at hme hmd
    refine ⟨hN, ?_, ?_, ?_, ?_⟩
    · exact odpCost_of_dp Nbr (M pre) _ _ (hsteps pre (by omega))
    · intro _
      show eps.getD pre.length 0 ≤ ε
      grind
    · show dl.getD pre.length 0 ≤ δ
      grind
    · intro s
      show (compTree M x₀ x₁ eps dl m (pre ++ [s])).Valid Nbr (ε - eps.getD pre.length 0)
        (δ - dl.getD pre.length 0)
      have hl : (pre ++ [s]).length = pre.length + 1 := by simp
      apply compTree_valid Nbr M x₀ x₁ hN eps dl heps hdl hsteps m (pre ++ [s])
      · rw [hl]; omega
      · rw [hl, prefSum_succ]; grind
      · rw [hl, prefSum_succ]; grind

/-- **Basic composition** (adaptive): if step `k` is `(ε_k, δ_k)`-DP for every released history
(`StepsDP`), the first `k` steps together are `(Σ_{k' ≤ k} ε_{k'}, Σ_{k' ≤ k} δ_{k'})`-DP. -/
theorem _root_.Odp.Mech.basic_composition (Nbr : X → X → Prop) (M : Step X W R)
    (eps dl : List R) (heps : ∀ j, 0 ≤ eps.getD j 0) (hdl : ∀ j, 0 ≤ dl.getD j 0)
    (hsteps : StepsDP Nbr M eps dl) (k : Nat) (hk : k ≤ eps.length) :
    DP Nbr (prefixMech M k) (prefSum eps k) (prefSum dl k) := by
  intro x x' hN S
  let V : List W → Bool := fun l => if h : l.length = k then S ⟨l, h⟩ else false
  have hp : ∀ b : Bool, Pr (prefixMech M k (cond b x' x)) S
      = (compTree M x x' eps dl k []).prob b V := by
    intro b
    rw [compTree_prob]
    unfold Pr
    apply fsum_congr
    intro t
    have hV : V t.1 = S t := by
      show (if h : t.1.length = k then S ⟨t.1, h⟩ else false) = S t
      rw [dif_pos t.2]
    rw [hV]
    show (if S t = true then chain M (cond b x' x) [] t.1 else 0)
      = chain M (cond b x' x) [] t.1 * (if S t = true then 1 else 0)
    cases S t <;> simp <;> grind
  have hv := compTree_valid Nbr M x x' hN eps dl heps hdl hsteps k [] (prefSum eps k)
    (prefSum dl k) (by simp; omega) (by simp [prefSum_zero]; grind) (by simp [prefSum_zero]; grind)
  have h7 := odp_composition Nbr (compTree M x x' eps dl k []) (prefSum eps k) (prefSum dl k)
    (prefSum_nonneg eps heps k) (prefSum_nonneg dl hdl k) hv V
  rw [← hp false, ← hp true] at h7
  exact h7

/-- Lemma 11's COMP hypothesis (`PrefixDP`) discharged by basic composition: the prefix
`M^{k_i}` is `(Σ_{k ≤ k_i} ε_k, Σ_{k ≤ k_i} δ_k)`-DP for every stop, i.e. `PrefixDP` with the
costs `iterCosts ks eps` and the δ's `prefSum dl k_i`. -/
theorem _root_.Odp.Mech.prefixDP_basic (Nbr : X → X → Prop) (M : Step X W R) (ks : List Nat)
    (eps dl : List R) (heps : ∀ j, 0 ≤ eps.getD j 0) (hdl : ∀ j, 0 ≤ dl.getD j 0)
    (hsteps : StepsDP Nbr M eps dl) (hks : ∀ i : Fin ks.length, ks.get i ≤ eps.length) :
    PrefixDP Nbr M ks (Odp.Mech.iterCosts ks eps) (fun i => prefSum dl (ks.get i)) :=
  fun i => Odp.Mech.basic_composition Nbr M eps dl heps hdl hsteps (ks.get i) (hks i)

end

end Odp.Mech.Iter
