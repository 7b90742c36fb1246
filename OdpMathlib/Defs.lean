/-
Copyright (c) 2025 The odp authors. Released under Apache 2.0.

# Definitions 1, 2 and 5 of the paper (Sec. 3)

* `X` is the space of databases and `Nbr : X → X → Prop` the neighbouring relation (any relation;
  symmetry is never used).
* A mechanism is `M : X → PMF O`.
* A partition `𝒫 = {P_k}` of the output set is given by a labelling `κ : O → K`, with blocks
  `P_k = κ ⁻¹' {k}`; `E : K → ℝ` is `ℰ(P_k)`.
* `e^x` is `ENNReal.ofReal (Real.exp x)`; probabilities and `δ` live in `ℝ≥0∞`.

Events range over all subsets `S ⊆ O`; outside the range of `M` every probability is `0`, so this
is the same as quantifying over `S ⊆ Range(M)` as in Definition 1.
-/
import Mathlib
import OdpMathlib.Prob

set_option autoImplicit false

noncomputable section

open scoped ENNReal

namespace Odp

variable {X O : Type*}

/-- **Definition 1** ((ε,δ)-differential privacy). -/
def DP (Nbr : X → X → Prop) (M : X → PMF O) (ε : ℝ) (δ : ℝ≥0∞) : Prop :=
  ∀ x x', Nbr x x' → ∀ S : Set O,
    Pr (M x) S ≤ ENNReal.ofReal (Real.exp ε) * Pr (M x') S + δ

/-- **Definition 2** ((𝒫,ℰ,δ)-output differential privacy), partition form:
`Pr(M x ∈ S) ≤ δ + ∑_k e^{ℰ(P_k)} Pr(M x' ∈ S ∩ P_k)`. -/
def ODP {K : Type*} (Nbr : X → X → Prop) (M : X → PMF O) (κ : O → K) (E : K → ℝ)
    (δ : ℝ≥0∞) : Prop :=
  ∀ x x', Nbr x x' → ∀ S : Set O,
    Pr (M x) S ≤ δ + ∑' k, ENNReal.ofReal (Real.exp (E k)) * Pr (M x') (S ∩ κ ⁻¹' {k})

/-- Definition 2, output-wise form: `cost o` is `ℰ` of the block that contains `o`, and the sum
over blocks becomes a sum over the outputs in `S`. See `ODP_iff_ODPcost`. -/
def ODPcost (Nbr : X → X → Prop) (M : X → PMF O) (cost : O → ℝ) (δ : ℝ≥0∞) : Prop :=
  ∀ x x', Nbr x x' → ∀ S : Set O,
    Pr (M x) S ≤ δ + ∑' o, S.indicator (fun o => ENNReal.ofReal (Real.exp (cost o)) * M x' o) o

/-- **Definition 5** ((R,ε,δ)-subset differential privacy). -/
def SubsetDP (Nbr : X → X → Prop) (M : X → PMF O) (R : Set O) (ε : ℝ) (δ : ℝ≥0∞) : Prop :=
  ∀ x x', Nbr x x' → ∀ S : Set O, S ⊆ R →
    Pr (M x) S ≤ ENNReal.ofReal (Real.exp ε) * Pr (M x') S + δ

/-- The partition form and the output-wise form of Definition 2 are equivalent, with
`cost o = ℰ(P_{κ o})`. -/
theorem ODP_iff_ODPcost {K : Type*} (Nbr : X → X → Prop) (M : X → PMF O) (κ : O → K)
    (E : K → ℝ) (δ : ℝ≥0∞) : ODP Nbr M κ E δ ↔ ODPcost Nbr M (fun o => E (κ o)) δ := by
  have key : ∀ (x' : X) (S : Set O),
      ∑' k, ENNReal.ofReal (Real.exp (E k)) * Pr (M x') (S ∩ κ ⁻¹' {k})
        = ∑' o, S.indicator (fun o => ENNReal.ofReal (Real.exp (E (κ o))) * M x' o) o :=
    fun x' S => tsum_mul_Pr_fiber (M x') κ (fun k => ENNReal.ofReal (Real.exp (E k))) S
  constructor
  · intro h x x' hx S
    calc Pr (M x) S
        ≤ δ + ∑' k, ENNReal.ofReal (Real.exp (E k)) * Pr (M x') (S ∩ κ ⁻¹' {k}) := h x x' hx S
      _ = δ + ∑' o, S.indicator (fun o => ENNReal.ofReal (Real.exp (E (κ o))) * M x' o) o := by
          rw [key]
  · intro h x x' hx S
    calc Pr (M x) S
        ≤ δ + ∑' o, S.indicator (fun o => ENNReal.ofReal (Real.exp (E (κ o))) * M x' o) o :=
          h x x' hx S
      _ = δ + ∑' k, ENNReal.ofReal (Real.exp (E k)) * Pr (M x') (S ∩ κ ⁻¹' {k}) := by
          rw [key]

end Odp
