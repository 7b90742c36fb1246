/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# The clamped discrete Laplace law, written out: a finite distribution, no noise hypothesis

odp releases a grid value as `clamp(n + Z, lo, hi)` (`odp.mechanisms.window`), `Z` the discrete
Laplace law `P[Z = z] = (1 − r)/(1 + r) · r^{|z|}` of scale `b` (`r = e^{−1/b}`,
`odp.samplers.discrete_laplace`, Canonne–Kamath–Steinke 2020, Alg. 2). The law of the clamped
release is a **finite** distribution on the window with closed-form masses — exactly what
`odp.mechanisms.window.clamped_laplace_law` computes:

* inside the window, `lo < c < hi`: `(1 − r)/(1 + r) · r^{|c − n|}` (`dlapMass`);
* at `lo`: `Pr[n + Z ≤ lo] = Pr[Z ≥ n − lo]` (the discrete Laplace is symmetric), and at `hi`:
  `Pr[n + Z ≥ hi] = Pr[Z ≥ hi − n]`, the geometric tails `Pr[Z ≥ k] = r^k/(1 + r)` for `k ≥ 1`
  and `1 − r^{1−k}/(1 + r)` for `k ≤ 0` (`discreteLaplaceTail`, `Odp/Mech/Common/NoiseSat.lean`,
  odp's `discrete_laplace_tail`); with `lo = hi` the one point has mass 1.

The centre `n` may lie anywhere, inside the window or not. Here, in every `ExpField`, with
`r = e^{−α}` (`α = 1/b ≥ 0`, `r^k = lapPow α k`):

* `clampedLaplace α hα lo hi hlh n : Dist (Window lo hi) R`: these masses are nonnegative and
  **sum to 1** (`Pr[clamp ≥ c]` telescopes: `clampedLapMass_eq_tail`, `lsum_telescope`);
* `clampedLaplace_shift`: moving the centre by `s`, `|s| ≤ k`, multiplies every output's mass
  by at most `e^{kα}` — the fact from which the grid Laplace mechanism and M_toy are proved
  (`Odp/Mech/Laplace/Privacy.lean`, `Odp/Mech/Toy/Privacy.lean`) with **no noise hypothesis**;
* `dlapTailNoise α hα : TailNoise R α` — the discrete Laplace tail is a genuine instance of the
  hypothesis `TailNoise` (test noise of PTR and of test-and-release);
* `Iter.shiftDominated_clampedLaplace` — the clamped discrete Laplace is a genuine instance of
  `Iter.ShiftDominated` (the per-coordinate noise of `NoisyGradientDescent`).

What is *not* shown here: that odp's Python sampler draws this law (the sampler is tested in
Python against the exact law, not proved), and the unclamped law (an infinite sum).
-/
module

public import Odp.Mech.Common.NoiseSat
public import Odp.Mech.Common.NoiseLaws

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech

open Odp.Core
open Odp.Core.ExpField

noncomputable section

variable {R : Type} [ExpField R]

/-! ### The discrete Laplace mass and its tail -/

/-- The discrete Laplace mass `P[Z = z] = (1 − r)/(1 + r) · r^{|z|}`, `r = e^{−α}`. -/
def dlapMass (α : R) (z : Int) : R :=
  (1 - lapPow α 1) * (1 + lapPow α 1)⁻¹ * lapPow α z.natAbs

theorem one_add_lapPow_inv (α : R) :
    (1 + lapPow α 1) * (1 + lapPow α 1)⁻¹ = 1 :=
  Lean.Grind.Field.mul_inv_cancel (by have := lapPow_pos α 1; grind)

theorem dlapMass_nonneg {α : R} (hα : 0 ≤ α) (z : Int) : 0 ≤ dlapMass α z := by
  unfold dlapMass
  have h1 := lapPow_le_one hα 1
  have h2 := lapPow_pos α 1
  have h3 := lapPow_pos α z.natAbs
  have hD : 0 < (1 + lapPow α 1)⁻¹ := inv_pos' (by grind)
  exact mul_nonneg' (mul_nonneg' (by grind) (by grind)) (by grind)

/-- The symmetry of the discrete Laplace law in tail form: `Pr[Z ≥ t] + Pr[Z ≥ 1 − t] = 1`
(`Pr[Z ≥ 1 − t] = Pr[Z ≤ t − 1] = 1 − Pr[Z ≥ t]`). -/
theorem dlapTail_symm (α : R) (t : Int) :
    discreteLaplaceTail α t + discreteLaplaceTail α (1 - t) = 1 := by
  unfold discreteLaplaceTail
  by_cases h : 1 ≤ t
  · rw [if_pos h, if_neg (show ¬ (1 : Int) ≤ 1 - t by omega)]
    have e : (1 - (1 - t)).toNat = t.toNat := by congr 1; omega
    rw [e]
    grind
  · rw [if_neg h, if_pos (show (1 : Int) ≤ 1 - t by omega)]
    grind

