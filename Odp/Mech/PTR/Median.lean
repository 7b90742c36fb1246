/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# The median of the IQR-then-median pipeline: the exponential mechanism is ε-DP

odp's `ExponentialMedian` (`python/odp/mechanisms/ptr/mechanism.py`) releases a point `y` of a
public finite grid `Y` with probability `P(y) ∝ exp(e·u(x, y)/2)`, where
`u(x, y) = −max(#{xᵢ < y}, #{xᵢ > y})` (McSherry and Talwar 2007). `expMech y₀ u e` is that
distribution (`y₀` is any grid point: the grid is not empty).

Proved (`expMedian_dp`): if the utility has sensitivity 1 between neighbours
(`UtilitySensitivity`, a stated data fact of `Odp/Mech/Common/Noise.lean`), then for every `e ≥ 0`
the mechanism is `(e, 0)`-DP — the `MedianDP` interface of `Odp/Mech/PTR/Pipeline.lean`. Then
`iqr_median_dp_expMedian` is the pipeline of Sec. 4.2 with odp's `M_IQR` and odp's median,
from the noise hypotheses and stated data facts only. How: each weight moves by at most
`e^{e/2}` and so does their sum; the ratio of the masses is at most `e^{e/2}·e^{e/2}`.
That odp's rejection sampler draws exactly this distribution is a property of its sampler
(uniform proposal, exact `Bernoulli(exp(−γ))` acceptance), not proved here.
-/
module

public import Odp.Mech.PTR.Pipeline

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech

open Odp.Core

noncomputable section

open ExpField

variable {R X Y V : Type} [ExpField R]

/-! ### Integers in `R` -/

theorem intR_add_nat (t : Int) : ∀ n : Nat, (intR (t + n) : R) = intR t + natR n := by
  intro n
  induction n with
  | zero => simp; rw [natR_zero]; grind
  | succ n ih =>
    have e : t + ((n + 1 : Nat) : Int) = (t + n) + 1 := by omega
    rw [e, intR_succ, ih, natR_succ]
    grind

theorem intR_mono {a b : Int} (h : a ≤ b) : (intR a : R) ≤ intR b := by
  have e : b = a + ((b - a).toNat : Int) := by omega
  rw [e, intR_add_nat]
  have := natR_nonneg (R := R) (b - a).toNat
  grind

/-- `a ≤ b + 1` gives `intR a ≤ intR b + 1`. -/
theorem intR_le_succ {a b : Int} (h : a ≤ b + 1) : (intR a : R) ≤ intR b + 1 := by
  rw [← intR_succ]
  exact intR_mono h

/-! ### The exponential mechanism -/

/-- The unnormalised weight `exp(e·u(x, y)/2)`. -/
def expWeight (u : X → Y → Int) (e : R) (x : X) (y : Y) : R := exp (e / 2 * intR (u x y))

variable [Enum Y]

theorem expWeight_sum_pos (y₀ : Y) (u : X → Y → Int) (e : R) (x : X) :
    0 < fsum (expWeight u e x) := by
  have h := le_lsum_of_mem (Enum.elems : List Y) (expWeight u e x)
    (fun y => exp_nonneg _) y₀ (Enum.complete y₀)
  have := exp_pos (e / 2 * intR (u x y₀))
  unfold expWeight at h
  show 0 < lsum Enum.elems (expWeight u e x)
  unfold expWeight
  grind

