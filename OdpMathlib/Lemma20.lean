/-
Copyright (c) 2025 The odp authors. Released under Apache 2.0.

# Lemma 20 of the paper (Appendix B), discrete form

The paper's proof uses the Hahn decomposition of the signed measure
`μ(S) = Pr(M₁(x⁰) ∈ S) − ∑_k e^{ℰ(P_k)} Pr(M₁(x¹) ∈ S ∩ P_k)`.
For probability mass functions the positive part `μ₊` is the pointwise excess
`r o = p₀ o − e^{cost o} p₁ o` (truncated subtraction in `ℝ≥0∞`):

* eq. (9), `μ₊(O₁) ≤ δ`, is `tsum_tsub_le`, obtained by applying ODP to the set
  `{o | e^{cost o} p₁ o ≤ p₀ o}`;
* eqs. (6)–(8), including the `min(·, 1)` step, are the two-case inequality `key_pointwise`.

Unlike the paper, no hypothesis `ℰ(P_k) ≤ ε_t` is needed.
-/
import Mathlib
import OdpMathlib.Prob
import OdpMathlib.Defs

set_option autoImplicit false

noncomputable section

open scoped ENNReal

namespace Odp

variable {O O₂ : Type*}

/-- Pointwise core of eqs. (6)–(8). Read `p = Pr(M₁(x⁰) = v)`, `c = e^{ℰ} Pr(M₁(x¹) = v)`,
`r = μ₊({v})`, `a = Pr(M₂⁰(v) ∈ T)`, `g = e^{ε_t − ℰ} Pr(M₂¹(v) ∈ T)`, `d = δ_t − δ`.
The case split `g ≤ 1` / `1 < g` is the paper's `min(·, 1)`. -/
theorem key_pointwise {p c r a g d : ℝ≥0∞} (hp : p ≤ c + r) (ha : a ≤ 1) (hag : a ≤ g + d) :
    p * a ≤ c * g + r + p * d := by
  rcases le_or_gt g 1 with hg | hg
  · calc p * a ≤ p * (g + d) := mul_le_mul' (le_refl p) hag
      _ = p * g + p * d := mul_add p g d
      _ ≤ (c + r) * g + p * d := add_le_add (mul_le_mul' hp (le_refl g)) (le_refl _)
      _ = c * g + r * g + p * d := by rw [add_mul]
      _ ≤ c * g + r * 1 + p * d :=
          add_le_add (add_le_add (le_refl _) (mul_le_mul' (le_refl r) hg)) (le_refl _)
      _ = c * g + r + p * d := by rw [mul_one]
  · calc p * a ≤ p * 1 := mul_le_mul' (le_refl p) ha
      _ = p := mul_one p
      _ ≤ c + r := hp
      _ = c * 1 + r := by rw [mul_one]
      _ ≤ c * g + r := add_le_add (mul_le_mul' (le_refl c) (le_of_lt hg)) (le_refl r)
      _ = c * g + r + 0 := (add_zero _).symm
      _ ≤ c * g + r + p * d := add_le_add (le_refl _) (by apply zero_le)

/-- Discrete eq. (9): if `∑_{o∈S} p o ≤ δ + ∑_{o∈S} c o` for every `S`, then the total excess
`∑_o (p o − c o)` (the positive part `μ₊(O₁)`) is at most `δ`. -/
theorem tsum_tsub_le {p c : O → ℝ≥0∞} {δ : ℝ≥0∞} (hp : ∑' o, p o ≠ ⊤)
    (h : ∀ S : Set O, ∑' o, S.indicator p o ≤ δ + ∑' o, S.indicator c o) :
    ∑' o, (p o - c o) ≤ δ := by
  have h1 : ∀ o, {x | c x ≤ p x}.indicator p o
      = (p o - c o) + {x | c x ≤ p x}.indicator c o := by
    intro o
    by_cases ho : c o ≤ p o
    · have hm : o ∈ {x | c x ≤ p x} := ho
      rw [ind_of_mem hm, ind_of_mem hm]
      exact (tsub_add_cancel_of_le ho).symm
    · have hm : o ∉ {x | c x ≤ p x} := ho
      rw [ind_of_not_mem hm, ind_of_not_mem hm, add_zero]
      exact (tsub_eq_zero_of_le (le_of_lt (not_le.mp ho))).symm
  have h2 : ∑' o, {x | c x ≤ p x}.indicator c o ≠ ⊤ := by
    apply ne_top_of_le_ne_top hp
    apply ENNReal.tsum_le_tsum
    intro o
    by_cases ho : c o ≤ p o
    · have hm : o ∈ {x | c x ≤ p x} := ho
      rw [ind_of_mem hm]
      exact ho
    · have hm : o ∉ {x | c x ≤ p x} := ho
      rw [ind_of_not_mem hm]
      apply zero_le
  have hS : ∑' o, {x | c x ≤ p x}.indicator p o ≤ δ + ∑' o, {x | c x ≤ p x}.indicator c o :=
    h {x | c x ≤ p x}
  rw [tsum_congr h1, ENNReal.tsum_add] at hS
  exact ENNReal.le_of_add_le_add_right h2 hS

/-- **Lemma 20** (discrete, slice form). `T v ⊆ O₂` is the slice `{w | (v, w) ∈ 𝒱}` of a set of
views; `q₀ v`, `q₁ v` are the laws of `M₂⁰(v)`, `M₂¹(v)`.
Hypotheses: `M₁` satisfies the ODP inequality for the pair `(x⁰, x¹)` (`hODP`, output-wise form
with `cost v = ℰ(P_k)` for `v ∈ P_k`), `δ ≤ δ_t`, and for every `v`
`Pr(M₂⁰(v) ∈ T) ≤ e^{ε_t − cost v} Pr(M₂¹(v) ∈ T) + (δ_t − δ)`.
Conclusion: `Pr(V⁰ ∈ 𝒱) ≤ e^{ε_t} Pr(V¹ ∈ 𝒱) + δ_t`, written as sums over `v`. -/
theorem lemma20 (p₀ p₁ : PMF O) (cost : O → ℝ) (δ : ℝ≥0∞)
    (hODP : ∀ S : Set O,
      Pr p₀ S ≤ δ + ∑' o, S.indicator (fun o => ENNReal.ofReal (Real.exp (cost o)) * p₁ o) o)
    (ε : ℝ) (δt : ℝ≥0∞) (hδ : δ ≤ δt) (q₀ q₁ : O → PMF O₂) (T : O → Set O₂)
    (hq : ∀ o, Pr (q₀ o) (T o)
      ≤ ENNReal.ofReal (Real.exp (ε - cost o)) * Pr (q₁ o) (T o) + (δt - δ)) :
    ∑' o, p₀ o * Pr (q₀ o) (T o)
      ≤ ENNReal.ofReal (Real.exp ε) * ∑' o, p₁ o * Pr (q₁ o) (T o) + δt := by
  have hex : ∑' o, (p₀ o - ENNReal.ofReal (Real.exp (cost o)) * p₁ o) ≤ δ :=
    tsum_tsub_le (p := ⇑p₀) (c := fun o => ENNReal.ofReal (Real.exp (cost o)) * p₁ o)
      (PMF.tsum_coe_ne_top p₀) hODP
  have hpt : ∀ o, p₀ o * Pr (q₀ o) (T o)
      ≤ ENNReal.ofReal (Real.exp ε) * (p₁ o * Pr (q₁ o) (T o))
        + (p₀ o - ENNReal.ofReal (Real.exp (cost o)) * p₁ o) + p₀ o * (δt - δ) := by
    intro o
    have h1 : p₀ o * Pr (q₀ o) (T o)
        ≤ ENNReal.ofReal (Real.exp (cost o)) * p₁ o
            * (ENNReal.ofReal (Real.exp (ε - cost o)) * Pr (q₁ o) (T o))
          + (p₀ o - ENNReal.ofReal (Real.exp (cost o)) * p₁ o) + p₀ o * (δt - δ) :=
      key_pointwise le_add_tsub (Pr_le_one (q₀ o) (T o)) (hq o)
    have h2 : ENNReal.ofReal (Real.exp (cost o)) * p₁ o
          * (ENNReal.ofReal (Real.exp (ε - cost o)) * Pr (q₁ o) (T o))
        = ENNReal.ofReal (Real.exp ε) * (p₁ o * Pr (q₁ o) (T o)) := by
      rw [← exp_mul_exp_sub (cost o) ε]
      -- goal: `A * P * (B * Q) = A * B * (P * Q)`; `ring` as fallback
      first
        | exact mul_mul_mul_comm _ _ _ _
        | ring
    rw [h2] at h1
    exact h1
  calc ∑' o, p₀ o * Pr (q₀ o) (T o)
      ≤ ∑' o, (ENNReal.ofReal (Real.exp ε) * (p₁ o * Pr (q₁ o) (T o))
          + (p₀ o - ENNReal.ofReal (Real.exp (cost o)) * p₁ o) + p₀ o * (δt - δ)) :=
        ENNReal.tsum_le_tsum hpt
    _ = ENNReal.ofReal (Real.exp ε) * ∑' o, p₁ o * Pr (q₁ o) (T o)
          + ∑' o, (p₀ o - ENNReal.ofReal (Real.exp (cost o)) * p₁ o)
          + (∑' o, p₀ o) * (δt - δ) := by
        rw [ENNReal.tsum_add, ENNReal.tsum_add, ENNReal.tsum_mul_left, ENNReal.tsum_mul_right]
    _ ≤ ENNReal.ofReal (Real.exp ε) * ∑' o, p₁ o * Pr (q₁ o) (T o) + δ + 1 * (δt - δ) := by
        rw [PMF.tsum_coe p₀]
        exact add_le_add (add_le_add (le_refl _) hex) (le_refl _)
    _ = ENNReal.ofReal (Real.exp ε) * ∑' o, p₁ o * Pr (q₁ o) (T o) + δt := by
        rw [one_mul, add_assoc, add_tsub_cancel_of_le hδ]

/-- **Lemma 20** (the paper's form, views are pairs `(v, w) ∈ O × O₂`):
`Pr((M₁(x⁰), M₂⁰(M₁(x⁰))) ∈ 𝒱) ≤ e^{ε_t} Pr((M₁(x¹), M₂¹(M₁(x¹))) ∈ 𝒱) + δ_t`. -/
theorem lemma20_pair (p₀ p₁ : PMF O) (cost : O → ℝ) (δ : ℝ≥0∞)
    (hODP : ∀ S : Set O,
      Pr p₀ S ≤ δ + ∑' o, S.indicator (fun o => ENNReal.ofReal (Real.exp (cost o)) * p₁ o) o)
    (ε : ℝ) (δt : ℝ≥0∞) (hδ : δ ≤ δt) (q₀ q₁ : O → PMF O₂)
    (hq : ∀ o (T : Set O₂),
      Pr (q₀ o) T ≤ ENNReal.ofReal (Real.exp (ε - cost o)) * Pr (q₁ o) T + (δt - δ))
    (V : Set (O × O₂)) :
    Pr (p₀.bind fun o => (q₀ o).map (Prod.mk o)) V
      ≤ ENNReal.ofReal (Real.exp ε) * Pr (p₁.bind fun o => (q₁ o).map (Prod.mk o)) V + δt := by
  rw [Pr_bind, Pr_bind]
  simp only [Pr_map]
  exact lemma20 p₀ p₁ cost δ hODP ε δt hδ q₀ q₁ (fun o => Prod.mk o ⁻¹' V)
    (fun o => hq o (Prod.mk o ⁻¹' V))

/-- **Lemma 20** with the hypotheses exactly as in the paper: `M₁` is `(𝒫, ℰ, δ)`-ODP with the
partition `κ`, `x⁰` and `x¹` are neighbours, `δ ≤ δ_t`, and for `v ∈ P_k` the second mechanisms
satisfy `Pr(M₂⁰(v) ∈ T) ≤ e^{ε_t − ℰ(P_k)} Pr(M₂¹(v) ∈ T) + δ_t − δ`. -/
theorem lemma20_odp {X K : Type*} (Nbr : X → X → Prop) (M : X → PMF O) (κ : O → K)
    (E : K → ℝ) (δ : ℝ≥0∞) (hM : ODP Nbr M κ E δ) (x₀ x₁ : X) (hx : Nbr x₀ x₁)
    (ε : ℝ) (δt : ℝ≥0∞) (hδ : δ ≤ δt) (q₀ q₁ : O → PMF O₂)
    (hq : ∀ v (T : Set O₂),
      Pr (q₀ v) T ≤ ENNReal.ofReal (Real.exp (ε - E (κ v))) * Pr (q₁ v) T + (δt - δ))
    (V : Set (O × O₂)) :
    Pr ((M x₀).bind fun v => (q₀ v).map (Prod.mk v)) V
      ≤ ENNReal.ofReal (Real.exp ε) * Pr ((M x₁).bind fun v => (q₁ v).map (Prod.mk v)) V
        + δt := by
  have hcost : ODPcost Nbr M (fun o => E (κ o)) δ := (ODP_iff_ODPcost Nbr M κ E δ).mp hM
  exact lemma20_pair (M x₀) (M x₁) (fun v => E (κ v)) δ (hcost x₀ x₁ hx) ε δt hδ q₀ q₁ hq V

end Odp
