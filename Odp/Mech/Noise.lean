/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# THE TRUST BOUNDARY of `Odp/Mech`: what is assumed about the noise primitives

Every guarantee proved in `Odp/Mech` (Lemma 3's DP → ODP for the grid Laplace and Gaussian
mechanisms, randomized response, M_toy, and Lemma 8 for the Sparse Vector Technique) is proved
from the hypotheses in this file and from nothing else about the samplers. They are structures
passed as theorem arguments (never `axiom`s); a theorem that takes one says: "if the noise has
this property, the mechanism has this guarantee". Nothing here is proved about odp's Python
samplers — that link is the trust boundary, and it is stated below, hypothesis by hypothesis.

## How a noise variable is seen: an expectation, not a sum
A noise variable `Z` on `ℤ` is seen only through its expectation `E f = 𝔼[f(Z)]` on non-negative
bounded functions `f : ℤ → R` (`Expect`): `E` is non-negative, additive, non-negatively
homogeneous, and `E 1 = 1`. For a probability mass function `p` on `ℤ` and `R = ℝ`,
`E f = ∑_{z ∈ ℤ} p(z) f(z)` has these properties (the series converges absolutely because `f` is
bounded). Nothing in `Odp/Mech` needs an infinite sum: the mechanisms' outputs are finite
(clamped releases, answer lists of bounded length), so their laws are finite distributions
(`Odp.Core.Dist`) whose masses are values of `E`, and Theorem 7 (`Odp.Core.odp_composition`)
applies to them.

## The hypotheses
* `LapNoise α` — a discrete Laplace law of scale `b = 1/α` (odp:
  `odp.samplers.discrete_laplace(scale)`, Canonne–Kamath–Steinke 2020, Alg. 2, with
  `P[Z = z] ∝ e^{−|z|/b}`): a unit shift of the noise costs at most `e^α`:
  `E[f(Z + 1)] ≤ e^α E[f(Z)]` and `E[f(Z − 1)] ≤ e^α E[f(Z)]`.
  *Why it holds*: re-index the sum, `∑_z p(z) f(z ± 1) = ∑_w p(w ∓ 1) f(w)`, and use the pointwise
  ratio `p(w ∓ 1) = e^{(|w| − |w ∓ 1|)/b} p(w) ≤ e^{1/b} p(w)`. SampCert proves the same two steps
  with Mathlib for its discrete Laplace sampler (`tsum_shift` and `laplace_inequality` in
  `SampCert/DifferentialPrivacy/Queries/AboveThresh/Privacy.lean`; the sampler's mass function
  in `SampCert/Samplers/LaplaceGen/Properties.lean`, `DiscreteLaplaceGenSample_apply`).
  Used for: the grid Laplace mechanism (`b = m/ε`, so `α = ε/m`) and SVT's threshold noise ρ
  (`b = m/ε1`).
* `GaussNoise m ε δ` — a discrete Gaussian law (odp: `odp.samplers.discrete_gaussian(sigma2)`,
  Canonne–Kamath–Steinke 2020, Alg. 3) whose additive mechanism on `ℤ` with sensitivity `m` is
  (ε, δ)-DP: for every shift `|d| ≤ m` and every set `S ⊆ ℤ`,
  `Pr[Z + d ∈ S] ≤ e^ε Pr[Z ∈ S] + δ`.
  *Why it holds*: Canonne–Kamath–Steinke, Theorem 7, for the δ of their formula; odp computes
  an upper bound of that δ with `odp.gaussian_dp.discrete_gaussian_delta_upper(ε, σ², m)`
  (a tested Python bound, not proved here) and declares it.