/-- A point mass is a difference of tails: `P[Z = z] = Pr[Z ≥ z] − Pr[Z ≥ z + 1]`. -/
theorem dlapTail_sub_succ (α : R) (z : Int) :
    discreteLaplaceTail α z - discreteLaplaceTail α (z + 1) = dlapMass α z := by
  have hDD := one_add_lapPow_inv α
  unfold discreteLaplaceTail dlapMass
  generalize hD : (1 + lapPow α 1)⁻¹ = D at hDD ⊢
  by_cases h : 1 ≤ z
  · rw [if_pos h, if_pos (show (1 : Int) ≤ z + 1 by omega)]
    have e1 : (z + 1).toNat = z.toNat + 1 := by omega
    have e2 : z.natAbs = z.toNat := by omega
    rw [e1, e2, lapPow_succ]
    grind
  · by_cases h0 : z = 0
    · subst h0
      rw [if_neg (show ¬ (1 : Int) ≤ 0 by omega), if_pos (show (1 : Int) ≤ 0 + 1 by omega)]
      have e1 : ((0 : Int) + 1).toNat = 1 := by decide
      have e2 : ((1 : Int) - 0).toNat = 1 := by decide
      have e3 : (0 : Int).natAbs = 0 := by decide
      rw [e1, e2, e3, lapPow_zero]
      grind
    · rw [if_neg h, if_neg (show ¬ (1 : Int) ≤ z + 1 by omega)]
      have e1 : (1 - z).toNat = (1 - (z + 1)).toNat + 1 := by omega
      have e2 : z.natAbs = (1 - (z + 1)).toNat := by omega
      rw [e1, e2, lapPow_succ]
      grind

/-! ### The discrete Laplace tail is a genuine `TailNoise` -/

/-- **Witness of `TailNoise α`** (`α ≥ 0`): the tail `Pr[Z ≥ t]` of the discrete Laplace law of
scale `1/α`, in closed form (odp's `discrete_laplace_tail`, the test noise of PTR and of
test-and-release). -/
def dlapTailNoise (α : R) (hα : 0 ≤ α) : TailNoise R α where
  G := discreteLaplaceTail α
  nonneg := (discreteLaplaceTail_isLapTail α hα).nonneg
  le_one := (discreteLaplaceTail_isLapTail α hα).le_one
  antitone := (discreteLaplaceTail_isLapTail α hα).anti
  up := (discreteLaplaceTail_isLapTail α hα).ratio
  down t := by
    have h1 := dlapTail_symm α (t + 1)
    have h2 := dlapTail_symm α t
    have h3 := (discreteLaplaceTail_isLapTail α hα).ratio (-t)
    have e1 : 1 - (t + 1) = -t := by omega
    have e2 : -t + 1 = 1 - t := by omega
    rw [e1] at h1
    rw [e2] at h3
    show 1 - discreteLaplaceTail α (t + 1) ≤ exp α * (1 - discreteLaplaceTail α t)
    have e3 : LapTail.G (discreteLaplaceTail_isLapTail α hα) = discreteLaplaceTail α := rfl
    rw [e3] at h3
    generalize discreteLaplaceTail α (t + 1) = a at h1 ⊢
    generalize discreteLaplaceTail α (-t) = b at h1 h3
    generalize discreteLaplaceTail α t = c at h2 ⊢
    generalize discreteLaplaceTail α (1 - t) = d at h2 h3
    have hb : b = 1 - a := by grind
    have hd : d = 1 - c := by grind
    rw [hb, hd] at h3
    exact h3

/-- Tails of thresholds at distance at most `k` are `e^{kα}`-close. -/
theorem dlapTail_close {α : R} (hα : 0 ≤ α) {t t' : Int} (k : Nat) (h : (t - t').natAbs ≤ k) :
    discreteLaplaceTail α t ≤ exp (natR k * α) * discreteLaplaceTail α t' :=
  (dlapTailNoise α hα).tail_close k h

/-! ### The law of `clamp(n + Z, lo, hi)` -/

/-- The mass of `clamp(n + Z, lo, hi)` at `c` (`lo ≤ c ≤ hi`), `Z` discrete Laplace with
`r = e^{−α}`: the tail `Pr[Z ≥ n − lo]` at `lo`, the tail `Pr[Z ≥ hi − n]` at `hi`,
`(1 − r)/(1 + r) · r^{|c − n|}` in between; `1` when `lo = hi`
(`odp.mechanisms.window.clamped_laplace_law`). -/
def clampedLapMass (α : R) (lo hi n c : Int) : R :=
  if c = lo then (if c = hi then 1 else discreteLaplaceTail α (n - lo))
  else if c = hi then discreteLaplaceTail α (hi - n)
  else dlapMass α (c - n)

