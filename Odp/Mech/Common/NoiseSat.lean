/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# The hypotheses of the trust boundary are satisfiable (non-vacuity)

`Odp/Mech/Common/Noise.lean` defines every hypothesis the theorems of `Odp/Mech` take. This file shows,
over every `ExpField`, that each of them has an instance (so no theorem is vacuously true);
nothing here is assumed.

* `LapTail β` (for `β ≥ 0`): `discreteLaplaceTail_isLapTail`, the closed-form discrete Laplace
  tail that odp's exact SVT audit uses (`odp.samplers.discrete_laplace_tail`): with `r = e^{−β}`
  and `P[ν = x] = (1 − r)/(1 + r) · r^{|x|}`, `Pr[ν ≥ t] = r^t/(1 + r)` for `t ≥ 1` and
  `1 − r^{1−t}/(1 + r)` for `t ≤ 0` — a genuine instance, the real law.
* `TailNoise c` (for `0 ≤ c`): `TailNoise.logistic c`, `G t = 1/(1 + e^{c·t})`, the tail of a
  discretised logistic law on ℤ — a genuine distribution on ℤ with every shift ratio `≤ e^c`
  (the discrete Laplace tail odp samples is `dlapTailNoise`, `Odp/Mech/Laplace/Law.lean`).
* `IntLaw` and `IntLaw.ShiftWithin 0 ε`: `IntLaw.dirac z₀` with `IntLaw.shiftWithin_zero` (the
  noiseless release, `L = 1`). No finitely supported law satisfies `ShiftBound` (see the header
  of `Odp/Mech/Common/Noise.lean`, "Which hypotheses have genuine witnesses").
* `Iter.ShiftDominated`: `Iter.shiftDominated_rr` (randomised response on the parity of the
  centre, a non-constant kernel, rate `r ≥ 0`).
* `Iter.StepsDP`: `Iter.stepsDP_const` (steps that ignore the data, any `ε_k, δ_k ≥ 0`);
  `Iter.PrefixDP` then follows by basic composition (`Odp.Mech.prefixDP_basic`).
* `IQRDataFacts.witness` (a non-constant statistic, every `L ≥ 1`), `IQRDataFacts.const`, `ERMRelease.const` (a release that does
  not depend on the training set, with the diagonal coupling), `TestSensitivity.const`,
  `UtilitySensitivity.const`, `Iter.l1Sensitive_id` (the identity query on `ℤ` with
  `|x − x'| ≤ 1`, `m = 1`), `MedianDP.const` (a median that ignores the data).
* Jointly, for `M_IQR`: `iqr_logBin_hyps_satisfiable` and `iqr_logBinLap_hyps_satisfiable`
  (`Odp/Mech/PTR/IQR.lean`). The genuine witnesses of the other hypotheses (the clamped discrete
  Laplace, data-dependent releases and steps) are in `Odp/Mech/Common/Witnesses.lean`.

`LapNoise` and `GaussNoise` have no instance here (no finitely supported law is one; the real
discrete Laplace and Gaussian need infinite sums): see the trust boundary's header.

Also here: integers in `R` (`intR`) and two inequalities about inverses, used by the logistic
tail and by the exponential median (`Odp/Mech/PTR/Median.lean`).
-/
module

public import Odp.Mech.Common.Noise

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech

open Odp.Core
open Odp.Core.ExpField

noncomputable section

variable {R : Type} [ExpField R]

/-! ### Integers in `R`, inverses -/

/-- An integer in `R`. -/
def intR : Int → R
  | .ofNat n => natR n
  | .negSucc n => -(natR n + 1)

theorem intR_succ (t : Int) : (intR (t + 1) : R) = intR t + 1 := by
  cases t with
  | ofNat n => show natR (n + 1) = natR n + 1; exact natR_succ n
  | negSucc n =>
    cases n with
    | zero =>
      have h : Int.negSucc 0 + 1 = Int.ofNat 0 := by decide
      rw [h]
      show natR 0 = -(natR 0 + 1) + 1
      rw [natR_zero]; grind
    | succ m =>
      have h : Int.negSucc (m + 1) + 1 = Int.negSucc m := by omega
      rw [h]
      show -(natR m + 1) = -(natR (m + 1) + 1) + 1
      rw [natR_succ]; grind

