/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# The number system of the Mathlib-free core

Probabilities, privacy parameters and costs live in an ordered field `R` with an exponential
function `exp`. Only four facts about `exp` are used anywhere in the core:
`exp (a + b) = exp a * exp b`, `exp 0 = 1`, `0 < exp a`, and monotonicity. The real numbers with
`Real.exp` satisfy them — the instance `Odp.realExpField` is written in the Mathlib layer
`OdpMathlib/Real.lean`, which needs Mathlib and is not compiled here (stated only) — so every theorem of
`Odp.Core` is meant to apply to the real numbers; the core itself never needs analysis.

The order/field structure is Lean core's `Lean.Grind` classes, so that `grind` can do the linear
arithmetic of the proofs.
-/
module

@[expose] public section

set_option autoImplicit false

namespace Odp.Core

/-- An ordered field with an exponential function (`e^x` of the paper, Hartmann et al. 2022). -/
class ExpField (R : Type) extends Lean.Grind.Field R, LE R, LT R, Std.IsLinearOrder R,
    Std.LawfulOrderLT R, Lean.Grind.OrderedRing R where
  /-- the exponential function `x ↦ e^x` -/
  exp : R → R
  exp_add : ∀ a b : R, exp (a + b) = exp a * exp b
  exp_zero : exp 0 = 1
  exp_pos : ∀ a : R, 0 < exp a
  exp_le_exp : ∀ a b : R, a ≤ b → exp a ≤ exp b

noncomputable section

namespace ExpField

variable {R : Type} [ExpField R]

theorem exp_nonneg (a : R) : 0 ≤ exp a := by
  have := exp_pos a
  grind

/-- `e^a ≥ 1` for `a ≥ 0`. -/
theorem one_le_exp {a : R} (h : 0 ≤ a) : 1 ≤ exp a := by
  have h1 := exp_le_exp 0 a h
  rw [exp_zero] at h1
  exact h1

/-- `e^a = e^b · e^(a - b)`. -/
theorem exp_split (a b : R) : exp a = exp b * exp (a - b) := by
  rw [← exp_add]
  congr 1
  grind

/-! ### Products of inequalities (the nonlinear steps; `grind` does the linear ones) -/

theorem mul_nonneg' {a b : R} (ha : 0 ≤ a) (hb : 0 ≤ b) : 0 ≤ a * b :=
  Lean.Grind.OrderedRing.mul_nonneg ha hb

theorem mul_le_mul_right' {a b : R} (c : R) (h : a ≤ b) (hc : 0 ≤ c) : a * c ≤ b * c :=
  Lean.Grind.OrderedRing.mul_le_mul_of_nonneg_right h hc

theorem mul_le_mul_left' {a b : R} (c : R) (h : a ≤ b) (hc : 0 ≤ c) : c * a ≤ c * b :=
  Lean.Grind.OrderedRing.mul_le_mul_of_nonneg_left h hc

/-- `a ≤ 1` and `0 ≤ c` give `c · a ≤ c`. -/
theorem mul_le_self {a c : R} (ha : a ≤ 1) (hc : 0 ≤ c) : c * a ≤ c := by
  have h := mul_le_mul_left' c ha hc
  grind

theorem inv_pos' {d : R} (h : 0 < d) : 0 < d⁻¹ := by
  have hne : d ≠ 0 := by grind
  have h1 : d * d⁻¹ = 1 := Lean.Grind.Field.mul_inv_cancel hne
  apply Classical.byContradiction
  intro hn
  have h2 : d⁻¹ ≤ 0 := by grind
  have h3 := mul_le_mul_left' d h2 (by grind)
  grind

/-! ### Positive part -/

open Classical in
/-- The positive part `max 0 x`. -/
def posPart (x : R) : R := if 0 ≤ x then x else 0

theorem posPart_of_nonneg {x : R} (h : 0 ≤ x) : posPart x = x := by
  unfold posPart
  rw [if_pos h]

theorem posPart_of_not_nonneg {x : R} (h : ¬ 0 ≤ x) : posPart x = 0 := by
  unfold posPart
  rw [if_neg h]

theorem posPart_nonneg (x : R) : 0 ≤ posPart x := by
  by_cases h : 0 ≤ x
  · rw [posPart_of_nonneg h]; exact h
  · rw [posPart_of_not_nonneg h]; grind

theorem le_posPart (x : R) : x ≤ posPart x := by
  by_cases h : 0 ≤ x
  · rw [posPart_of_nonneg h]; grind
  · rw [posPart_of_not_nonneg h]; grind

/-! ### Natural numbers in `R` (ledger amounts are natural numbers in units of `1/D`) -/

/-- The natural number `n` as an element of `R`. -/
def natR : Nat → R
  | 0 => 0
  | n + 1 => natR n + 1

theorem natR_zero : (natR 0 : R) = 0 := rfl

theorem natR_succ (n : Nat) : (natR (n + 1) : R) = natR n + 1 := rfl

theorem natR_add (a b : Nat) : (natR (a + b) : R) = natR a + natR b := by
  induction b with
  | zero => rw [Nat.add_zero, natR_zero]; grind
  | succ n ih => rw [← Nat.add_assoc, natR_succ, natR_succ, ih]; grind

theorem natR_nonneg (n : Nat) : (0 : R) ≤ natR n := by
  induction n with
  | zero => rw [natR_zero]; grind
  | succ n ih => rw [natR_succ]; grind

theorem natR_pos {n : Nat} (h : 0 < n) : (0 : R) < natR n := by
  cases n with
  | zero => omega
  | succ m => rw [natR_succ]; have := natR_nonneg (R := R) m; grind

theorem natR_le {a b : Nat} (h : a ≤ b) : (natR a : R) ≤ natR b := by
  have hb : b = a + (b - a) := by omega
  rw [hb, natR_add]
  have := natR_nonneg (R := R) (b - a)
  grind

theorem natR_sub {a b : Nat} (h : b ≤ a) : (natR (a - b) : R) = natR a - natR b := by
  have ha : natR a = (natR (b + (a - b)) : R) := by congr 1; omega
  rw [ha, natR_add]
  grind

/-- A ledger amount: `n` units of `1/D`, i.e. `n / D`. -/
def amt (D n : Nat) : R := natR n * (natR D)⁻¹

theorem amt_nonneg {D : Nat} (hD : 0 < D) (n : Nat) : (0 : R) ≤ amt D n :=
  mul_nonneg' (natR_nonneg n) (by have := inv_pos' (natR_pos (R := R) hD); grind)

theorem amt_le {D : Nat} (hD : 0 < D) {a b : Nat} (h : a ≤ b) : (amt D a : R) ≤ amt D b :=
  mul_le_mul_right' _ (natR_le h) (by have := inv_pos' (natR_pos (R := R) hD); grind)

theorem amt_sub (D : Nat) {a b : Nat} (h : b ≤ a) : (amt D (a - b) : R) = amt D a - amt D b := by
  unfold amt
  rw [natR_sub h]
  grind

end ExpField

end

end Odp.Core