* `LapTail β` — the tail `G t = Pr[ν ≥ t]` of a discrete Laplace law of scale `b' = 1/β`
  (SVT's query noise ν_i, `b' = 2cm/ε2`): `0 ≤ G ≤ 1`, `G` is antitone, and
  `G t ≤ e^β G (t + 1)`.
  *Why it holds*: `Pr[ν ≥ t] = ∑_{w ≥ t+1} p(w − 1) ≤ e^{β} ∑_{w ≥ t+1} p(w)` (the pointwise ratio
  above), and `{ν ≥ t + 1} ⊆ {ν ≥ t}`. `odp.samplers.discrete_laplace_tail(k, r)` is the closed
  form `G` with `r = e^{−β}`; `discreteLaplaceTail` below is that closed form over any
  `ExpField`, and `discreteLaplaceTail_isLapTail` proves it satisfies `LapTail β` for every
  `β ≥ 0` — so this hypothesis is satisfiable (not vacuous), in every `ExpField`, by the very
  function odp's exact SVT audit uses.

## What is not shown satisfiable here
No instance of `LapNoise` or `GaussNoise` is built in this file. A finitely supported law cannot
be one: if `z` is its largest support point, `E[1_{z+1}(Z + 1)] = Pr[Z = z] > 0` while
`e^α E[1_{z+1}(Z)] = e^α Pr[Z = z + 1] = 0`. The laws that are instances (the real discrete
Laplace and Gaussian) have expectations that are infinite series, which need real analysis
(Mathlib), not available to this Lean-core build. Their satisfiability rests on those real laws
and on the facts cited above (SampCert proves the Laplace ones with Mathlib).
-/
module

public import Odp.Core.Field

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech

open Odp.Core
open Odp.Core.ExpField

noncomputable section

variable {R : Type} [ExpField R]

/-- `f` is non-negative and bounded: the functions on which an expectation is taken. -/
def Bdd (f : Int → R) : Prop := ∃ B : R, ∀ z, 0 ≤ f z ∧ f z ≤ B

/-- The indicator function of a set `S ⊆ ℤ`. -/
def ind (S : Int → Bool) : Int → R := fun z => if S z then 1 else 0

/-- **Hypothesis shape.** The expectation `E f = 𝔼[f(Z)]` of a noise variable `Z` on `ℤ`, on
non-negative bounded functions. For a mass function `p` on `ℤ` (and `R = ℝ`),
`E f = ∑_z p(z) f(z)` satisfies every field. -/
structure Expect (R : Type) [ExpField R] where
  /-- `E f = 𝔼[f(Z)]` -/
  E : (Int → R) → R
  nonneg : ∀ f, Bdd f → 0 ≤ E f
  add : ∀ f g, Bdd f → Bdd g → E (fun z => f z + g z) = E f + E g
  smul : ∀ (a : R) (f : Int → R), 0 ≤ a → Bdd f → E (fun z => a * f z) = a * E f
  one : E (fun _ => 1) = 1

/-- **Hypothesis (discrete Laplace, scale `1/α`).** A unit shift of the noise costs `e^α`:
`𝔼[f(Z + 1)] ≤ e^α 𝔼[f(Z)]` and `𝔼[f(Z − 1)] ≤ e^α 𝔼[f(Z)]` for non-negative bounded `f`.
Satisfied by `odp.samplers.discrete_laplace(1/α)`: re-index the sum and use
`p(w ∓ 1) ≤ e^α p(w)` (see the file header). -/
structure LapNoise (R : Type) [ExpField R] (α : R) extends Expect R where
  shift_up : ∀ f, Bdd f → E (fun z => f (z + 1)) ≤ exp α * E f
  shift_down : ∀ f, Bdd f → E (fun z => f (z - 1)) ≤ exp α * E f

/-- **Hypothesis (discrete Gaussian, (ε, δ) for shifts up to `m`).** For every integer shift
`|d| ≤ m` and every set `S ⊆ ℤ`: `Pr[Z + d ∈ S] ≤ e^ε Pr[Z ∈ S] + δ`. Satisfied by
`odp.samplers.discrete_gaussian(σ²)` with δ from Canonne–Kamath–Steinke, Theorem 7 (odp declares
the upper bound `odp.gaussian_dp.discrete_gaussian_delta_upper(ε, σ², m)`). -/
structure GaussNoise (R : Type) [ExpField R] (m : Nat) (ε δ : R) extends Expect R where
  shift : ∀ d : Int, -(m : Int) ≤ d → d ≤ (m : Int) → ∀ S : Int → Bool,
    E (fun z => ind S (z + d)) ≤ exp ε * E (ind S) + δ

/-- **Hypothesis (discrete Laplace tail, scale `1/β`).** `G t = Pr[ν ≥ t]`: in `[0, 1]`,
antitone, and `G t ≤ e^β G (t + 1)`. Satisfied by the tail of
`odp.samplers.discrete_laplace(1/β)` (`odp.samplers.discrete_laplace_tail`); see
`discreteLaplaceTail_isLapTail` for the closed form in any `ExpField`. -/
structure LapTail (R : Type) [ExpField R] (β : R) where
  /-- `G t = Pr[ν ≥ t]` -/
  G : Int → R
  nonneg : ∀ t, 0 ≤ G t
  le_one : ∀ t, G t ≤ 1
  anti : ∀ t, G (t + 1) ≤ G t
  ratio : ∀ t, G t ≤ exp β * G (t + 1)

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