/-- `Pr[clamp(n + Z, lo, hi) ≥ c]`: `1` up to `lo`, `0` above `hi`, `Pr[Z ≥ c − n]` in between. -/
def clampedTail (α : R) (lo hi n c : Int) : R :=
  if c ≤ lo then 1 else if hi < c then 0 else discreteLaplaceTail α (c - n)

/-- Each mass in the window is a difference of the clamped release's tails. -/
theorem clampedLapMass_eq_tail (α : R) (lo hi n c : Int) (h1 : lo ≤ c) (h2 : c ≤ hi) :
    clampedLapMass α lo hi n c = clampedTail α lo hi n c - clampedTail α lo hi n (c + 1) := by
  unfold clampedLapMass clampedTail
  by_cases hl : c = lo
  · rw [if_pos hl, if_pos (show c ≤ lo by omega), if_neg (show ¬ c + 1 ≤ lo by omega)]
    by_cases hh : c = hi
    · rw [if_pos hh, if_pos (show hi < c + 1 by omega)]
      grind
    · rw [if_neg hh, if_neg (show ¬ hi < c + 1 by omega)]
      have hs := dlapTail_symm α (n - lo)
      have e : 1 - (n - lo) = c + 1 - n := by omega
      rw [e] at hs
      grind
  · rw [if_neg hl, if_neg (show ¬ c ≤ lo by omega), if_neg (show ¬ hi < c by omega),
      if_neg (show ¬ c + 1 ≤ lo by omega)]
    by_cases hh : c = hi
    · rw [if_pos hh, if_pos (show hi < c + 1 by omega), hh]
      grind
    · rw [if_neg hh, if_neg (show ¬ hi < c + 1 by omega)]
      have hs := dlapTail_sub_succ α (c - n)
      have e : c - n + 1 = c + 1 - n := by omega
      rw [e] at hs
      grind

/-- A telescoping sum over `a, a + 1, …, a + k − 1`. -/
theorem lsum_telescope (F : Int → R) :
    ∀ (k : Nat) (a : Int), lsum (intRange a k) (fun v => F v - F (v + 1)) = F a - F (a + k)
  | 0, a => by
    show (0 : R) = F a - F (a + ((0 : Nat) : Int))
    have e : a + ((0 : Nat) : Int) = a := by omega
    rw [e]
    grind
  | k + 1, a => by
    show F a - F (a + 1) + lsum (intRange (a + 1) k) (fun v => F v - F (v + 1))
      = F a - F (a + ((k + 1 : Nat) : Int))
    rw [lsum_telescope F k (a + 1)]
    have e : a + 1 + (k : Int) = a + ((k + 1 : Nat) : Int) := by omega
    rw [e]
    grind

theorem clampedLapMass_nonneg {α : R} (hα : 0 ≤ α) (lo hi n c : Int) :
    0 ≤ clampedLapMass α lo hi n c := by
  have hG := (discreteLaplaceTail_isLapTail α hα).nonneg
  unfold clampedLapMass
  by_cases hl : c = lo
  · rw [if_pos hl]
    by_cases hh : c = hi
    · rw [if_pos hh]; grind
    · rw [if_neg hh]; exact hG _
  · rw [if_neg hl]
    by_cases hh : c = hi
    · rw [if_pos hh]; exact hG _
    · rw [if_neg hh]; exact dlapMass_nonneg hα _

/-- The masses of the clamped release sum to 1 over the window. -/
theorem clampedLapMass_total (α : R) (lo hi : Int) (hlh : lo ≤ hi) (n : Int) :
    fsum (fun c : Window lo hi => clampedLapMass α lo hi n c.val) = 1 := by
  have h1 := fsum_ofSubtype (R := R) (fun v : Int => lo ≤ v ∧ v ≤ hi)
    (intRange lo (hi - lo + 1).toNat) (nodup_intRange _ _)
    (fun v hv => (mem_intRange _ _ _).2 (by omega))
    (fun v hv => by have := (mem_intRange _ _ _).1 hv; omega) (clampedLapMass α lo hi n)
  refine h1.trans ?_
  have h2 : lsum (intRange lo (hi - lo + 1).toNat) (clampedLapMass α lo hi n)
      = lsum (intRange lo (hi - lo + 1).toNat)
          (fun v => clampedTail α lo hi n v - clampedTail α lo hi n (v + 1)) := by
    apply lsum_congr
    intro v hv
    have := (mem_intRange _ _ _).1 hv
    exact clampedLapMass_eq_tail α lo hi n v (by omega) (by omega)
  rw [h2, lsum_telescope]
  have e : lo + ((hi - lo + 1).toNat : Int) = hi + 1 := by omega
  rw [e]
  unfold clampedTail
  rw [if_pos (Int.le_refl lo), if_neg (show ¬ hi + 1 ≤ lo by omega),
    if_pos (show hi < hi + 1 by omega)]
  grind

