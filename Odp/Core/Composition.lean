/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Algorithm 1 (the ODP composition experiment) and Theorem 7 (Hartmann et al. 2022)

A deterministic adaptive adversary is a finite tree. At a node it picks (Alg. 1, line 4) two
neighbouring databases `x⁰, x¹`, a mechanism `M_i`, its ODP costs and `δ_i`; after seeing the
output `o` it continues as `cont o` (the paper's `𝒜_r(v)`). The budget bookkeeping of
lines 7–8 (`ε_r := ε_r − ℰ_i(P_{i,k})`, `δ_r := δ_r − δ_i`) is part of `Adv.Valid`.

* `Choice`/`Adv`: output-wise costs (`cost o = ℰ_i(P_{i,k})` for `o ∈ P_{i,k}`).
* `PChoice`/`PAdv`: the triple `(𝒫_i, ℰ_i, δ_i)` of Alg. 1 literally, blocks labelled in a finite
  type `K`; `PAdv.toAdv` reduces it to the former (`PAdv.valid_toAdv`, `PAdv.prob_toAdv`).
* `δ_i` is a field of the choice: it cannot depend on the realised block (paper, Sec. 3.2).
* Branches may have different finite lengths; the paper's fixed number of rounds `I`, with an
  adversary that sees the history of outputs, is `PAdv.ofHistory π I []`.
* `Adv.prob b A V` is the probability that Alg. 1 with secret bit `b` returns a view (the list of
  outputs `A_1, A_2, …`) in `V`, computed round by round by the chain rule. It is a probability
  distribution on views (`prob_univ`, `prob_compl`).
* A randomised adversary draws its coins `r ∼ ρ` first and then plays `A r`; its view contains
  the coins (`odp_composition_randomized`).

**Theorem 7** (`odp_composition`): `Pr(V⁰ ∈ 𝒱) ≤ e^{ε_t} Pr(V¹ ∈ 𝒱) + δ_t` for every valid
adversary and every set of views `𝒱`.
-/
module

public import Odp.Core.Lemma20

@[expose] public section

set_option autoImplicit false

namespace Odp.Core

noncomputable section

open ExpField

variable {R X O K : Type} [ExpField R] [Enum O]

/-- What the adversary picks in one round (Alg. 1, line 4), output-wise form. -/
structure Choice (X O R : Type) [ExpField R] [Enum O] where
  /-- the database used when the secret bit is `b = 0` -/
  x₀ : X
  /-- the database used when the secret bit is `b = 1` -/
  x₁ : X
  /-- the mechanism `M_i` -/
  M : Mechanism X O R
  /-- `cost o = ℰ_i(P_{i,k})` for the block `P_{i,k}` that contains `o` -/
  cost : O → R
  /-- `δ_i`, fixed before the output is seen -/
  delta : R

/-- The database that the curator uses for secret bit `b`. -/
def Choice.input (c : Choice X O R) : Bool → X
  | false => c.x₀
  | true => c.x₁

/-- A deterministic adaptive adversary of Alg. 1. -/
inductive Adv (X O R : Type) [ExpField R] [Enum O] : Type where
  | leaf : Adv X O R
  | node (c : Choice X O R) (cont : O → Adv X O R) : Adv X O R

namespace Adv

/-- Every round passes the checks of Alg. 1, line 4 (`x⁰ ~ x¹`, `M_i` is ODP with the declared
costs and `δ_i`, `sup ℰ_i ≤ ε_r`, `δ_i ≤ δ_r`), and the next round starts from the budget
updated as in lines 7–8. -/
def Valid (Nbr : X → X → Prop) : Adv X O R → R → R → Prop
  | .leaf, _, _ => True
  | .node c cont, ε, δ =>
      Nbr c.x₀ c.x₁ ∧ ODPcost Nbr c.M c.cost c.delta ∧ (∀ o, c.cost o ≤ ε) ∧ c.delta ≤ δ ∧
        ∀ o, Valid Nbr (cont o) (ε - c.cost o) (δ - c.delta)

/-- The probability that Alg. 1 with secret bit `b` returns a view in `V` (a view is the list of
the outputs of the rounds). -/
def prob (b : Bool) : Adv X O R → (List O → Bool) → R
  | .leaf, V => if V [] then 1 else 0
  | .node c cont, V =>
      fsum (fun o => (c.M (c.input b)).mass o * prob b (cont o) (fun w => V (o :: w)))

theorem prob_leaf (b : Bool) (V : List O → Bool) :
    prob b (leaf : Adv X O R) V = if V [] then 1 else 0 := rfl

theorem prob_node (b : Bool) (c : Choice X O R) (cont : O → Adv X O R) (V : List O → Bool) :
    prob b (node c cont) V
      = fsum (fun o => (c.M (c.input b)).mass o * prob b (cont o) (fun w => V (o :: w))) := rfl

theorem valid_node (Nbr : X → X → Prop) (c : Choice X O R) (cont : O → Adv X O R) (ε δ : R) :
    Valid Nbr (node c cont) ε δ ↔
      (Nbr c.x₀ c.x₁ ∧ ODPcost Nbr c.M c.cost c.delta ∧ (∀ o, c.cost o ≤ ε) ∧ c.delta ≤ δ ∧
        ∀ o, Valid Nbr (cont o) (ε - c.cost o) (δ - c.delta)) := Iff.rfl

theorem prob_nonneg (b : Bool) (A : Adv X O R) : ∀ V, 0 ≤ prob b A V := by
  induction A with
  | leaf =>
    intro V
    rw [prob_leaf]
    cases V [] <;> simp <;> grind
  | node c cont ih =>
    intro V
    rw [prob_node]
    exact fsum_nonneg (fun o => mul_nonneg' ((c.M (c.input b)).nonneg o) (ih o _))

theorem prob_le_one (b : Bool) (A : Adv X O R) : ∀ V, prob b A V ≤ 1 := by
  induction A with
  | leaf =>
    intro V
    rw [prob_leaf]
    cases V [] <;> simp <;> grind
  | node c cont ih =>
    intro V
    rw [prob_node, ← (c.M (c.input b)).total]
    exact fsum_le (fun o => mul_le_self (ih o _) ((c.M (c.input b)).nonneg o))

/-- The views have total probability one. -/
theorem prob_univ (b : Bool) (A : Adv X O R) : prob b A (fun _ => true) = 1 := by
  induction A with
  | leaf => rfl
  | node c cont ih =>
    rw [prob_node, ← (c.M (c.input b)).total]
    apply fsum_congr
    intro o
    rw [ih o]
    grind

/-- An event and its complement have total probability one. -/
theorem prob_compl (b : Bool) (A : Adv X O R) :
    ∀ V, prob b A V + prob b A (fun w => !V w) = 1 := by
  induction A with
  | leaf =>
    intro V
    rw [prob_leaf, prob_leaf]
    cases V [] <;> simp <;> grind
  | node c cont ih =>
    intro V
    rw [prob_node, prob_node, ← fsum_add, ← (c.M (c.input b)).total]
    apply fsum_congr
    intro o
    have h := ih o (fun w => V (o :: w))
    generalize prob b (cont o) (fun w => V (o :: w)) = u at h ⊢
    generalize prob b (cont o) (fun w => !V (o :: w)) = v at h ⊢
    grind

end Adv

/-- **Theorem 7.** For every adversary that respects the budget `(ε_t, δ_t)` in every round
(Alg. 1, line 4) and every set of views `V`:
`Pr(V⁰ ∈ V) ≤ e^{ε_t} Pr(V¹ ∈ V) + δ_t`. -/
theorem odp_composition (Nbr : X → X → Prop) (A : Adv X O R) :
    ∀ (ε δ : R), 0 ≤ ε → 0 ≤ δ → A.Valid Nbr ε δ →
      ∀ V : List O → Bool, A.prob false V ≤ exp ε * A.prob true V + δ := by
  induction A with
  | leaf =>
    intro ε δ hε hδ _ V
    rw [Adv.prob_leaf, Adv.prob_leaf]
    have h1 := one_le_exp hε
    cases V [] <;> simp <;> grind
  | node c cont ih =>
    intro ε δ hε hδ hv V
    obtain ⟨hN, hodp, hcost, hdel, hcont⟩ := (Adv.valid_node Nbr c cont ε δ).mp hv
    have hsum := (ODPcost_iff_ODPsum Nbr c.M c.cost c.delta).mp hodp c.x₀ c.x₁ hN
    rw [Adv.prob_node, Adv.prob_node]
    exact step_bound (c.M c.x₀) (c.M c.x₁) c.cost ε δ c.delta
      (fun o => (cont o).prob false (fun w => V (o :: w)))
      (fun o => (cont o).prob true (fun w => V (o :: w)))
      hdel hsum
      (fun o => Adv.prob_le_one false (cont o) _)
      (fun o => Adv.prob_nonneg true (cont o) _)
      (fun o => ih o (ε - c.cost o) (δ - c.delta) (by have := hcost o; grind) (by grind)
        (hcont o) _)

/-- **Theorem 7** for a randomised adversary: its coins `r ∼ ρ` are drawn first (Alg. 1,
line 1) and are part of the view; with coins `r` it plays the deterministic adversary `A r`. -/
theorem odp_composition_randomized {C : Type} [Enum C] (Nbr : X → X → Prop) (ρ : Dist C R)
    (A : C → Adv X O R) (ε δ : R) (hε : 0 ≤ ε) (hδ : 0 ≤ δ) (hv : ∀ r, (A r).Valid Nbr ε δ)
    (V : C → List O → Bool) :
    fsum (fun r => ρ.mass r * (A r).prob false (V r))
      ≤ exp ε * fsum (fun r => ρ.mass r * (A r).prob true (V r)) + δ := by
  have hpt : ∀ r, ρ.mass r * (A r).prob false (V r)
      ≤ exp ε * (ρ.mass r * (A r).prob true (V r)) + δ * ρ.mass r := by
    intro r
    have h := mul_le_mul_left' (ρ.mass r) (odp_composition Nbr (A r) ε δ hε hδ (hv r) (V r))
      (ρ.nonneg r)
    generalize (A r).prob false (V r) = u at h ⊢
    generalize (A r).prob true (V r) = v at h ⊢
    grind
  have h1 := fsum_le hpt
  rw [fsum_add, fsum_mul_left, fsum_mul_left, ρ.total] at h1
  generalize fsum (fun r => ρ.mass r * (A r).prob false (V r)) = a at h1 ⊢
  generalize fsum (fun r => ρ.mass r * (A r).prob true (V r)) = b at h1 ⊢
  grind

/-! ### Alg. 1 with explicit partitions and a fixed number of rounds -/

/-- One round of Alg. 1, line 4, with the ODP partition `𝒫_i = {P_{i,k}}` given by labels
`κ : O → K` (`P_{i,k} = {o | κ o = k}`) and block costs `E k = ℰ_i(P_{i,k})`. -/
structure PChoice (X O K R : Type) [ExpField R] [Enum O] where
  x₀ : X
  x₁ : X
  M : Mechanism X O R
  κ : O → K
  E : K → R
  delta : R

/-- An adversary of Alg. 1 that returns explicit partitions. -/
inductive PAdv (X O K R : Type) [ExpField R] [Enum O] : Type where
  | leaf : PAdv X O K R
  | node (c : PChoice X O K R) (cont : O → PAdv X O K R) : PAdv X O K R

namespace PAdv

variable [Enum K] [DecidableEq K]

/-- Alg. 1, line 4 literally: `x⁰ ~ x¹`, `M_i` is `(𝒫_i, ℰ_i, δ_i)`-ODP,
`sup_{P ∈ 𝒫_i} ℰ_i(P) ≤ ε_r`, `δ_i ≤ δ_r`; lines 7–8 update the budget by the realised block. -/
def Valid (Nbr : X → X → Prop) : PAdv X O K R → R → R → Prop
  | .leaf, _, _ => True
  | .node c cont, ε, δ =>
      Nbr c.x₀ c.x₁ ∧ ODP Nbr c.M c.κ c.E c.delta ∧ supCost c.E ≤ ε ∧ c.delta ≤ δ ∧
        ∀ o, Valid Nbr (cont o) (ε - c.E (c.κ o)) (δ - c.delta)

/-- The output-wise form of a partition-faithful adversary. -/
def toAdv : PAdv X O K R → Adv X O R
  | .leaf => .leaf
  | .node c cont =>
      .node ⟨c.x₀, c.x₁, c.M, fun o => c.E (c.κ o), c.delta⟩ (fun o => toAdv (cont o))

theorem valid_toAdv (Nbr : X → X → Prop) (A : PAdv X O K R) :
    ∀ ε δ, A.Valid Nbr ε δ → A.toAdv.Valid Nbr ε δ := by
  induction A with
  | leaf => intro _ _ _; exact trivial
  | node c cont ih =>
    intro ε δ hv
    obtain ⟨hN, hodp, hsup, hdel, hcont⟩ := hv
    refine ⟨hN, (ODP_iff_ODPcost Nbr c.M c.κ c.E c.delta).mp hodp, ?_, hdel, ?_⟩
    · intro o
      have := le_supCost c.E (c.κ o)
      show c.E (c.κ o) ≤ ε
      grind
    · intro o
      exact ih o _ _ (hcont o)

/-- The probability of a view under `toAdv` (the views are the same). -/
def prob (b : Bool) (A : PAdv X O K R) (V : List O → Bool) : R := A.toAdv.prob b V

/-- A history-based adversary for a fixed number of rounds `I`: at each round it chooses from
the outputs seen so far (Alg. 1, line 4: `𝒜(R, A_1, …, A_{i−1})`). -/
def ofHistory (π : List O → PChoice X O K R) : Nat → List O → PAdv X O K R
  | 0, _ => .leaf
  | n + 1, h => .node (π h) (fun o => ofHistory π n (h ++ [o]))

end PAdv

/-- **Theorem 7**, partition form: for every adversary that returns valid triples
`(𝒫_i, ℰ_i, δ_i)` (Alg. 1) and every set of views `V`, `Pr(V⁰ ∈ V) ≤ e^{ε_t} Pr(V¹ ∈ V) + δ_t`. -/
theorem odp_composition_partition [Enum K] [DecidableEq K] (Nbr : X → X → Prop)
    (A : PAdv X O K R) (ε δ : R) (hε : 0 ≤ ε) (hδ : 0 ≤ δ) (hv : A.Valid Nbr ε δ)
    (V : List O → Bool) : A.prob false V ≤ exp ε * A.prob true V + δ :=
  odp_composition Nbr A.toAdv ε δ hε hδ (PAdv.valid_toAdv Nbr A ε δ hv) V

/-- **Theorem 7** for Alg. 1 as written: `I` rounds, the adversary choosing each round from the
outputs seen so far. -/
theorem odp_composition_alg1 [Enum K] [DecidableEq K] (Nbr : X → X → Prop)
    (π : List O → PChoice X O K R) (I : Nat) (εt δt : R) (hε : 0 ≤ εt) (hδ : 0 ≤ δt)
    (hv : (PAdv.ofHistory π I []).Valid Nbr εt δt) (V : List O → Bool) :
    (PAdv.ofHistory π I []).prob false V ≤ exp εt * (PAdv.ofHistory π I []).prob true V + δt :=
  odp_composition_partition Nbr _ εt δt hε hδ hv V

end

end Odp.Core
