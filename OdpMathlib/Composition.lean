/-
Copyright (c) 2025 The odp authors. Released under Apache 2.0.

# Algorithm 1 (ODP composition experiment) and Theorem 7

A deterministic adaptive adversary is a tree: at a node it picks (Alg. 1, line 4)
neighbouring databases `x⁰, x¹`, a mechanism `M`, its ODP costs and `δ_i`; after seeing the
output `o` it continues as `cont o` (the paper's `𝒜_r(v)`). The budget bookkeeping of lines 7–8
(`ε_r := ε_r − ℰ_i(P_{i,k})`, `δ_r := δ_r − δ_i`) is built into `Adv.Valid`.

* `Choice`/`Adv` use the output-wise costs (`cost o = ℰ_i(P_{i,k})` for `o ∈ P_{i,k}`);
  `PChoice`/`PAdv` carry the partition `(K, κ, ℰ)` itself and reduce to the former
  (`PAdv.valid_toAdv`).
* `δ_i` is a field of the choice: it cannot depend on the realised block (paper, Sec. 3.2).
* The tree may have branches of different finite lengths; the paper's fixed `I` with padding by
  trivial mechanisms is the special case of a tree of depth `I`.
* A randomised adversary draws its coins `r ∼ ρ` first and then plays `A r`; its view contains
  the coins (`odp_composition_randomized`).
-/
import Mathlib
import OdpMathlib.Prob
import OdpMathlib.Defs
import OdpMathlib.Lemma20

set_option autoImplicit false

noncomputable section

open scoped ENNReal

namespace Odp

/-- What the adversary picks in one round (Alg. 1, line 4), output-wise form. -/
structure Choice (X O : Type) where
  /-- database used when the secret bit is `b = 0` -/
  x₀ : X
  /-- database used when the secret bit is `b = 1` -/
  x₁ : X
  /-- the mechanism `M_i` -/
  M : X → PMF O
  /-- `cost o = ℰ_i(P_{i,k})` for the block `P_{i,k}` that contains `o` -/
  cost : O → ℝ
  /-- `δ_i`, fixed before the output is seen -/
  delta : ℝ≥0∞

/-- Deterministic adaptive adversary of Alg. 1. -/
inductive Adv (X O : Type) : Type where
  | leaf : Adv X O
  | node (c : Choice X O) (cont : O → Adv X O) : Adv X O

/-! ### Partition-faithful adversaries

Here the adversary returns the triple `(𝒫_i, ℰ_i, δ_i)` of Alg. 1 literally: a label type `K`,
the labelling `κ` (blocks `P_{i,k} = κ ⁻¹' {k}`) and the block costs `E`. -/

/-- One round of Alg. 1, line 4, with an explicit ODP partition. -/
structure PChoice (X O : Type) : Type 1 where
  x₀ : X
  x₁ : X
  M : X → PMF O
  /-- index set of the partition -/
  K : Type
  /-- `κ o = k` iff `o ∈ P_{i,k}` -/
  κ : O → K
  /-- `E k = ℰ_i(P_{i,k})` -/
  E : K → ℝ
  /-- `δ_i`, independent of the block -/
  delta : ℝ≥0∞

/-- Adversary of Alg. 1 that returns explicit partitions. -/
inductive PAdv (X O : Type) : Type 1 where
  | leaf : PAdv X O
  | node (c : PChoice X O) (cont : O → PAdv X O) : PAdv X O

namespace Adv

variable {X O : Type}

/-- Alg. 1 run with remaining budget `(ε, δ)`: every round passes the checks of line 4
(`x⁰ ~ x¹`, `M_i` is ODP, `sup ℰ_i ≤ ε_r`, `δ_i ≤ δ_r`) and the next round starts from the
budget updated as in lines 7–8. -/
def Valid (Nbr : X → X → Prop) : Adv X O → ℝ → ℝ≥0∞ → Prop
  | .leaf, _, _ => True
  | .node c cont, ε, δ =>
      Nbr c.x₀ c.x₁ ∧ ODPcost Nbr c.M c.cost c.delta ∧ (∀ o, c.cost o ≤ ε) ∧ c.delta ≤ δ ∧
        ∀ o, Valid Nbr (cont o) (ε - c.cost o) (δ - c.delta)

/-- The view `(A_1, A_2, …)` of Alg. 1; `sel = Choice.x₀` is the bit `b = 0`,
`sel = Choice.x₁` is `b = 1`. -/
def view (sel : Choice X O → X) : Adv X O → PMF (List O)
  | .leaf => PMF.pure []
  | .node c cont => (c.M (sel c)).bind (fun o => (view sel (cont o)).map (List.cons o))

theorem view_leaf (sel : Choice X O → X) : view sel (leaf : Adv X O) = PMF.pure [] := rfl

theorem view_node (sel : Choice X O → X) (c : Choice X O) (cont : O → Adv X O) :
    view sel (node c cont)
      = (c.M (sel c)).bind (fun o => (view sel (cont o)).map (List.cons o)) := rfl

theorem valid_node_iff (Nbr : X → X → Prop) (c : Choice X O) (cont : O → Adv X O) (ε : ℝ)
    (δ : ℝ≥0∞) :
    Valid Nbr (node c cont) ε δ ↔
      (Nbr c.x₀ c.x₁ ∧ ODPcost Nbr c.M c.cost c.delta ∧ (∀ o, c.cost o ≤ ε) ∧ c.delta ≤ δ ∧
        ∀ o, Valid Nbr (cont o) (ε - c.cost o) (δ - c.delta)) :=
  Iff.rfl

/-- A larger remaining budget keeps an adversary valid. -/
theorem Valid.mono (Nbr : X → X → Prop) :
    ∀ (A : Adv X O) (ε ε' : ℝ) (δ δ' : ℝ≥0∞),
      Valid Nbr A ε δ → ε ≤ ε' → δ ≤ δ' → Valid Nbr A ε' δ' := by
  intro A
  induction A with
  | leaf =>
    intro ε ε' δ δ' _ _ _
    exact trivial
  | node c cont ih =>
    intro ε ε' δ δ' h hε hδ
    obtain ⟨hN, hODP, hcost, hdel, hcont⟩ := (valid_node_iff Nbr c cont ε δ).mp h
    refine (valid_node_iff Nbr c cont ε' δ').mpr
      ⟨hN, hODP, fun o => le_trans (hcost o) hε, le_trans hdel hδ, ?_⟩
    intro o
    have h1 : ε - c.cost o ≤ ε' - c.cost o := by linarith
    exact ih o (ε - c.cost o) (ε' - c.cost o) (δ - c.delta) (δ' - c.delta) (hcont o) h1
      (tsub_le_tsub_right hδ c.delta)

end Adv

variable {X O : Type}

/-- **Theorem 7** (deterministic adversary). For every adversary that is valid for the budget
`(ε_t, δ_t)` with `0 ≤ ε_t`, and every set of views `𝒱`,
`Pr(V⁰ ∈ 𝒱) ≤ e^{ε_t} Pr(V¹ ∈ 𝒱) + δ_t`. -/
theorem odp_composition (Nbr : X → X → Prop) :
    ∀ (A : Adv X O) (ε : ℝ) (δ : ℝ≥0∞), 0 ≤ ε → A.Valid Nbr ε δ → ∀ V : Set (List O),
      Pr (Adv.view Choice.x₀ A) V
        ≤ ENNReal.ofReal (Real.exp ε) * Pr (Adv.view Choice.x₁ A) V + δ := by
  intro A
  induction A with
  | leaf =>
    intro ε δ hε _ V
    rw [Adv.view_leaf, Adv.view_leaf]
    exact le_mul_add_of_one_le (one_le_exp_of_nonneg hε)
  | node c cont ih =>
    intro ε δ hε hA V
    obtain ⟨hN, hODP, hcost, hδ, hcont⟩ := (Adv.valid_node_iff Nbr c cont ε δ).mp hA
    rw [Adv.view_node, Adv.view_node, Pr_bind, Pr_bind]
    simp only [Pr_map]
    exact lemma20 (c.M c.x₀) (c.M c.x₁) c.cost c.delta (hODP c.x₀ c.x₁ hN) ε δ hδ
      (fun o => Adv.view Choice.x₀ (cont o)) (fun o => Adv.view Choice.x₁ (cont o))
      (fun o => List.cons o ⁻¹' V)
      (fun o => ih o (ε - c.cost o) (δ - c.delta) (sub_nonneg.mpr (hcost o)) (hcont o)
        (List.cons o ⁻¹' V))

/-- **Theorem 7** (randomised adversary). The coins `r ∼ ρ` are drawn first and are part of the
view `(r, A_1, A_2, …)`; every `A r` must be valid. -/
theorem odp_composition_randomized (Nbr : X → X → Prop) {R : Type} (ρ : PMF R)
    (A : R → Adv X O) (ε : ℝ) (δ : ℝ≥0∞) (hε : 0 ≤ ε) (hA : ∀ r, (A r).Valid Nbr ε δ)
    (V : Set (R × List O)) :
    Pr (ρ.bind fun r => (Adv.view Choice.x₀ (A r)).map (Prod.mk r)) V
      ≤ ENNReal.ofReal (Real.exp ε)
          * Pr (ρ.bind fun r => (Adv.view Choice.x₁ (A r)).map (Prod.mk r)) V + δ := by
  rw [Pr_bind, Pr_bind]
  simp only [Pr_map]
  have key : ∀ r, ρ r * Pr (Adv.view Choice.x₀ (A r)) (Prod.mk r ⁻¹' V)
      ≤ ENNReal.ofReal (Real.exp ε) * (ρ r * Pr (Adv.view Choice.x₁ (A r)) (Prod.mk r ⁻¹' V))
        + ρ r * δ := by
    intro r
    have h := odp_composition Nbr (A r) ε δ hε (hA r) (Prod.mk r ⁻¹' V)
    calc ρ r * Pr (Adv.view Choice.x₀ (A r)) (Prod.mk r ⁻¹' V)
        ≤ ρ r * (ENNReal.ofReal (Real.exp ε) * Pr (Adv.view Choice.x₁ (A r)) (Prod.mk r ⁻¹' V)
            + δ) := mul_le_mul' (le_refl _) h
      _ = ENNReal.ofReal (Real.exp ε) * (ρ r * Pr (Adv.view Choice.x₁ (A r)) (Prod.mk r ⁻¹' V))
            + ρ r * δ := by
          -- `ρ r * (E * P + δ) = E * (ρ r * P) + ρ r * δ`; `ring` as fallback
          first
            | (rw [mul_add, mul_left_comm]; done)
            | ring
  calc ∑' r, ρ r * Pr (Adv.view Choice.x₀ (A r)) (Prod.mk r ⁻¹' V)
      ≤ ∑' r, (ENNReal.ofReal (Real.exp ε)
            * (ρ r * Pr (Adv.view Choice.x₁ (A r)) (Prod.mk r ⁻¹' V)) + ρ r * δ) :=
        ENNReal.tsum_le_tsum key
    _ = ENNReal.ofReal (Real.exp ε) * ∑' r, ρ r * Pr (Adv.view Choice.x₁ (A r)) (Prod.mk r ⁻¹' V)
          + δ := by
        rw [ENNReal.tsum_add, ENNReal.tsum_mul_left, ENNReal.tsum_mul_right, PMF.tsum_coe ρ,
          one_mul]

/-- The output-wise form of a partition choice. -/
def PChoice.toChoice (c : PChoice X O) : Choice X O :=
  { x₀ := c.x₀, x₁ := c.x₁, M := c.M, cost := fun o => c.E (c.κ o), delta := c.delta }

namespace PAdv

/-- Forget the partition: the output-wise adversary with `cost o = ℰ(P_{κ o})`. -/
def toAdv : PAdv X O → Adv X O
  | .leaf => .leaf
  | .node c cont => .node c.toChoice (fun o => toAdv (cont o))

/-- Line 4 with `sup_{P ∈ 𝒫_i} ℰ_i(P) ≤ ε_r` (every block cost is within the budget), and the
updates of lines 7–8 with the realised block `κ o`. -/
def Valid (Nbr : X → X → Prop) : PAdv X O → ℝ → ℝ≥0∞ → Prop
  | .leaf, _, _ => True
  | .node c cont, ε, δ =>
      Nbr c.x₀ c.x₁ ∧ ODP Nbr c.M c.κ c.E c.delta ∧ (∀ k, c.E k ≤ ε) ∧ c.delta ≤ δ ∧
        ∀ o, Valid Nbr (cont o) (ε - c.E (c.κ o)) (δ - c.delta)

theorem valid_node_iff (Nbr : X → X → Prop) (c : PChoice X O) (cont : O → PAdv X O) (ε : ℝ)
    (δ : ℝ≥0∞) :
    Valid Nbr (node c cont) ε δ ↔
      (Nbr c.x₀ c.x₁ ∧ ODP Nbr c.M c.κ c.E c.delta ∧ (∀ k, c.E k ≤ ε) ∧ c.delta ≤ δ ∧
        ∀ o, Valid Nbr (cont o) (ε - c.E (c.κ o)) (δ - c.delta)) :=
  Iff.rfl

theorem toAdv_node (c : PChoice X O) (cont : O → PAdv X O) :
    toAdv (node c cont) = Adv.node c.toChoice (fun o => toAdv (cont o)) := rfl

theorem valid_toAdv (Nbr : X → X → Prop) :
    ∀ (A : PAdv X O) (ε : ℝ) (δ : ℝ≥0∞), Valid Nbr A ε δ → (toAdv A).Valid Nbr ε δ := by
  intro A
  induction A with
  | leaf =>
    intro ε δ _
    exact trivial
  | node c cont ih =>
    intro ε δ h
    obtain ⟨hN, hODP, hE, hdel, hcont⟩ := (valid_node_iff Nbr c cont ε δ).mp h
    rw [toAdv_node]
    have hcost : ODPcost Nbr c.M (fun o => c.E (c.κ o)) c.delta :=
      (ODP_iff_ODPcost Nbr c.M c.κ c.E c.delta).mp hODP
    refine (Adv.valid_node_iff Nbr c.toChoice (fun o => toAdv (cont o)) ε δ).mpr
      ⟨hN, hcost, fun o => hE (c.κ o), hdel, ?_⟩
    intro o
    exact ih o (ε - c.E (c.κ o)) (δ - c.delta) (hcont o)

end PAdv

/-- **Theorem 7** for adversaries that return explicit ODP partitions. -/
theorem odp_composition_partition (Nbr : X → X → Prop) (A : PAdv X O) (ε : ℝ) (δ : ℝ≥0∞)
    (hε : 0 ≤ ε) (hA : A.Valid Nbr ε δ) (V : Set (List O)) :
    Pr (Adv.view Choice.x₀ A.toAdv) V
      ≤ ENNReal.ofReal (Real.exp ε) * Pr (Adv.view Choice.x₁ A.toAdv) V + δ :=
  odp_composition Nbr A.toAdv ε δ hε (PAdv.valid_toAdv Nbr A ε δ hA) V

/-- **Theorem 7** for randomised adversaries that return explicit ODP partitions. -/
theorem odp_composition_partition_randomized (Nbr : X → X → Prop) {R : Type} (ρ : PMF R)
    (A : R → PAdv X O) (ε : ℝ) (δ : ℝ≥0∞) (hε : 0 ≤ ε) (hA : ∀ r, (A r).Valid Nbr ε δ)
    (V : Set (R × List O)) :
    Pr (ρ.bind fun r => (Adv.view Choice.x₀ (A r).toAdv).map (Prod.mk r)) V
      ≤ ENNReal.ofReal (Real.exp ε)
          * Pr (ρ.bind fun r => (Adv.view Choice.x₁ (A r).toAdv).map (Prod.mk r)) V + δ :=
  odp_composition_randomized Nbr ρ (fun r => (A r).toAdv) ε δ hε
    (fun r => PAdv.valid_toAdv Nbr (A r) ε δ (hA r)) V

end Odp
