/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Finite output spaces, distributions, events

* `Enum O`: `O` is finite, listed once each by `Enum.elems` (duplicate-free and complete).
* `fsum f = ∑_{o ∈ O} f o`.
* `Dist O R`: a probability mass function on `O` with values in `R` (nonnegative, total mass 1).
* `Event O = O → Bool`: an event. On a finite type every subset `S ⊆ O` is such a function
  (classically, `fun o => decide (o ∈ S)`), so quantifying over `Event O` is quantifying over all
  subsets of the output set, as Definitions 1, 2 and 5 of the paper (Hartmann et al. 2022) do.
* `Pr p S = ∑_{o ∈ S} p o`.
-/
module

public import Odp.Core.Sum

@[expose] public section

set_option autoImplicit false

namespace Odp.Core

/-- A finite type, enumerated once each. -/
class Enum (α : Type) where
  /-- every element, once -/
  elems : List α
  nodup : elems.Nodup
  complete : ∀ a : α, a ∈ elems

instance : Enum Bool where
  elems := [false, true]
  nodup := by decide
  complete := by intro a; cases a <;> decide

instance : Enum Unit where
  elems := [()]
  nodup := by decide
  complete := by intro a; cases a; decide

noncomputable section

open ExpField

variable {R : Type} [ExpField R] {α β O : Type}

/-- `fsum f = ∑_{a ∈ α} f a` over a finite type. -/
def fsum [Enum α] (f : α → R) : R := lsum Enum.elems f

section FSum

variable [Enum α] [Enum β]

theorem fsum_congr {f g : α → R} (h : ∀ a, f a = g a) : fsum f = fsum g :=
  lsum_congr _ (fun a _ => h a)

theorem fsum_zero : fsum (fun _ : α => (0 : R)) = 0 := lsum_zero _

theorem fsum_add (f g : α → R) : fsum (fun a => f a + g a) = fsum f + fsum g := lsum_add _ _ _

theorem fsum_sub (f g : α → R) : fsum (fun a => f a - g a) = fsum f - fsum g := lsum_sub _ _ _

theorem fsum_mul_left (c : R) (f : α → R) : fsum (fun a => c * f a) = c * fsum f :=
  lsum_mul_left _ _ _

theorem fsum_le {f g : α → R} (h : ∀ a, f a ≤ g a) : fsum f ≤ fsum g :=
  lsum_le _ (fun a _ => h a)

theorem fsum_nonneg {f : α → R} (h : ∀ a, 0 ≤ f a) : 0 ≤ fsum f := lsum_nonneg _ (fun a _ => h a)

theorem fsum_comm (f : α → β → R) :
    fsum (fun a => fsum (fun b => f a b)) = fsum (fun b => fsum (fun a => f a b)) :=
  lsum_comm _ _ _

theorem fsum_split (S : α → Bool) (f : α → R) :
    fsum f = fsum (fun a => if S a then f a else 0) + fsum (fun a => if S a then 0 else f a) :=
  lsum_split _ _ _

/-- Regrouping a sum by the labels `κ a` of a finite label type. -/
theorem fsum_regroup [DecidableEq β] (κ : α → β) (f : α → R) :
    fsum (fun k : β => fsum (fun a => if κ a = k then f a else 0)) = fsum f :=
  lsum_regroup _ _ Enum.nodup Enum.complete κ f

end FSum

/-- A probability distribution (mass function) on a finite type. -/
structure Dist (O : Type) (R : Type) [ExpField R] [Enum O] where
  /-- `mass o = Pr(output = o)` -/
  mass : O → R
  nonneg : ∀ o, 0 ≤ mass o
  total : fsum mass = 1

/-- An event: a subset of the outputs, as its indicator. -/
abbrev Event (O : Type) := O → Bool

variable [Enum O]

/-- `Pr p S = ∑_{o ∈ S} p o`. -/
def Pr (p : Dist O R) (S : Event O) : R := fsum (fun o => if S o then p.mass o else 0)

theorem Pr_nonneg (p : Dist O R) (S : Event O) : 0 ≤ Pr p S := by
  apply fsum_nonneg
  intro o
  cases S o
  · simp; grind
  · simp; exact p.nonneg o

theorem Pr_le_one (p : Dist O R) (S : Event O) : Pr p S ≤ 1 := by
  rw [← p.total]
  apply fsum_le
  intro o
  cases S o
  · simp; exact p.nonneg o
  · simp; grind

theorem Pr_univ (p : Dist O R) : Pr p (fun _ => true) = 1 := by
  unfold Pr
  simp only [if_true]
  exact p.total

/-- The probability of an event is the sum of the probabilities of its parts in the blocks of a
partition (blocks `{o | κ o = k}` for labels `k` of a finite type). -/
theorem Pr_regroup {K : Type} [Enum K] [DecidableEq K] (p : Dist O R) (κ : O → K) (S : Event O) :
    Pr p S = fsum (fun k => Pr p (fun o => S o && decide (κ o = k))) := by
  unfold Pr
  rw [← fsum_regroup κ (fun o => if S o then p.mass o else 0)]
  apply fsum_congr
  intro k
  apply fsum_congr
  intro o
  by_cases hk : κ o = k <;> cases hS : S o <;> simp [hk, hS]

end

end Odp.Core
