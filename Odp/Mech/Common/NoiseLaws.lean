/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Consequences of the noise hypotheses `TailNoise` and `IntLaw` (trust boundary `Odp/Mech/Common/Noise.lean`)

Nothing here is assumed: these are proved consequences of the structures of the trust boundary.

* `TailNoise`: `G` is antitone over any gap (`G_anti`); `n` threshold steps cost `e^{n·c}`
  (`up_n`, `down_n`); thresholds at distance at most `m` are `e^{m·c}`-close on both the pass and
  the fail side (`tail_close`, `compl_close`).
* `IntLaw`: congruence, `P ∅ = 0`, monotonicity, finite additivity over a preimage partition
  (`lsum_preimage`), the push-forward `map f` to a finite type as a `Dist` with
  `Pr (map f) C = P (C ∘ f)` (`Pr_map`), shifts by `n` steps (`shift_pos`, `shift_neg`) and
  `shiftWithin_of_shiftBound` (the release noise of scale `(L − 1)/ε`).
-/
module

public import Odp.Mech.Common.Noise

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech

open Odp.Core

noncomputable section

open ExpField

variable {R V : Type} [ExpField R]

/-! ### Facts about the noise laws -/

namespace TailNoise

variable {c : R} (Z : TailNoise R c)

theorem G_anti_add (t : Int) : ∀ n : Nat, Z.G (t + n) ≤ Z.G t := by
  intro n
  induction n with
  | zero => simp; grind
  | succ n ih =>
    have e : t + ((n + 1 : Nat) : Int) = (t + n) + 1 := by omega
    rw [e]
    have := Z.antitone (t + n)
    grind

/-- `G` is antitone. -/
theorem G_anti {t t' : Int} (h : t ≤ t') : Z.G t' ≤ Z.G t := by
  have e : t' = t + ((t' - t).toNat : Int) := by omega
  rw [e]
  exact Z.G_anti_add t _

/-- `n` threshold steps up cost `e^{n·c}`. -/
theorem up_n (t : Int) : ∀ n : Nat, Z.G t ≤ exp (natR n * c) * Z.G (t + n) := by
  intro n
  induction n with
  | zero =>
    simp
    rw [natR_zero]
    have e : (0 : R) * c = 0 := by grind
    rw [e, exp_zero]
    grind
  | succ n ih =>
    have e : t + ((n + 1 : Nat) : Int) = (t + n) + 1 := by omega
    rw [e]
    have h1 := Z.up (t + n)
    have ee : exp (natR (n + 1) * c) = exp (natR n * c) * exp c := by
      rw [← exp_add, natR_succ]; congr 1; grind
    rw [ee]
    have h2 := mul_le_mul_left' (exp (natR n * c)) h1 (exp_nonneg _)
    grind

/-- `n` threshold steps down cost `e^{n·c}` on the complement. -/
theorem down_n (t : Int) : ∀ n : Nat, 1 - Z.G (t + n) ≤ exp (natR n * c) * (1 - Z.G t) := by
  intro n
  induction n with
  | zero =>
    simp
    rw [natR_zero]
    have e : (0 : R) * c = 0 := by grind
    rw [e, exp_zero]
    grind
  | succ n ih =>
    have e : t + ((n + 1 : Nat) : Int) = (t + n) + 1 := by omega
    rw [e]
    have h1 := Z.down (t + n)
    have ee : exp (natR (n + 1) * c) = exp (natR n * c) * exp c := by
      rw [← exp_add, natR_succ]; congr 1; grind
    rw [ee]
    have h2 := mul_le_mul_left' (exp c) ih (exp_nonneg _)
    grind

end TailNoise

namespace IntLaw

variable (W : IntLaw R)

theorem P_congr {B C : Int → Bool} (h : ∀ z, B z = C z) : W.P B = W.P C := by
  have : B = C := funext h
  rw [this]