/-- **The law of `clamp(n + Z, lo, hi)`**, `Z` discrete Laplace with `r = e^{−α}` (scale
`1/α`), as a finite distribution on the window (`clampedLapMass`). -/
def clampedLaplace (α : R) (hα : 0 ≤ α) (lo hi : Int) (hlh : lo ≤ hi) (n : Int) :
    Dist (Window lo hi) R where
  mass c := clampedLapMass α lo hi n c.val
  nonneg c := clampedLapMass_nonneg hα lo hi n c.val
  total := clampedLapMass_total α lo hi hlh n

/-! ### Moving the centre -/

/-- `r^{|z|} ≤ e^{kα} r^{|z'|}` when `|z'| ≤ |z| + k`. -/
theorem lapPow_shift {α : R} (hα : 0 ≤ α) (j j' k : Nat) (h : j' ≤ j + k) :
    lapPow α j ≤ exp (natR k * α) * lapPow α j' := by
  unfold lapPow
  rw [← exp_add]
  apply exp_le_exp
  have h1 := natR_le (R := R) h
  rw [natR_add] at h1
  have h2 := mul_le_mul_right' α h1 hα
  grind

/-- **Moving the centre by `s`, `|s| ≤ k`, costs at most `e^{kα}` at every output** (the
pointwise ratio of the discrete Laplace, and the tails at the two ends). -/
theorem clampedLapMass_shift {α : R} (hα : 0 ≤ α) (lo hi n n' c : Int) (k : Nat)
    (hk : (n - n').natAbs ≤ k) :
    clampedLapMass α lo hi n c ≤ exp (natR k * α) * clampedLapMass α lo hi n' c := by
  have hk0 : 1 ≤ exp (natR k * α) := one_le_exp (mul_nonneg' (natR_nonneg k) hα)
  unfold clampedLapMass
  by_cases hl : c = lo
  · rw [if_pos hl, if_pos hl]
    by_cases hh : c = hi
    · rw [if_pos hh, if_pos hh]; grind
    · rw [if_neg hh, if_neg hh]
      exact dlapTail_close hα k (by omega)
  · rw [if_neg hl, if_neg hl]
    by_cases hh : c = hi
    · rw [if_pos hh, if_pos hh]
      exact dlapTail_close hα k (by omega)
    · rw [if_neg hh, if_neg hh]
      unfold dlapMass
      have h1 := lapPow_shift hα (c - n).natAbs (c - n').natAbs k (by omega)
      have h2 := lapPow_le_one hα 1
      have h3 := lapPow_pos α 1
      have hD : 0 < (1 + lapPow α 1)⁻¹ := inv_pos' (by grind)
      have hA : 0 ≤ (1 - lapPow α 1) * (1 + lapPow α 1)⁻¹ := mul_nonneg' (by grind) (by grind)
      have h4 := mul_le_mul_left' ((1 - lapPow α 1) * (1 + lapPow α 1)⁻¹) h1 hA
      generalize (1 - lapPow α 1) * (1 + lapPow α 1)⁻¹ = A at h4 ⊢
      generalize lapPow α (c - n).natAbs = u at h4 ⊢
      generalize lapPow α (c - n').natAbs = u' at h4 ⊢
      generalize exp (natR k * α) = e at h4 ⊢
      grind

theorem clampedLaplace_shift {α : R} (hα : 0 ≤ α) (lo hi : Int) (hlh : lo ≤ hi) (n n' : Int)
    (k : Nat) (hk : (n - n').natAbs ≤ k) (c : Window lo hi) :
    (clampedLaplace α hα lo hi hlh n).mass c
      ≤ exp (natR k * α) * (clampedLaplace α hα lo hi hlh n').mass c :=
  clampedLapMass_shift hα lo hi n n' c.val k hk

namespace Iter

/-- **Witness of `Iter.ShiftDominated`**: the clamped discrete Laplace of scale `1/r` centred at
the exact value (the per-coordinate release of `NoisyGradientDescent`). -/
theorem shiftDominated_clampedLaplace {r : R} (hr : 0 ≤ r) (lo hi : Int) (hlh : lo ≤ hi) :
    ShiftDominated (fun u => clampedLaplace r hr lo hi hlh u) r :=
  fun u u' c => clampedLaplace_shift hr lo hi hlh u u' (u - u').natAbs (Nat.le_refl _) c

end Iter

end

end Odp.Mech