theorem inv_le_one_of_one_le {d : R} (h : 1 ≤ d) : d⁻¹ ≤ 1 := by
  have hd : 0 < d := by grind
  have hi := inv_pos' hd
  have h1 : d * d⁻¹ = 1 := Lean.Grind.Field.mul_inv_cancel (by grind)
  have h2 := mul_le_mul_right' d⁻¹ h (by grind)
  grind

/-- `b ≤ k·a` with `a, b > 0` gives `a⁻¹ ≤ k·b⁻¹`. -/
theorem inv_le_mul_inv {a b k : R} (ha : 0 < a) (hb : 0 < b) (h : b ≤ k * a) :
    a⁻¹ ≤ k * b⁻¹ := by
  have hai := inv_pos' ha
  have hbi := inv_pos' hb
  have h1 : a * a⁻¹ = 1 := Lean.Grind.Field.mul_inv_cancel (by grind)
  have h2 : b * b⁻¹ = 1 := Lean.Grind.Field.mul_inv_cancel (by grind)
  have h3 := mul_le_mul_right' (a⁻¹ * b⁻¹) h (mul_nonneg' (by grind) (by grind))
  have e1 : b * (a⁻¹ * b⁻¹) = a⁻¹ * (b * b⁻¹) := by grind
  have e2 : k * a * (a⁻¹ * b⁻¹) = k * b⁻¹ * (a * a⁻¹) := by grind
  rw [e1, e2, h1, h2] at h3
  grind


/-! ### The hypothesis `LapTail` is satisfiable: the discrete Laplace tail in closed form

With `r = e^{−β}` and `P[ν = x] = (1 − r)/(1 + r) · r^{|x|}`:
`Pr[ν ≥ t] = r^t/(1 + r)` for `t ≥ 1` and `1 − r^{1−t}/(1 + r)` for `t ≤ 0`
(`odp.samplers.discrete_laplace_tail`). Here `r^k = e^{−kβ}`. -/

/-- `r^k = e^{−kβ}` for a natural number `k`. -/
def lapPow (β : R) (k : Nat) : R := exp (-(natR k * β))

