/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Finite sums over lists

`lsum l f = f a₁ + … + f aₙ` for `l = [a₁, …, aₙ]`, with the handful of facts the core needs:
linearity, monotonicity, exchange of two sums, and sums of indicators over a duplicate-free list.
-/
module

public import Odp.Core.Field

@[expose] public section

set_option autoImplicit false

namespace Odp.Core

noncomputable section

open ExpField

variable {R : Type} [ExpField R] {α β : Type}

/-- `lsum l f = ∑_{a ∈ l} f a` (with multiplicity). -/
def lsum : List α → (α → R) → R
  | [], _ => 0
  | a :: l, f => f a + lsum l f

theorem lsum_nil (f : α → R) : lsum [] f = 0 := rfl

theorem lsum_cons (a : α) (l : List α) (f : α → R) : lsum (a :: l) f = f a + lsum l f := rfl

theorem lsum_congr (l : List α) {f g : α → R} (h : ∀ a ∈ l, f a = g a) : lsum l f = lsum l g := by
  induction l with
  | nil => rfl
  | cons a l ih =>
    rw [lsum_cons, lsum_cons, h a (List.mem_cons_self), ih (fun b hb => h b (List.mem_cons_of_mem a hb))]

theorem lsum_zero (l : List α) : lsum l (fun _ => (0 : R)) = 0 := by
  induction l with
  | nil => rfl
  | cons a l ih => rw [lsum_cons, ih]; grind

theorem lsum_add (l : List α) (f g : α → R) :
    lsum l (fun a => f a + g a) = lsum l f + lsum l g := by
  induction l with
  | nil => rw [lsum_nil, lsum_nil, lsum_nil]; grind
  | cons a l ih =>
    rw [lsum_cons, lsum_cons, lsum_cons, ih]
    generalize lsum l f = x
    generalize lsum l g = y
    grind

theorem lsum_neg (l : List α) (f : α → R) : lsum l (fun a => -f a) = -lsum l f := by
  induction l with
  | nil => rw [lsum_nil, lsum_nil]; grind
  | cons a l ih =>
    rw [lsum_cons, lsum_cons, ih]
    generalize lsum l f = x
    grind

theorem lsum_sub (l : List α) (f g : α → R) :
    lsum l (fun a => f a - g a) = lsum l f - lsum l g := by
  have h : lsum l (fun a => f a - g a) = lsum l (fun a => f a + -g a) :=
    lsum_congr l (fun a _ => by grind)
  rw [h, lsum_add, lsum_neg]
  generalize lsum l f = x
  generalize lsum l g = y
  grind

theorem lsum_mul_left (l : List α) (c : R) (f : α → R) :
    lsum l (fun a => c * f a) = c * lsum l f := by
  induction l with
  | nil => rw [lsum_nil, lsum_nil]; grind
  | cons a l ih =>
    rw [lsum_cons, lsum_cons, ih]
    generalize lsum l f = x
    grind

theorem lsum_le (l : List α) {f g : α → R} (h : ∀ a ∈ l, f a ≤ g a) : lsum l f ≤ lsum l g := by
  induction l with
  | nil => rw [lsum_nil, lsum_nil]; grind
  | cons a l ih =>
    rw [lsum_cons, lsum_cons]
    have h1 := h a List.mem_cons_self
    have h2 := ih (fun b hb => h b (List.mem_cons_of_mem a hb))
    generalize lsum l f = x at h2
    generalize lsum l g = y at h2
    grind

theorem lsum_nonneg (l : List α) {f : α → R} (h : ∀ a ∈ l, 0 ≤ f a) : 0 ≤ lsum l f := by
  have h1 := lsum_le l (f := fun _ => (0 : R)) (g := f) h
  rw [lsum_zero] at h1
  exact h1

/-- Exchange of two finite sums. -/
theorem lsum_comm (l : List α) (m : List β) (f : α → β → R) :
    lsum l (fun a => lsum m (fun b => f a b)) = lsum m (fun b => lsum l (fun a => f a b)) := by
  induction l with
  | nil => simp only [lsum_nil]; rw [lsum_zero]
  | cons a l ih =>
    simp only [lsum_cons]
    rw [ih]
    exact (lsum_add m _ _).symm

/-- Splitting a sum along a Boolean predicate. -/
theorem lsum_split (l : List α) (S : α → Bool) (f : α → R) :
    lsum l f = lsum l (fun a => if S a then f a else 0) + lsum l (fun a => if S a then 0 else f a) := by
  rw [← lsum_add]
  apply lsum_congr
  intro a _
  cases S a <;> simp <;> grind

/-- Over a duplicate-free list that contains `a`, the indicator of `a` sums to its value. -/
theorem lsum_indicator_mem [DecidableEq α] (l : List α) (hl : l.Nodup) (a : α) (c : R) :
    lsum l (fun b => if b = a then c else 0) = if a ∈ l then c else 0 := by
  induction l with
  | nil => simp [lsum_nil]
  | cons b l ih =>
    rw [List.nodup_cons] at hl
    rw [lsum_cons, ih hl.2]
    by_cases hab : b = a
    · subst hab
      simp [hl.1]
      grind
    · by_cases hal : a ∈ l
      · simp [hab, hal]
        grind
      · have hne : ¬ a = b := fun h => hab h.symm
        simp [hab, hal, hne]
        grind

/-- A sum over a duplicate-free, complete list of labels regroups a sum by label: each
element is counted once, under its own label. -/
theorem lsum_regroup [DecidableEq β] (l : List α) (ks : List β) (hks : ks.Nodup)
    (hall : ∀ k : β, k ∈ ks) (κ : α → β) (f : α → R) :
    lsum ks (fun k => lsum l (fun a => if κ a = k then f a else 0)) = lsum l f := by
  rw [lsum_comm]
  apply lsum_congr
  intro a _
  have h := lsum_indicator_mem ks hks (κ a) (f a)
  rw [if_pos (hall (κ a))] at h
  have h2 : lsum ks (fun k => if κ a = k then f a else 0)
      = lsum ks (fun b => if b = κ a then f a else 0) := by
    apply lsum_congr
    intro k _
    by_cases hk : κ a = k
    · subst hk; simp
    · have hk' : ¬ k = κ a := fun h => hk h.symm
      simp [hk, hk']
  rw [h2, h]

end

end Odp.Core
