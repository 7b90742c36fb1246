/-
Copyright (c) 2025 The odp authors. Released under Apache 2.0.

# Discrete probability: events and sums

A mechanism has output type `O` and returns a `PMF O` (a probability mass function).
An event is an arbitrary `Set O`, and its probability is the sum of the masses of its
points:

  `Pr p S = ∑' a, S.indicator p a`   (this is `p.toOuterMeasure S`, `Pr_eq_toOuterMeasure`).

No measurability and no countability assumption is needed: a `PMF` has countable support.

All helpers here are stated with explicit statements and short proofs; the indicator is
eliminated only through `ind_of_mem` / `ind_of_not_mem`, so a Mathlib rename touches one line.
-/
import Mathlib

set_option autoImplicit false

noncomputable section

open scoped ENNReal

namespace Odp

variable {α β : Type*}

/-- `Pr p S` is the probability that a sample of `p` lies in `S`. -/
def Pr (p : PMF α) (S : Set α) : ℝ≥0∞ :=
  ∑' a, S.indicator (⇑p) a

/-! ### Indicator helpers (the only places that name Mathlib's indicator lemmas) -/

theorem ind_of_mem {M : Type*} [Zero M] {S : Set α} {f : α → M} {a : α} (h : a ∈ S) :
    S.indicator f a = f a :=
  Set.indicator_of_mem h f

theorem ind_of_not_mem {M : Type*} [Zero M] {S : Set α} {f : α → M} {a : α} (h : a ∉ S) :
    S.indicator f a = 0 :=
  Set.indicator_apply_eq_zero.mpr (fun h' => absurd h' h)

/-- Pointwise monotonicity of an indicator. -/
theorem ind_le_ind {f g : α → ℝ≥0∞} {S : Set α} {a : α} (h : a ∈ S → f a ≤ g a) :
    S.indicator f a ≤ S.indicator g a := by
  by_cases ha : a ∈ S
  · calc S.indicator f a = f a := ind_of_mem ha
      _ ≤ g a := h ha
      _ = S.indicator g a := Eq.symm (ind_of_mem ha)
  · apply le_of_eq
    calc S.indicator f a = 0 := ind_of_not_mem ha
      _ = S.indicator g a := Eq.symm (ind_of_not_mem ha)

/-- A sum over `K` with at most one non-zero term (the form SampCert uses at this pin). -/
theorem tsum_single {K : Type*} (f : K → ℝ≥0∞) (k : K) (h : ∀ j, j ≠ k → f j = 0) :
    ∑' j, f j = f k :=
  tsum_eq_single k (fun j hj => h j hj)

/-! ### Basic facts about `Pr` -/

theorem Pr_eq_toOuterMeasure (p : PMF α) (S : Set α) : Pr p S = p.toOuterMeasure S := by
  unfold Pr
  rw [PMF.toOuterMeasure_apply]

theorem Pr_le_one (p : PMF α) (S : Set α) : Pr p S ≤ 1 := by
  have h : ∑' a, S.indicator (⇑p) a ≤ ∑' a, p a := by
    apply ENNReal.tsum_le_tsum
    intro a
    by_cases ha : a ∈ S
    · exact le_of_eq (ind_of_mem ha)
    · rw [ind_of_not_mem ha]
      apply zero_le
  exact le_trans h (le_of_eq (PMF.tsum_coe p))

/-- Probability of an event under `p.bind f` (sampling `a ∼ p`, then `f a`). -/
theorem Pr_bind (p : PMF α) (f : α → PMF β) (S : Set β) :
    Pr (p.bind f) S = ∑' a, p a * Pr (f a) S := by
  rw [Pr_eq_toOuterMeasure, PMF.toOuterMeasure_bind_apply]
  apply tsum_congr
  intro a
  rw [Pr_eq_toOuterMeasure]