/-- The discrete Laplace tail `Pr[ν ≥ t]` with `r = e^{−β}` (odp's `discrete_laplace_tail`). -/
def discreteLaplaceTail (β : R) (t : Int) : R :=
  if 1 ≤ t then lapPow β t.toNat * (1 + lapPow β 1)⁻¹
  else 1 - lapPow β (1 - t).toNat * (1 + lapPow β 1)⁻¹

theorem lapPow_zero (β : R) : lapPow β 0 = 1 := by
  unfold lapPow
  rw [natR_zero]
  have h : -((0 : R) * β) = 0 := by grind
  rw [h, exp_zero]

theorem lapPow_succ (β : R) (k : Nat) : lapPow β (k + 1) = lapPow β k * lapPow β 1 := by
  unfold lapPow
  rw [← exp_add]
  congr 1
  rw [natR_succ, natR_succ, natR_zero]
  grind

theorem lapPow_pos (β : R) (k : Nat) : 0 < lapPow β k := exp_pos _

theorem lapPow_le_one {β : R} (hβ : 0 ≤ β) (k : Nat) : lapPow β k ≤ 1 := by
  unfold lapPow
  have h := exp_le_exp (-(natR k * β)) 0 (by
    have := mul_nonneg' (natR_nonneg (R := R) k) hβ
    grind)
  rw [exp_zero] at h
  exact h

theorem lapPow_succ_le {β : R} (hβ : 0 ≤ β) (k : Nat) : lapPow β (k + 1) ≤ lapPow β k := by
  rw [lapPow_succ]
  have h0 := lapPow_pos β k
  exact mul_le_self (lapPow_le_one hβ 1) (by grind)

theorem exp_mul_lapPow_one (β : R) : exp β * lapPow β 1 = 1 := by
  unfold lapPow
  rw [← exp_add, natR_succ, natR_zero]
  have h : β + -((0 + 1) * β) = 0 := by grind
  rw [h, exp_zero]

/-- The closed-form discrete Laplace tail satisfies the hypothesis `LapTail β` for every
`β ≥ 0`, in every `ExpField`: `LapTail` is not vacuous. -/
def discreteLaplaceTail_isLapTail (β : R) (hβ : 0 ≤ β) : LapTail R β where
  G := discreteLaplaceTail β
  nonneg := by
    intro t
    unfold discreteLaplaceTail
    have hr1 := lapPow_pos β 1
    have hD : 0 < (1 + lapPow β 1)⁻¹ := inv_pos' (by grind)
    have hDD : (1 + lapPow β 1) * (1 + lapPow β 1)⁻¹ = 1 :=
      Lean.Grind.Field.mul_inv_cancel (by grind)
    by_cases h : 1 ≤ t
    · rw [if_pos h]
      exact mul_nonneg' (by have := lapPow_pos β t.toNat; grind) (by grind)
    · rw [if_neg h]
      have hk := lapPow_le_one hβ (1 - t).toNat
      have hk0 := lapPow_pos β (1 - t).toNat
      have h1 := mul_le_mul_right' (1 + lapPow β 1)⁻¹ (show lapPow β (1 - t).toNat ≤ 1 + lapPow β 1 by grind)
        (by grind)
      grind
  le_one := by
    intro t
    unfold discreteLaplaceTail
    have hr1 := lapPow_pos β 1
    have hD : 0 < (1 + lapPow β 1)⁻¹ := inv_pos' (by grind)
    have hDD : (1 + lapPow β 1) * (1 + lapPow β 1)⁻¹ = 1 :=
      Lean.Grind.Field.mul_inv_cancel (by grind)
    by_cases h : 1 ≤ t
    · rw [if_pos h]
      have hk := lapPow_le_one hβ t.toNat
      have h1 := mul_le_mul_right' (1 + lapPow β 1)⁻¹ (show lapPow β t.toNat ≤ 1 + lapPow β 1 by grind)
        (by grind)
      grind
    · rw [if_neg h]
      have := mul_nonneg' (by have := lapPow_pos β (1 - t).toNat; grind : (0 : R) ≤ lapPow β (1 - t).toNat)
        (by grind : (0 : R) ≤ (1 + lapPow β 1)⁻¹)
      grind
  anti := by
    intro t
    unfold discreteLaplaceTail
    have hr1 := lapPow_pos β 1
    have hD : 0 < (1 + lapPow β 1)⁻¹ := inv_pos' (by grind)
    have hDD : (1 + lapPow β 1) * (1 + lapPow β 1)⁻¹ = 1 :=
      Lean.Grind.Field.mul_inv_cancel (by grind)
    generalize hD' : (1 + lapPow β 1)⁻¹ = D at hD hDD ⊢
    by_cases h : 1 ≤ t
    · rw [if_pos h, if_pos (show (1 : Int) ≤ t + 1 by omega)]
      have ht : (t + 1).toNat = t.toNat + 1 := by omega
      rw [ht]
      exact mul_le_mul_right' D (lapPow_succ_le hβ t.toNat) (by grind)
    · by_cases h0 : t = 0
      · subst h0
        rw [if_neg (show ¬ (1 : Int) ≤ 0 by omega), if_pos (show (1 : Int) ≤ 0 + 1 by omega)]
        have e1 : ((0 : Int) + 1).toNat = 1 := by decide
        have e2 : ((1 : Int) - 0).toNat = 1 := by decide
        rw [e1, e2]
        -- r·D ≤ 1 − r·D, i.e. 2rD ≤ (1 + r)D, i.e. r ≤ 1
        have hr := lapPow_le_one hβ 1
        have h1 := mul_le_mul_right' D hr (by grind)
        grind
      · rw [if_neg h, if_neg (show ¬ (1 : Int) ≤ t + 1 by omega)]
        have ht : (1 - t).toNat = (1 - (t + 1)).toNat + 1 := by omega
        rw [ht]
        have := mul_le_mul_right' D (lapPow_succ_le hβ (1 - (t + 1)).toNat) (by grind)
        grind
  ratio := by
    intro t
    unfold discreteLaplaceTail
    have hr1 := lapPow_pos β 1
    have hr1le := lapPow_le_one hβ 1
    have hE := exp_mul_lapPow_one β
    have hE1 := one_le_exp hβ
    have hD : 0 < (1 + lapPow β 1)⁻¹ := inv_pos' (by grind)
    have hDD : (1 + lapPow β 1) * (1 + lapPow β 1)⁻¹ = 1 :=
      Lean.Grind.Field.mul_inv_cancel (by grind)
    generalize hD' : (1 + lapPow β 1)⁻¹ = D at hD hDD ⊢
    generalize hr' : lapPow β 1 = r at hr1 hr1le hE hDD ⊢
    by_cases h : 1 ≤ t
    · rw [if_pos h, if_pos (show (1 : Int) ≤ t + 1 by omega)]
      have ht : (t + 1).toNat = t.toNat + 1 := by omega
      rw [ht, lapPow_succ, hr']
      -- r^t·D = e^β · (r^t · r · D)
      generalize lapPow β t.toNat = u
      have : exp β * (u * r * D) = (exp β * r) * (u * D) := by grind
      rw [this, hE]
      grind
    · by_cases h0 : t = 0
      · subst h0
        rw [if_neg (show ¬ (1 : Int) ≤ 0 by omega), if_pos (show (1 : Int) ≤ 0 + 1 by omega)]
        have e1 : ((0 : Int) + 1).toNat = 1 := by decide
        have e2 : ((1 : Int) - 0).toNat = 1 := by decide
        rw [e1, e2, hr']
        -- 1 − rD = D = e^β · (r D)
        have : exp β * (r * D) = (exp β * r) * D := by grind
        rw [this, hE]
        grind
      · rw [if_neg h, if_neg (show ¬ (1 : Int) ≤ t + 1 by omega)]
        have ht : (1 - t).toNat = (1 - (t + 1)).toNat + 1 := by omega
        rw [ht, lapPow_succ, hr']
        generalize hw : lapPow β (1 - (t + 1)).toNat = u
        have hu0 : 0 < u := by rw [← hw]; exact lapPow_pos _ _
        -- 1 − (t+1) ≥ 1, so u ≤ r
        have hk : (1 - (t + 1)).toNat = ((1 - (t + 1)).toNat - 1) + 1 := by omega
        have hur : u ≤ r := by
          rw [← hw, hk, lapPow_succ, hr']
          have h1 := mul_le_self (lapPow_le_one hβ ((1 - (t + 1)).toNat - 1)) (show (0 : R) ≤ r by grind)
          grind
        -- goal: 1 − u·r·D ≤ e^β (1 − u D); write w = u D ≤ r D
        have hw0 : 0 ≤ u * D := mul_nonneg' (by grind) (by grind)
        have hwr : u * D ≤ r * D := mul_le_mul_right' D hur (by grind)
        -- e^β + r ≥ 2 (from (e^β − 1)(1 − r) ≥ 0 and e^β r = 1)
        have hamgm := mul_nonneg' (show (0 : R) ≤ exp β - 1 by grind) (show (0 : R) ≤ 1 - r by grind)
        -- (e^β − r)·(u D) ≤ (e^β − r)·(r D) = e^β r D − r r D = D − r r D = (1 − r)
        have hmono := mul_le_mul_left' (exp β - r) hwr (by grind)
        have hrD : r * D = 1 - D := by grind
        have key : (exp β - r) * (r * D) = 1 - r := by
          have : (exp β - r) * (r * D) = (exp β * r) * D - r * (r * D) := by grind
          rw [this, hE, hrD]
          grind
        grind

/-! ### Tail noise, integer laws, data facts, the median interface -/

/-- The logistic tail `1/(1 + e^{c·t})`: a distribution on ℤ whose threshold steps cost at most
`e^c` (non-vacuity of `TailNoise`). -/
def TailNoise.logistic (c : R) (hc : 0 ≤ c) : TailNoise R c where
  G t := (1 + exp (c * intR t))⁻¹
  nonneg t := by
    have := exp_pos (c * intR t)
    have := inv_pos' (show (0 : R) < 1 + exp (c * intR t) by grind)
    grind
  le_one t := by
    have := exp_pos (c * intR t)
    exact inv_le_one_of_one_le (by grind)
  antitone t := by
    have he : exp (c * intR (t + 1)) = exp (c * intR t) * exp c := by
      rw [intR_succ, ← exp_add]; congr 1; grind
    rw [he]
    have h0 := exp_pos (c * intR t)
    have h1 := one_le_exp hc
    have h2 := mul_le_mul_left' (exp (c * intR t)) h1 (by grind)
    have h3 := inv_le_mul_inv (k := 1) (show (0 : R) < 1 + exp (c * intR t) * exp c by
      have := mul_nonneg' (exp_nonneg (c * intR t)) (exp_nonneg c); grind)
      (show (0 : R) < 1 + exp (c * intR t) by grind) (by grind)
    grind
  up t := by
    have he : exp (c * intR (t + 1)) = exp (c * intR t) * exp c := by
      rw [intR_succ, ← exp_add]; congr 1; grind
    rw [he]
    have h0 := exp_pos (c * intR t)
    have h1 := one_le_exp hc
    have h4 := mul_nonneg' (exp_nonneg (c * intR t)) (exp_nonneg c)
    exact inv_le_mul_inv (show (0 : R) < 1 + exp (c * intR t) by grind) (by grind) (by grind)
  down t := by
    have he : exp (c * intR (t + 1)) = exp (c * intR t) * exp c := by
      rw [intR_succ, ← exp_add]; congr 1; grind
    rw [he]
    generalize hE : exp (c * intR t) = E
    have h0 : 0 < E := by rw [← hE]; exact exp_pos _
    have h1 := one_le_exp hc
    generalize exp c = e at h1 ⊢
    -- `1 − (1 + y)⁻¹ = y·(1 + y)⁻¹`
    have hy1 : (0 : R) < 1 + E * e := by have := mul_nonneg' (show (0 : R) ≤ E by grind) (show (0 : R) ≤ e by grind); grind
    have hy0 : (0 : R) < 1 + E := by grind
    have i1 : (1 + E * e) * (1 + E * e)⁻¹ = 1 := Lean.Grind.Field.mul_inv_cancel (by grind)
    have i0 : (1 + E) * (1 + E)⁻¹ = 1 := Lean.Grind.Field.mul_inv_cancel (by grind)
    have a1 : 1 - (1 + E * e)⁻¹ = (E * e) * (1 + E * e)⁻¹ := by grind
    have a0 : e * (1 - (1 + E)⁻¹) = (E * e) * (1 + E)⁻¹ := by grind
    rw [a1, a0]
    have hle : (1 + E * e)⁻¹ ≤ 1 * (1 + E)⁻¹ :=
      inv_le_mul_inv hy1 hy0 (by have := mul_le_mul_left' E h1 (by grind); grind)
    have := mul_le_mul_left' (E * e) hle (mul_nonneg' (by grind) (by grind))
    grind

/-- The point mass at `z₀` (the noiseless release, `L = 1`). -/
def IntLaw.dirac (z₀ : Int) : IntLaw R where
  P B := if B z₀ then 1 else 0
  nonneg B := by cases B z₀ <;> simp <;> grind
  total := by simp
  additive B C h := by
    cases hB : B z₀ <;> cases hC : C z₀ <;> simp
    · grind
    · grind
    · grind
    · have := h z₀ hB; rw [hC] at this; cases this

/-- Every law satisfies `ShiftWithin` with `n = 0` (and `ε ≥ 0`). -/
theorem IntLaw.shiftWithin_zero (W : IntLaw R) {ε : R} (hε : 0 ≤ ε) : W.ShiftWithin 0 ε := by
  intro B s hs
  have h0 : s = 0 := by omega
  subst h0
  have e : (fun z : Int => B (z + 0)) = B := by funext z; rw [Int.add_zero]
  rw [e]
  have h1 := one_le_exp hε
  have h2 := mul_le_mul_right' (W.P B) h1 (W.nonneg B)
  grind

/-- A constant statistic satisfies the IQR data facts vacuously. -/
theorem IQRDataFacts.const {X : Type} (Nbr : X → X → Prop) (sub : X → Option Int) (L : Nat) :
    IQRDataFacts Nbr (fun _ => 1) sub L where
  lipschitz _ _ _ := by omega
  same_bin _ _ _ h := by omega

/-- The sub-bin index of the data-fact witness: `L` (bin 1) for `x ≥ 1`, `x` below. -/
def witSub (L : Nat) (x : Int) : Option Int := some (if 1 ≤ x then (L : Int) else x)

/-- **A non-constant instance of the IQR data facts**, for every `L ≥ 1`: databases `x ∈ ℤ` whose
neighbours differ by at most 1, the stability statistic `A x = x` (it takes every value), and the
sub-bin index `witSub L x` (it varies; for `A x ≥ 2` the database and its neighbours lie in bin 1).
A small synthetic instance: odp's real statistic (order statistics of the data) is stated, not
proved, to satisfy the facts (tested in Python). -/
theorem IQRDataFacts.witness (L : Nat) (hL : 1 ≤ L) :
    IQRDataFacts (fun x x' : Int => (x - x').natAbs ≤ 1) (fun x => x) (witSub L) L where
  lipschitz x x' h := by omega
  same_bin x x' h hx := by
    have h1 : 1 ≤ x := by omega
    have h2 : 1 ≤ x' := by omega
    refine ⟨1, L, L, ?_, ?_, by omega, by omega, by omega, by omega⟩
    · show some (if 1 ≤ x then (L : Int) else x) = some (L : Int)
      rw [if_pos h1]
    · show some (if 1 ≤ x' then (L : Int) else x') = some (L : Int)
      rw [if_pos h2]

/-- A release that ignores the training set, with the diagonal coupling. -/
theorem ERMRelease.const {Xtr V T : Type} [Enum V] [DecidableEq V] (NbrTr : Xtr → Xtr → Prop)
    (d : Dist V R) (score : V → T → Int) {ε₁ : R} (hε : 0 ≤ ε₁) (m : Nat) :
    ERMRelease NbrTr (fun _ => d) score ε₁ m where
  dp _ _ _ S := by
    have := one_le_exp hε
    have := mul_le_mul_right' (Pr d S) this (Pr_nonneg d S)
    grind
  coupling _ _ _ := by
    refine ⟨fun v v' => if v' = v then d.mass v else 0, ?_, ?_, ?_, ?_⟩
    · intro v v'
      by_cases h : v' = v
      · simp [h]; exact d.nonneg v
      · simp [h]; grind
    · intro v
      have := lsum_indicator_mem (Enum.elems : List V) Enum.nodup v (d.mass v)
      rw [if_pos (Enum.complete v)] at this
      exact this
    · intro v'
      have e : (fun v => if v' = v then d.mass v else (0 : R))
          = (fun v => if v = v' then d.mass v' else 0) := by
        funext v
        by_cases h : v = v'
        · subst h; simp
        · have h' : ¬ v' = v := fun e => h e.symm
          simp [h, h']
      show fsum (fun v => if v' = v then d.mass v else (0 : R)) = d.mass v'
      rw [e]
      have := lsum_indicator_mem (Enum.elems : List V) Enum.nodup v' (d.mass v')
      rw [if_pos (Enum.complete v')] at this
      exact this
    · intro v v' h t
      by_cases hv : v' = v
      · subst hv; simp
      · simp [hv] at h

/-- A median that ignores the data is `e`-DP for every `e ≥ 0`. -/
theorem MedianDP.const {X Y : Type} [Enum Y] (Nbr : X → X → Prop) (d : R → Dist Y R) :
    MedianDP Nbr (fun e (_ : X) => d e) := by
  intro e he _ _ _ S
  have h1 := one_le_exp he
  have := mul_le_mul_right' (Pr (d e) S) h1 (Pr_nonneg (d e) S)
  grind

/-- A utility that ignores the data has sensitivity 0. -/
theorem UtilitySensitivity.const {X Y : Type} (Nbr : X → X → Prop) (f : Y → Int) :
    UtilitySensitivity Nbr (fun (_ : X) y => f y) := by
  intro _ _ y _
  show f y ≤ f y + 1 ∧ f y ≤ f y + 1
  omega

/-- A score that ignores the test set is insensitive to it. -/
theorem TestSensitivity.const {V T : Type} (NbrTe : T → T → Prop) (f : V → Int) (m : Nat) :
    TestSensitivity NbrTe (fun v (_ : T) => f v) m := by
  intro v t t' _
  simp

/-! ### The iterative mechanism's hypotheses -/

namespace Iter

variable {X W : Type} [Enum W]

/-- Steps that ignore the database satisfy `StepsDP` for all nonnegative parameters. -/
theorem stepsDP_const (Nbr : X → X → Prop) (p : List W → Dist W R) (eps dl : List R)
    (heps : ∀ j, 0 ≤ eps.getD j 0) (hdl : ∀ j, 0 ≤ dl.getD j 0) :
    StepsDP Nbr (fun h _ => p h) eps dl := by
  intro h _ x x' _ S
  have h1 := one_le_exp (heps h.length)
  have h2 := hdl h.length
  have h3 := Pr_nonneg (p h) S
  have h4 := mul_le_mul_right' (Pr (p h) S) h1 h3
  show Pr (p h) S ≤ exp (eps.getD h.length 0) * Pr (p h) S + dl.getD h.length 0
  generalize Pr (p h) S = a at h3 h4 ⊢
  generalize exp (eps.getD h.length 0) = e at h1 h4 ⊢
  generalize dl.getD h.length 0 = δ at h2 ⊢
  grind

/-- Randomised response on the parity of the centre: `true` with probability
`e^r/(1 + e^r)` if `u` is even, `1/(1 + e^r)` if odd. -/
def rrKernel (r : R) (u : Int) : Dist Bool R where
  mass := fun c => if c = decide (u % 2 = 0) then exp r * (1 + exp r)⁻¹ else (1 + exp r)⁻¹
  nonneg := by
    have hp : 0 < (1 + exp r)⁻¹ := inv_pos' (by have := exp_pos r; grind)
    have := exp_pos r
    intro c
    split
    · exact mul_nonneg' (by grind) (by grind)
    · grind
  total := by
    have hne : (1 + exp r) ≠ 0 := by have := exp_pos r; grind
    have hinv : (1 + exp r) * (1 + exp r)⁻¹ = 1 := Lean.Grind.Field.mul_inv_cancel hne
    show (if false = decide (u % 2 = 0) then exp r * (1 + exp r)⁻¹ else (1 + exp r)⁻¹)
      + ((if true = decide (u % 2 = 0) then exp r * (1 + exp r)⁻¹ else (1 + exp r)⁻¹) + 0) = 1
    generalize (1 + exp r)⁻¹ = q at hinv
    cases decide (u % 2 = 0) <;> simp <;> grind

/-- `rrKernel r` is shift-dominated with rate `r` (for `r ≥ 0`). -/
theorem shiftDominated_rr (r : R) (hr : 0 ≤ r) : ShiftDominated (rrKernel r) r := by
  intro u u' c
  have hA : 1 ≤ exp r := one_le_exp hr
  have hq : 0 < (1 + exp r)⁻¹ := inv_pos' (by have := exp_pos r; grind)
  -- every mass is `A q` or `q`
  have hv : ∀ v, (rrKernel r v).mass c = exp r * (1 + exp r)⁻¹ ∨
      (rrKernel r v).mass c = (1 + exp r)⁻¹ := by
    intro v
    show (if c = decide (v % 2 = 0) then exp r * (1 + exp r)⁻¹ else (1 + exp r)⁻¹)
        = exp r * (1 + exp r)⁻¹ ∨
      (if c = decide (v % 2 = 0) then exp r * (1 + exp r)⁻¹ else (1 + exp r)⁻¹) = (1 + exp r)⁻¹
    split
    · exact Or.inl rfl
    · exact Or.inr rfl
  by_cases hu : u = u'
  · subst hu
    have e0 : natR (u - u).natAbs * r = (0 : R) := by
      rw [show (u - u).natAbs = 0 by omega, natR_zero]
      grind
    rw [e0, exp_zero]
    grind
  · have h1 : 1 ≤ (u - u').natAbs := by omega
    have hn : (1 : R) ≤ natR (u - u').natAbs := by
      have := natR_le (R := R) h1
      rw [natR_succ, natR_zero] at this
      grind
    have hE : exp r ≤ exp (natR (u - u').natAbs * r) := by
      apply exp_le_exp
      have := mul_le_mul_right' r hn hr
      grind
    have hm' := (rrKernel r u').nonneg c
    -- `mass u c ≤ e^r · mass u' c`
    have hstep : (rrKernel r u).mass c ≤ exp r * (rrKernel r u').mass c := by
      have hqA : (1 + exp r)⁻¹ ≤ exp r * (1 + exp r)⁻¹ := by
        have := mul_le_mul_right' (1 + exp r)⁻¹ hA (by grind)
        grind
      have hAA : exp r * (1 + exp r)⁻¹ ≤ exp r * (exp r * (1 + exp r)⁻¹) :=
        mul_le_mul_left' (exp r) hqA (by grind)
      rcases hv u with h | h <;> rcases hv u' with h' | h' <;> rw [h, h'] <;> grind
    have := mul_le_mul_right' ((rrKernel r u').mass c) hE hm'
    grind

/-- The identity query on `ℤ` (one coordinate) has L1 sensitivity 1 for `|x − x'| ≤ 1`. -/
theorem l1Sensitive_id {C : Type} :
    L1Sensitive (C := C) (fun x x' : Int => (x - x').natAbs ≤ 1) 1
      (fun _ x => ⟨[x], rfl⟩) 1 := by
  intro h x x' hx
  show (x - x').natAbs + 0 ≤ 1
  omega

end Iter

end

end Odp.Mech