theorem P_false : W.P (fun _ => false) = 0 := by
  have h := W.additive (fun _ => false) (fun _ => false) (fun _ h => by cases h)
  have e : W.P (fun z => (fun _ => false) z || (fun _ => false) z) = W.P (fun _ => false) :=
    W.P_congr (fun _ => rfl)
  rw [e] at h
  grind

theorem P_mono {B C : Int → Bool} (h : ∀ z, B z = true → C z = true) : W.P B ≤ W.P C := by
  have hadd := W.additive B (fun z => C z && !B z) (fun z hz => by simp [hz])
  have e : W.P (fun z => B z || (C z && !B z)) = W.P C := by
    apply W.P_congr
    intro z
    cases hB : B z
    · simp
    · simp [h z hB]
  rw [e] at hadd
  have := W.nonneg (fun z => C z && !B z)
  grind

/-- Finite additivity over the values of `f` in a duplicate-free list. -/
theorem lsum_preimage [DecidableEq V] (f : Int → V) (C : V → Bool) (l : List V) (hl : l.Nodup) :
    lsum l (fun v => if C v then W.P (fun z => decide (f z = v)) else 0)
      = W.P (fun z => decide (f z ∈ l) && C (f z)) := by
  induction l with
  | nil =>
    rw [lsum_nil, ← W.P_false]
    apply W.P_congr
    intro z
    simp
  | cons v l ih =>
    rw [List.nodup_cons] at hl
    rw [lsum_cons, ih hl.2]
    cases hC : C v
    · simp only [Bool.false_eq_true, if_false]
      have e : W.P (fun z => decide (f z ∈ l) && C (f z))
          = W.P (fun z => decide (f z ∈ v :: l) && C (f z)) := by
        apply W.P_congr
        intro z
        by_cases hz : f z = v
        · rw [hz, hC]; simp
        · simp [hz]
      rw [e]
      grind
    · simp only [if_true]
      have hadd := W.additive (fun z => decide (f z = v)) (fun z => decide (f z ∈ l) && C (f z))
        (by
          intro z hz
          have hz' : f z = v := by simpa using hz
          show (decide (f z ∈ l) && C (f z)) = false
          rw [hz']
          simp [hl.1])
      rw [← hadd]
      apply W.P_congr
      intro z
      by_cases hz : f z = v
      · simp [hz, hC]
      · simp [hz]

/-- The law of `f(W)` on a finite type. -/
def map [Enum V] [DecidableEq V] (f : Int → V) : Dist V R where
  mass v := W.P (fun z => decide (f z = v))
  nonneg _ := W.nonneg _
  total := by
    have h := W.lsum_preimage f (fun _ => true) Enum.elems Enum.nodup
    simp only [if_true] at h
    show lsum Enum.elems (fun v => W.P (fun z => decide (f z = v))) = 1
    rw [h, ← W.total]
    apply W.P_congr
    intro z
    simp [Enum.complete (f z)]

theorem Pr_map [Enum V] [DecidableEq V] (f : Int → V) (C : Event V) :
    Pr (W.map f) C = W.P (fun z => C (f z)) := by
  unfold Pr
  have h := W.lsum_preimage f C Enum.elems Enum.nodup
  show lsum Enum.elems (fun v => if C v then W.P (fun z => decide (f z = v)) else 0) = _
  rw [h]
  apply W.P_congr
  intro z
  simp [Enum.complete (f z)]

theorem shift_pos (c : R) (hW : W.ShiftBound c) (B : Int → Bool) :
    ∀ n : Nat, W.P (fun z => B (z + n)) ≤ exp (natR n * c) * W.P B := by
  intro n
  induction n generalizing B with
  | zero =>
    have e : W.P (fun z => B (z + ((0 : Nat) : Int))) = W.P B := W.P_congr (fun z => by simp)
    rw [e, natR_zero]
    have e2 : (0 : R) * c = 0 := by grind
    rw [e2, exp_zero]
    grind
  | succ n ih =>
    have e : W.P (fun z => B (z + ((n + 1 : Nat) : Int)))
        = W.P (fun z => (fun w => B (w + (n : Int))) (z + 1)) :=
      W.P_congr (fun z => by congr 1; omega)
    rw [e]
    have h1 := (hW (fun w => B (w + (n : Int)))).1
    have h2 := mul_le_mul_left' (exp c) (ih B) (exp_nonneg _)
    have ee : exp (natR (n + 1) * c) = exp c * exp (natR n * c) := by
      rw [← exp_add, natR_succ]; congr 1; grind
    rw [ee]
    grind

theorem shift_neg (c : R) (hW : W.ShiftBound c) (B : Int → Bool) :
    ∀ n : Nat, W.P (fun z => B (z - n)) ≤ exp (natR n * c) * W.P B := by
  intro n
  induction n generalizing B with
  | zero =>
    have e : W.P (fun z => B (z - ((0 : Nat) : Int))) = W.P B := W.P_congr (fun z => by simp)
    rw [e, natR_zero]
    have e2 : (0 : R) * c = 0 := by grind
    rw [e2, exp_zero]
    grind
  | succ n ih =>
    have e : W.P (fun z => B (z - ((n + 1 : Nat) : Int)))
        = W.P (fun z => (fun w => B (w - (n : Int))) (z - 1)) :=
      W.P_congr (fun z => by congr 1; omega)
    rw [e]
    have h1 := (hW (fun w => B (w - (n : Int)))).2
    have h2 := mul_le_mul_left' (exp c) (ih B) (exp_nonneg _)
    have ee : exp (natR (n + 1) * c) = exp c * exp (natR n * c) := by
      rw [← exp_add, natR_succ]; congr 1; grind
    rw [ee]
    grind

/-- `ShiftBound` with one step costing `c ≥ 0` gives `ShiftWithin n ε` whenever `n·c ≤ ε`
(the release noise of scale `(L − 1)/ε`: `n = L − 1`, `c = ε/(L − 1)`). -/
theorem shiftWithin_of_shiftBound (c : R) (hc : 0 ≤ c) (hW : W.ShiftBound c) (n : Nat) (ε : R)
    (h : natR n * c ≤ ε) : W.ShiftWithin n ε := by
  intro B s hs
  have hk : natR s.natAbs * c ≤ ε := by
    have := mul_le_mul_right' c (natR_le (R := R) hs) hc
    grind
  have hle := exp_le_exp _ _ hk
  have hP := W.nonneg B
  have hm := mul_le_mul_right' (W.P B) hle hP
  rcases Int.natAbs_eq s with e | e
  · have h1 := W.shift_pos c hW B s.natAbs
    have e' : W.P (fun z => B (z + s)) = W.P (fun z => B (z + (s.natAbs : Int))) :=
      W.P_congr (fun z => by rw [← e])
    rw [e']
    grind
  · have h1 := W.shift_neg c hW B s.natAbs
    have e' : W.P (fun z => B (z + s)) = W.P (fun z => B (z - (s.natAbs : Int))) :=
      W.P_congr (fun z => by congr 1; omega)
    rw [e']
    grind

end IntLaw


namespace TailNoise

variable {c : R} (Z : TailNoise R c)

/-- Thresholds at distance at most `m` have `e^{m·c}`-close tails. -/
theorem tail_close {t t' : Int} (m : Nat) (h : (t - t').natAbs ≤ m) :
    Z.G t ≤ exp (natR m * c) * Z.G t' := by
  have h1 := Z.G_anti (show t' - m ≤ t by omega)
  have h2 := Z.up_n (t' - m) m
  have e : t' - (m : Int) + (m : Int) = t' := by omega
  rw [e] at h2
  grind

/-- Thresholds at distance at most `m` have `e^{m·c}`-close complements of their tails. -/
theorem compl_close {t t' : Int} (m : Nat) (h : (t - t').natAbs ≤ m) :
    1 - Z.G t ≤ exp (natR m * c) * (1 - Z.G t') := by
  have h1 := Z.G_anti (show t ≤ t' + m by omega)
  have h2 := Z.down_n t' m
  grind

end TailNoise

end

end Odp.Mech
