/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Randomized response is ε-DP, and Lemma 3 for it

**Randomized response** (`odp.mechanisms.noise.RandomizedResponse`): the true category with
probability `e^ε/(e^ε + k − 1)`, each of the other `k − 1` with `1/(e^ε + k − 1)`; it is ε-DP for
any pair of inputs (`rr_dp`), with no hypothesis about any sampler, and ODP with `ℰ ≡ ε` for
every partition by Lemma 3 of Hartmann et al. 2022 (`rr_odp`). Odp draws it exactly (uniform
category, kept with probability 1 or `e^{−ε}`, else redrawn), whose law is this one — that
equality is not proved here (the sampler is Python): the theorem is about the law.

Narrower than the paper: nothing; randomized response is proved for any finite category type
(odp asks `k ≥ 2` distinct categories) and any `ε ≥ 0`.
-/
module

public import Odp.Mech.Common.Basic

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech

open Odp.Core
open Odp.Core.ExpField

noncomputable section

variable {R : Type} [ExpField R]

variable {X O K : Type} [Enum O]

/-! ### Randomized response -/

/-- `e^ε + k − 1` for the `k` categories of `O`. -/
def rrDen (O : Type) [Enum O] (ε : R) : R := exp ε + natR (Enum.elems : List O).length - 1

theorem rrDen_pos (ε : R) (t : O) : 0 < rrDen O ε := by
  unfold rrDen
  have h1 : 1 ≤ (Enum.elems : List O).length := by
    have := Enum.complete t
    cases h : (Enum.elems : List O) with
    | nil => rw [h] at this; cases this
    | cons _ _ => simp
  have h2 := natR_le (R := R) h1
  have h3 := exp_pos ε
  rw [natR_one] at h2
  grind

/-- **Randomized response** (`odp.mechanisms.noise.RandomizedResponse`) on a finite category type
`O` with `k` elements: the true category `truth x` with probability `e^ε/(e^ε + k − 1)`, each
other category with probability `1/(e^ε + k − 1)`. -/
def rrMech [DecidableEq O] (ε : R) (truth : X → O) : Mechanism X O R := fun x =>
  { mass := fun o => if o = truth x then exp ε * (rrDen O ε)⁻¹ else (rrDen O ε)⁻¹
    nonneg := fun o => by
      have hd := inv_pos' (rrDen_pos ε (truth x))
      have he := exp_pos ε
      by_cases h : o = truth x
      · rw [if_pos h]; exact mul_nonneg' (by grind) (by grind)
      · rw [if_neg h]; grind
    total := by
      rw [fsum_ite_point]
      have hd : rrDen O ε * (rrDen O ε)⁻¹ = 1 :=
        Lean.Grind.Field.mul_inv_cancel (by have := rrDen_pos ε (truth x); grind)
      unfold rrDen at hd ⊢
      generalize (exp ε + natR (Enum.elems : List O).length - 1)⁻¹ = d at hd ⊢
      grind }

/-- **Randomized response is ε-DP** (for every relation `Nbr`: any two inputs), `ε ≥ 0`. -/
theorem rr_dp [DecidableEq O] (Nbr : X → X → Prop) (ε : R) (hε : 0 ≤ ε) (truth : X → O) :
    DP Nbr (rrMech ε truth) ε 0 := by
  apply dp_of_pointwise
  intro x x' _ o
  show (if o = truth x then exp ε * (rrDen O ε)⁻¹ else (rrDen O ε)⁻¹)
    ≤ exp ε * (if o = truth x' then exp ε * (rrDen O ε)⁻¹ else (rrDen O ε)⁻¹)
  have hd := inv_pos' (rrDen_pos ε (truth x))
  have he := one_le_exp hε
  generalize (rrDen O ε)⁻¹ = d at hd ⊢
  have h1 := mul_le_mul_right' d he (by grind)
  have h2 := mul_le_mul_left' (exp ε) (show d ≤ exp ε * d by grind) (by grind)
  by_cases h : o = truth x
  · rw [if_pos h]
    by_cases h' : o = truth x'
    · rw [if_pos h']; grind
    · rw [if_neg h']; grind
  · rw [if_neg h]
    by_cases h' : o = truth x'
    · rw [if_pos h']; grind
    · rw [if_neg h']; grind

/-- **Randomized response as ODP** (Lemma 3): `ℰ ≡ ε` for any partition, δ = 0. -/
theorem rr_odp [DecidableEq O] [Enum K] [DecidableEq K] (Nbr : X → X → Prop) (ε : R)
    (hε : 0 ≤ ε) (truth : X → O) (κ : O → K) :
    ODP Nbr (rrMech ε truth) κ (fun _ => ε) 0 :=
  odp_of_dp Nbr _ ε 0 (rr_dp Nbr ε hε truth) κ

end

end Odp.Mech
