/-
Copyright (c) 2025 The odp authors. Released under Apache 2.0.

# Lemmas 3, 4 and 6 of the paper (Sec. 3)

* Lemma 3 (`odp_of_dp`): DP gives ODP for any partition with the constant cost `ℰ ≡ ε`.
* Lemma 4 (`dp_of_odp`, `dp_of_odp_sup`): ODP gives DP with `ε = sup_k ℰ(P_k)`.
  The bound form only needs an upper bound `ε` of the costs; the sup form is the paper's
  statement (the costs must be bounded above for the real `sup` to be meaningful).
* Lemma 6 (`odp_of_subsetDP`): subset-DP guarantees on the blocks combine to ODP with
  `δ = ∑_k Δ(P_k)`.

The cost-form variants (`odpCost_of_dp`, `dp_of_odpCost`) are used by the composition theorem.
The costs may be any real numbers here (the paper asks `ℰ ≥ 0`, which is never needed).
-/
import Mathlib
import OdpMathlib.Prob
import OdpMathlib.Defs

set_option autoImplicit false

noncomputable section

open scoped ENNReal

namespace Odp

variable {X O : Type*}

/-- **Lemma 3.** An (ε,δ)-DP mechanism is (𝒫, ℰ ≡ ε, δ)-ODP for every partition `κ`. -/
theorem odp_of_dp {K : Type*} (Nbr : X → X → Prop) (M : X → PMF O) (ε : ℝ) (δ : ℝ≥0∞)
    (h : DP Nbr M ε δ) (κ : O → K) : ODP Nbr M κ (fun _ => ε) δ := by
  intro x x' hx S
  calc Pr (M x) S ≤ ENNReal.ofReal (Real.exp ε) * Pr (M x') S + δ := h x x' hx S
    _ = δ + ∑' k, ENNReal.ofReal (Real.exp ε) * Pr (M x') (S ∩ κ ⁻¹' {k}) := by
        rw [tsum_const_mul_Pr_fiber, add_comm]

/-- **Lemma 4** (bound form). If every block cost is at most `ε`, an ODP mechanism is
(ε,δ)-DP. -/
theorem dp_of_odp {K : Type*} (Nbr : X → X → Prop) (M : X → PMF O) (κ : O → K) (E : K → ℝ)
    (δ : ℝ≥0∞) (ε : ℝ) (hE : ∀ k, E k ≤ ε) (h : ODP Nbr M κ E δ) : DP Nbr M ε δ := by
  intro x x' hx S
  have h2 : ∑' k, ENNReal.ofReal (Real.exp (E k)) * Pr (M x') (S ∩ κ ⁻¹' {k})
      ≤ ∑' k, ENNReal.ofReal (Real.exp ε) * Pr (M x') (S ∩ κ ⁻¹' {k}) := by
    apply ENNReal.tsum_le_tsum
    intro k
    exact mul_le_mul' (ENNReal.ofReal_le_ofReal (Real.exp_le_exp.mpr (hE k))) (le_refl _)
  calc Pr (M x) S
      ≤ δ + ∑' k, ENNReal.ofReal (Real.exp (E k)) * Pr (M x') (S ∩ κ ⁻¹' {k}) := h x x' hx S
    _ ≤ δ + ∑' k, ENNReal.ofReal (Real.exp ε) * Pr (M x') (S ∩ κ ⁻¹' {k}) :=
        add_le_add (le_refl δ) h2
    _ = ENNReal.ofReal (Real.exp ε) * Pr (M x') S + δ := by
        rw [tsum_const_mul_Pr_fiber, add_comm]

/-- **Lemma 4** (the paper's form): an ODP mechanism is `(sup_k ℰ(P_k), δ)`-DP. -/
theorem dp_of_odp_sup {K : Type*} (Nbr : X → X → Prop) (M : X → PMF O) (κ : O → K)
    (E : K → ℝ) (δ : ℝ≥0∞) (hbdd : BddAbove (Set.range E)) (h : ODP Nbr M κ E δ) :
    DP Nbr M (⨆ k, E k) δ :=
  dp_of_odp Nbr M κ E δ (⨆ k, E k) (fun k => le_ciSup hbdd k) h

/-- **Lemma 6.** If `M` is `(P_k, ℰ(P_k), Δ(P_k))`-subset DP for every block, then `M` is
`(𝒫, ℰ, ∑_k Δ(P_k))`-ODP. -/
theorem odp_of_subsetDP {K : Type*} (Nbr : X → X → Prop) (M : X → PMF O) (κ : O → K)
    (E : K → ℝ) (Delta : K → ℝ≥0∞) (h : ∀ k, SubsetDP Nbr M (κ ⁻¹' {k}) (E k) (Delta k)) :
    ODP Nbr M κ E (∑' k, Delta k) := by
  intro x x' hx S
  rw [Pr_eq_tsum_fiber (M x) κ S]
  calc ∑' k, Pr (M x) (S ∩ κ ⁻¹' {k})
      ≤ ∑' k, (ENNReal.ofReal (Real.exp (E k)) * Pr (M x') (S ∩ κ ⁻¹' {k}) + Delta k) := by
        apply ENNReal.tsum_le_tsum
        intro k
        exact h k x x' hx (S ∩ κ ⁻¹' {k}) (fun o ho => ho.2)
    _ = ∑' k, ENNReal.ofReal (Real.exp (E k)) * Pr (M x') (S ∩ κ ⁻¹' {k}) + ∑' k, Delta k :=
        ENNReal.tsum_add
    _ = ∑' k, Delta k + ∑' k, ENNReal.ofReal (Real.exp (E k)) * Pr (M x') (S ∩ κ ⁻¹' {k}) :=
        add_comm _ _

/-- Lemma 3, output-wise form. -/
theorem odpCost_of_dp (Nbr : X → X → Prop) (M : X → PMF O) (ε : ℝ) (δ : ℝ≥0∞)
    (h : DP Nbr M ε δ) : ODPcost Nbr M (fun _ => ε) δ := by
  intro x x' hx S
  calc Pr (M x) S ≤ ENNReal.ofReal (Real.exp ε) * Pr (M x') S + δ := h x x' hx S
    _ = δ + ∑' o, S.indicator (fun o => ENNReal.ofReal (Real.exp ε) * M x' o) o := by
        rw [tsum_indicator_mul_Pr, add_comm]

/-- Lemma 4, output-wise form: costs bounded by `ε` give (ε,δ)-DP. -/
theorem dp_of_odpCost (Nbr : X → X → Prop) (M : X → PMF O) (cost : O → ℝ) (δ : ℝ≥0∞) (ε : ℝ)
    (hc : ∀ o, cost o ≤ ε) (h : ODPcost Nbr M cost δ) : DP Nbr M ε δ := by
  intro x x' hx S
  have h2 : ∑' o, S.indicator (fun o => ENNReal.ofReal (Real.exp (cost o)) * M x' o) o
      ≤ ∑' o, S.indicator (fun o => ENNReal.ofReal (Real.exp ε) * M x' o) o :=
    tsum_indicator_mono S (fun o _ =>
      mul_le_mul' (ENNReal.ofReal_le_ofReal (Real.exp_le_exp.mpr (hc o))) (le_refl _))
  calc Pr (M x) S
      ≤ δ + ∑' o, S.indicator (fun o => ENNReal.ofReal (Real.exp (cost o)) * M x' o) o :=
        h x x' hx S
    _ ≤ δ + ∑' o, S.indicator (fun o => ENNReal.ofReal (Real.exp ε) * M x' o) o :=
        add_le_add (le_refl δ) h2
    _ = ENNReal.ofReal (Real.exp ε) * Pr (M x') S + δ := by
        rw [tsum_indicator_mul_Pr, add_comm]

end Odp