/-- Probability of an event under the image distribution `p.map f`. -/
theorem Pr_map (f : α → β) (p : PMF α) (S : Set β) : Pr (p.map f) S = Pr p (f ⁻¹' S) := by
  rw [Pr_eq_toOuterMeasure, Pr_eq_toOuterMeasure, PMF.toOuterMeasure_map_apply]

/-! ### Sums over the blocks `κ ⁻¹' {k}` of a partition -/

/-- Summing the block sums `∑_{a ∈ S ∩ P_k} w a` with block weights `c k` is the same as summing
`c (κ a) * w a` over `S`. -/
theorem tsum_fiber {K : Type*} (w : α → ℝ≥0∞) (κ : α → K) (c : K → ℝ≥0∞) (S : Set α) :
    ∑' k, c k * ∑' a, (S ∩ κ ⁻¹' {k}).indicator w a
      = ∑' a, S.indicator (fun a => c (κ a) * w a) a := by
  have key : ∀ a, ∑' k, c k * (S ∩ κ ⁻¹' {k}).indicator w a
      = S.indicator (fun a => c (κ a) * w a) a := by
    intro a
    refine Eq.trans (tsum_single _ (κ a) ?_) ?_
    · intro j hj
      show c j * (S ∩ κ ⁻¹' {j}).indicator w a = 0
      have hn : a ∉ S ∩ κ ⁻¹' {j} := fun h => hj (Eq.symm h.2)
      rw [ind_of_not_mem hn, mul_zero]
    · show c (κ a) * (S ∩ κ ⁻¹' {κ a}).indicator w a = S.indicator (fun a => c (κ a) * w a) a
      by_cases ha : a ∈ S
      · have hm : a ∈ S ∩ κ ⁻¹' {κ a} := ⟨ha, rfl⟩
        rw [ind_of_mem hm, ind_of_mem ha]
      · have hm : a ∉ S ∩ κ ⁻¹' {κ a} := fun h => ha h.1
        rw [ind_of_not_mem hm, ind_of_not_mem ha, mul_zero]
  calc ∑' k, c k * ∑' a, (S ∩ κ ⁻¹' {k}).indicator w a
      = ∑' k, ∑' a, c k * (S ∩ κ ⁻¹' {k}).indicator w a := by
        apply tsum_congr
        intro k
        exact ENNReal.tsum_mul_left.symm
    _ = ∑' a, ∑' k, c k * (S ∩ κ ⁻¹' {k}).indicator w a := ENNReal.tsum_comm
    _ = ∑' a, S.indicator (fun a => c (κ a) * w a) a := tsum_congr key

theorem tsum_mul_Pr_fiber {K : Type*} (p : PMF α) (κ : α → K) (c : K → ℝ≥0∞) (S : Set α) :
    ∑' k, c k * Pr p (S ∩ κ ⁻¹' {k}) = ∑' a, S.indicator (fun a => c (κ a) * p a) a :=
  tsum_fiber (⇑p) κ c S

/-- Countable additivity over a partition: `Pr(S) = ∑_k Pr(S ∩ P_k)`. -/
theorem Pr_eq_tsum_fiber {K : Type*} (p : PMF α) (κ : α → K) (S : Set α) :
    Pr p S = ∑' k, Pr p (S ∩ κ ⁻¹' {k}) := by
  have h : ∑' k, (1 : ℝ≥0∞) * ∑' a, (S ∩ κ ⁻¹' {k}).indicator (⇑p) a
      = ∑' a, S.indicator (fun a => (1 : ℝ≥0∞) * p a) a :=
    tsum_fiber (⇑p) κ (fun _ => 1) S
  simp only [one_mul] at h
  exact h.symm

theorem tsum_indicator_const_mul (r : ℝ≥0∞) (f : α → ℝ≥0∞) (S : Set α) :
    ∑' x, S.indicator (fun x => r * f x) x = r * ∑' x, S.indicator f x := by
  rw [← ENNReal.tsum_mul_left]
  apply tsum_congr
  intro x
  by_cases hx : x ∈ S
  · rw [ind_of_mem hx, ind_of_mem hx]
  · rw [ind_of_not_mem hx, ind_of_not_mem hx, mul_zero]

/-- `∑_{a ∈ S} r * p a = r * Pr(S)`. -/
theorem tsum_indicator_mul_Pr (r : ℝ≥0∞) (p : PMF α) (S : Set α) :
    ∑' a, S.indicator (fun a => r * p a) a = r * Pr p S :=
  tsum_indicator_const_mul r (⇑p) S

/-- `∑_k r * Pr(S ∩ P_k) = r * Pr(S)`. -/
theorem tsum_const_mul_Pr_fiber {K : Type*} (r : ℝ≥0∞) (p : PMF α) (κ : α → K) (S : Set α) :
    ∑' k, r * Pr p (S ∩ κ ⁻¹' {k}) = r * Pr p S := by
  rw [ENNReal.tsum_mul_left, ← Pr_eq_tsum_fiber]

theorem tsum_indicator_mono {f g : α → ℝ≥0∞} (S : Set α) (h : ∀ a ∈ S, f a ≤ g a) :
    ∑' a, S.indicator f a ≤ ∑' a, S.indicator g a := by
  apply ENNReal.tsum_le_tsum
  intro a
  exact ind_le_ind (h a)

/-! ### Two facts about `e^x` in `ℝ≥0∞` -/

/-- `e^a · e^(b - a) = e^b`, with `e^x` written `ENNReal.ofReal (Real.exp x)`. -/
theorem exp_mul_exp_sub (a b : ℝ) :
    ENNReal.ofReal (Real.exp a) * ENNReal.ofReal (Real.exp (b - a))
      = ENNReal.ofReal (Real.exp b) := by
  rw [← ENNReal.ofReal_mul (Real.exp_nonneg a), ← Real.exp_add]
  have h : a + (b - a) = b := by ring
  rw [h]

/-- `1 ≤ e^ε` for `0 ≤ ε`. -/
theorem one_le_exp_of_nonneg {ε : ℝ} (hε : 0 ≤ ε) : 1 ≤ ENNReal.ofReal (Real.exp ε) :=
  ENNReal.one_le_ofReal.mpr (Real.one_le_exp hε)

theorem le_mul_add_of_one_le {x c d : ℝ≥0∞} (hc : 1 ≤ c) : x ≤ c * x + d :=
  calc x = 1 * x := (one_mul x).symm
    _ ≤ c * x := mul_le_mul' hc (le_refl x)
    _ = c * x + 0 := (add_zero _).symm
    _ ≤ c * x + d := add_le_add (le_refl _) (by apply zero_le)

end Odp