/-- odp's `ExponentialMedian` with budget `e`: `P(y) = exp(e·u(x, y)/2) / ∑_z exp(e·u(x, z)/2)`
on the public grid `Y` (`y₀ ∈ Y` witnesses that the grid is not empty). -/
def expMech (y₀ : Y) (u : X → Y → Int) (e : R) : Mechanism X Y R := fun x =>
  { mass := fun y => expWeight u e x y * (fsum (expWeight u e x))⁻¹
    nonneg := fun y => mul_nonneg' (exp_nonneg _)
      (by have := inv_pos' (expWeight_sum_pos y₀ u e x); grind)
    total := by
      have hS := expWeight_sum_pos y₀ u e x
      have hc := fsum_mul_left (fsum (expWeight u e x))⁻¹ (expWeight u e x)
      have e1 : fsum (fun y => expWeight u e x y * (fsum (expWeight u e x))⁻¹)
          = fsum (fun y => (fsum (expWeight u e x))⁻¹ * expWeight u e x y) :=
        fsum_congr (fun y => by grind)
      rw [e1, hc]
      have := Lean.Grind.Field.mul_inv_cancel (show fsum (expWeight u e x) ≠ 0 by grind)
      generalize fsum (expWeight u e x) = S at this hS ⊢
      grind }

/-- **The exponential median is DP**: with a utility of sensitivity 1, `expMech y₀ u e` is
`(e, 0)`-DP for every `e ≥ 0`. -/
theorem expMedian_dp (Nbr : X → X → Prop) (y₀ : Y) (u : X → Y → Int)
    (hu : UtilitySensitivity Nbr u) : MedianDP Nbr (expMech (R := R) y₀ u) := by
  intro e he x x' hx S
  have hh := half_add_half e
  have he2 : 0 ≤ e / 2 := by grind
  have hw : ∀ a b y, u a y ≤ u b y + 1 →
      expWeight u e a y ≤ exp (e / 2) * expWeight u e b y := by
    intro a b y h
    unfold expWeight
    rw [← exp_add]
    apply exp_le_exp
    have h1 := intR_le_succ (R := R) h
    have := mul_le_mul_left' (e / 2) h1 he2
    grind
  have hS : fsum (expWeight u e x') ≤ exp (e / 2) * fsum (expWeight u e x) := by
    rw [← fsum_mul_left]
    apply fsum_le
    intro y
    exact hw x' x y (hu x x' y hx).2
  have hpos := expWeight_sum_pos y₀ u e x
  have hpos' := expWeight_sum_pos y₀ u e x'
  have hinv : (fsum (expWeight u e x))⁻¹ ≤ exp (e / 2) * (fsum (expWeight u e x'))⁻¹ :=
    inv_le_mul_inv hpos hpos' hS
  have ee : exp e = exp (e / 2) * exp (e / 2) := by
    rw [← exp_add]; congr 1; grind
  have hm : ∀ y, (expMech y₀ u e x).mass y ≤ exp e * (expMech y₀ u e x').mass y := by
    intro y
    show expWeight u e x y * (fsum (expWeight u e x))⁻¹
      ≤ exp e * (expWeight u e x' y * (fsum (expWeight u e x'))⁻¹)
    have h1 := hw x x' y (hu x x' y hx).1
    have i0 := inv_pos' hpos
    have i1 := inv_pos' hpos'
    have s1 := mul_le_mul_right' (fsum (expWeight u e x))⁻¹ h1 (by grind)
    have s2 := mul_le_mul_left' (exp (e / 2) * expWeight u e x' y) hinv
      (mul_nonneg' (exp_nonneg _) (exp_nonneg _))
    rw [ee]
    generalize (fsum (expWeight u e x))⁻¹ = a at s1 s2 ⊢
    generalize (fsum (expWeight u e x'))⁻¹ = b at s1 s2 ⊢
    grind
  unfold Pr
  rw [← fsum_mul_left]
  have h := fsum_le (f := fun y => if S y then (expMech y₀ u e x).mass y else 0)
    (g := fun y => exp e * (if S y then (expMech y₀ u e x').mass y else 0)) (by
      intro y
      dsimp only
      cases hS : S y
      · simp only [Bool.false_eq_true, if_false]; grind
      · simp only [if_true]; exact hm y)
  grind

/-- **The IQR-then-median pipeline with odp's mechanisms** (Sec. 4.2): odp's `M_IQR(ε₁, δ₁)`
then odp's exponential median (`ε₂` after a value, `ε₁ + ε₂` after `⊥`) satisfy
`Pr(view ∈ 𝒱 | x) ≤ e^{3ε₁ + ε₂} Pr(view ∈ 𝒱 | x') + δ₁` for neighbours, from the noise
hypotheses and the stated data facts of `Odp/Mech/Common/Noise.lean` only. -/
theorem iqr_median_dp_expMedian [Enum V] [DecidableEq V] (Nbr : X → X → Prop) (x x' : X)
    (hx : Nbr x x') {ε₁ : R} (ε₂ δ₁ : R) (hε₁ : 0 ≤ ε₁) (hε₂ : 0 ≤ ε₂) (hδ₁ : 0 ≤ δ₁)
    (Z : TailNoise R ε₁) (W : IntLaw R) (K : Int) (L : Nat) (out₁ out₂ : Option Int → V)
    (A₁ A₂ : X → Int) (sub₁ sub₂ : X → Option Int)
    (htail : Z.G K ≤ δ₁ / 2) (hW : W.ShiftWithin (L - 1) ε₁)
    (hd₁ : IQRDataFacts Nbr A₁ sub₁ L) (hd₂ : IQRDataFacts Nbr A₂ sub₂ L)
    (y₀ : Y) (u : X → Y → Int) (hu : UtilitySensitivity Nbr u)
    (𝒱 : List (Option V ⊕ Y) → Bool) :
    (iqrMedianAdv x x' (iqrLogBin Z W K out₁ out₂ A₁ A₂ sub₁ sub₂) (expMech y₀ u) ε₁ ε₂ δ₁).prob
        false 𝒱
      ≤ exp (3 * ε₁ + ε₂)
        * (iqrMedianAdv x x' (iqrLogBin Z W K out₁ out₂ A₁ A₂ sub₁ sub₂) (expMech y₀ u) ε₁ ε₂
            δ₁).prob true 𝒱 + δ₁ :=
  iqr_median_dp_logBin Nbr x x' hx ε₂ δ₁ hε₁ hε₂ hδ₁ Z W K L out₁ out₂ A₁ A₂ sub₁ sub₂ htail hW
    hd₁ hd₂ (expMech y₀ u) (expMedian_dp Nbr y₀ u hu) 𝒱

end

end Odp.Mech
