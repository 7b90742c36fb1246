/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# The finite types of `Odp/Mech`: every `Enum` instance, and the sums over them

The Core's Definitions 1, 2, 5, Lemmas 3, 4, 6 and Theorem 7 need a finite output type with an
`Enum` instance (`Odp.Core.Enum`: a duplicate-free complete list). **This file holds every
`Enum` instance of `Odp/Mech`, one per type**, each with the sum lemma that its enumeration
order gives:

| type | instance | order | sum lemma |
|---|---|---|---|
| `Option α` (a release or `⊥`) | `instEnumOption` | `none`, then `some a` | `fsum_option` |
| `Fin n` (block labels, stop indices) | `instEnumFin` | `0, 1, …, n − 1` | `fsum_fin_zero`, `fsum_fin_succ` |
| `A ⊕ B` (two rounds' outputs) | `instEnumSum` | the `inl`s, then the `inr`s | `fsum_sum` |
| `Iter.Vec W k` (histories of length `k`) | `instEnumVec` | by the first element | `fsum_vec_zero`, `fsum_vec_succ`, `fsum_vec_split` |
| `Σ i, F i` (Alg. 3's output) | `instEnumSigma` | by the first component | `fsum_sigma` |
| `{a // P a}` cut out of a list | `Enum.ofSubtype` (a definition, not an instance) | the list's order | `fsum_ofSubtype` |
| `Window lo hi` (the clamped grid release) | `instEnumWindow` | `lo, …, hi` | via `fsum_ofSubtype` |
| `Answers N` (Alg. 2's answer lists) | `instEnumAnswers` | `boolLists N` | via `fsum_ofSubtype` |
| `ToyBlock` (M_toy's partition) | `instEnumToyBlock` | `value, bottom` | — |
| `ValueOrBottom` (the partition `{values, ⊥}`) | `instEnumValueOrBottom` | `value, bottom` | — |

(`Bool` and `Unit` have their instances in `Odp/Core/Prob.lean`.) Also here: the list lemmas
these need (`lsum_append`, `lsum_map`, `lsum_flatMap`, `lsum_const`, `nodup_map_of_inj`,
`nodup_flatMap`, …) and sums with one non-zero term (`fsum_single`, `fsum_eq_single`,
`fsum_ind_event`, `fsum_ite_point`).

Nothing here is a hypothesis; no statement is narrower than the paper.
-/
module

public import Odp.Core.Prob

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech

open Odp.Core Odp.Core.ExpField

noncomputable section

/-! ### Duplicate-free lists -/

theorem nodup_map_of_inj {α β : Type} (g : α → β) (hg : ∀ a b, g a = g b → a = b) :
    ∀ l : List α, l.Nodup → (l.map g).Nodup
  | [], _ => by simp
  | a :: l, h => by
    rw [List.nodup_cons] at h
    rw [List.map_cons, List.nodup_cons]
    refine ⟨?_, nodup_map_of_inj g hg l h.2⟩
    intro hm
    rw [List.mem_map] at hm
    obtain ⟨b, hb, he⟩ := hm
    exact h.1 (hg b a he ▸ hb)

theorem nodup_flatMap {α β : Type} {l : List α} (hl : l.Nodup) (g : α → List β)
    (hg : ∀ a, (g a).Nodup) (hdis : ∀ a b, a ≠ b → ∀ x ∈ g a, ∀ y ∈ g b, x ≠ y) :
    (l.flatMap g).Nodup := by
  rw [List.Nodup, List.pairwise_flatMap]
  exact ⟨fun a _ => hg a, List.Pairwise.imp (fun hab x hx y hy => hdis _ _ hab x hx y hy) hl⟩

theorem nodup_append_of {α : Type} (l₁ l₂ : List α) (h₁ : l₁.Nodup) (h₂ : l₂.Nodup)
    (h : ∀ a, a ∈ l₁ → a ∉ l₂) : (l₁ ++ l₂).Nodup := by
  induction l₁ with
  | nil => exact h₂
  | cons a l ih =>
    rw [List.nodup_cons] at h₁
    rw [List.cons_append, List.nodup_cons]
    refine ⟨?_, ih h₁.2 (fun b hb => h b (List.mem_cons_of_mem a hb))⟩
    intro hm
    rcases List.mem_append.mp hm with h1 | h2
    · exact h₁.1 h1
    · exact h a List.mem_cons_self h2

/-! ### Sums over appended, mapped and flattened lists -/

section Sums

variable {R : Type} [ExpField R]

theorem lsum_append {α : Type} (l₁ l₂ : List α) (f : α → R) :
    lsum (l₁ ++ l₂) f = lsum l₁ f + lsum l₂ f := by
  induction l₁ with
  | nil => rw [List.nil_append, lsum_nil]; grind
  | cons a l ih =>
    rw [List.cons_append, lsum_cons, lsum_cons, ih]
    generalize lsum l f = u
    generalize lsum l₂ f = v
    grind

theorem lsum_map {α β : Type} (l : List α) (g : α → β) (f : β → R) :
    lsum (l.map g) f = lsum l (fun a => f (g a)) := by
  induction l with
  | nil => rfl
  | cons a l ih => rw [List.map_cons, lsum_cons, lsum_cons, ih]

theorem lsum_flatMap {α β : Type} (l : List α) (g : α → List β) (f : β → R) :
    lsum (l.flatMap g) f = lsum l (fun a => lsum (g a) f) := by
  induction l with
  | nil => rfl
  | cons a l ih => rw [List.flatMap_cons, lsum_append, lsum_cons, ih]

theorem lsum_const {α : Type} (l : List α) (c : R) : lsum l (fun _ => c) = natR l.length * c := by
  induction l with
  | nil => rw [lsum_nil, List.length_nil, natR_zero]; grind
  | cons a l ih => rw [lsum_cons, ih, List.length_cons, natR_succ]; grind

/-- A non-negative term is at most the sum. -/
theorem le_lsum_of_mem {α : Type} (l : List α) (f : α → R) (hf : ∀ a, 0 ≤ f a) (a : α)
    (ha : a ∈ l) : f a ≤ lsum l f := by
  induction l with
  | nil => cases ha
  | cons b l ih =>
    rw [lsum_cons]
    have h0 := lsum_nonneg l (fun c _ => hf c)
    cases ha with
    | head => grind
    | tail _ h =>
      have := ih h
      have := hf b
      grind

/-! ### A sum with one non-zero term -/

/-- Over a finite type, the indicator of one point sums to its value. -/
theorem fsum_single {α : Type} [Enum α] [DecidableEq α] (a : α) (c : R) :
    fsum (fun b : α => if b = a then c else 0) = c := by
  unfold fsum
  rw [lsum_indicator_mem _ Enum.nodup a c, if_pos (Enum.complete a)]

open Classical in
theorem fsum_eq_single {α : Type} [Enum α] (i : α) (f : α → R) (h : ∀ j, j ≠ i → f j = 0) :
    fsum f = f i := by
  have e : fsum f = fsum (fun j => if j = i then f i else 0) := by
    apply fsum_congr
    intro j
    by_cases hj : j = i
    · subst hj; simp
    · rw [h j hj, if_neg hj]
  rw [e]
  show lsum Enum.elems (fun j => if j = i then f i else 0) = f i
  rw [lsum_indicator_mem Enum.elems Enum.nodup i (f i), if_pos (Enum.complete i)]

/-- `∑_o [S o][g w = o] = [S (g w)]`: the mass of one point, sorted into the events. -/
theorem fsum_ind_event {α : Type} [Enum α] [DecidableEq α] (S : α → Bool) (a : α) (c : R) :
    fsum (fun o : α => if S o then (if a = o then c else 0) else 0)
      = if S a then c else 0 := by
  rw [← fsum_single a (if S a then c else 0)]
  apply fsum_congr
  intro o
  by_cases h : o = a
  · subst h
    by_cases hS : S o = true
    · simp [hS]
    · simp [hS]
  · have h' : ¬ a = o := fun e => h e.symm
    by_cases hS : S o = true
    · simp [hS, h, h']
    · simp [hS, h]

/-- `∑_o (if o = t then a else b) = a + (k − 1)·b` over a type with `k` elements. -/
theorem fsum_ite_point {α : Type} [Enum α] [DecidableEq α] (t : α) (a b : R) :
    fsum (fun o : α => if o = t then a else b)
      = a + (natR (Enum.elems : List α).length - 1) * b := by
  have h : fsum (fun o : α => if o = t then a else b)
      = fsum (fun o : α => b + (if o = t then a - b else 0)) := by
    apply fsum_congr
    intro o
    by_cases h : o = t
    · rw [if_pos h, if_pos h]; grind
    · rw [if_neg h, if_neg h]; grind
  rw [h, fsum_add, fsum_single]
  unfold fsum
  rw [lsum_const]
  grind

end Sums

/-! ### Subtypes cut out of a list -/

/-- The elements of `l` that satisfy `P`, as elements of the subtype. -/
def subList {α : Type} (P : α → Prop) [DecidablePred P] : List α → List {a // P a}
  | [] => []
  | a :: l => if h : P a then ⟨a, h⟩ :: subList P l else subList P l

theorem mem_subList {α : Type} (P : α → Prop) [DecidablePred P] (l : List α) (a : {a // P a}) :
    a ∈ subList P l ↔ a.val ∈ l := by
  induction l with
  | nil => simp [subList]
  | cons b l ih =>
    by_cases h : P b
    · simp only [subList, dif_pos h, List.mem_cons, ih]
      constructor
      · intro h1
        cases h1 with
        | inl h2 => exact Or.inl (by rw [h2])
        | inr h2 => exact Or.inr h2
      · intro h1
        cases h1 with
        | inl h2 => exact Or.inl (Subtype.ext h2)
        | inr h2 => exact Or.inr h2
    · simp only [subList, dif_neg h, List.mem_cons, ih]
      constructor
      · intro h1; exact Or.inr h1
      · intro h1
        cases h1 with
        | inl h2 => exact absurd (h2 ▸ a.property) h
        | inr h2 => exact h2

theorem nodup_subList {α : Type} (P : α → Prop) [DecidablePred P] (l : List α) (hl : l.Nodup) :
    (subList P l).Nodup := by
  induction l with
  | nil => simp [subList]
  | cons b l ih =>
    rw [List.nodup_cons] at hl
    by_cases h : P b
    · simp only [subList, dif_pos h]
      rw [List.nodup_cons]
      exact ⟨fun hm => hl.1 ((mem_subList P l _).1 hm), ih hl.2⟩
    · simp only [subList, dif_neg h]
      exact ih hl.2

/-- A subtype `{a // P a}` is finite when a duplicate-free list contains all of it. (A
definition, used to build the instances of `Window` and `Answers` below.) -/
def Enum.ofSubtype {α : Type} (P : α → Prop) [DecidablePred P] (l : List α) (hl : l.Nodup)
    (hP : ∀ a, P a → a ∈ l) : Enum {a // P a} where
  elems := subList P l
  nodup := nodup_subList P l hl
  complete := fun a => (mem_subList P l a).2 (hP a.val a.property)

section SubtypeSums

variable {R : Type} [ExpField R]

theorem lsum_subList {α : Type} (P : α → Prop) [DecidablePred P] (l : List α) (f : α → R) :
    lsum (subList P l) (fun a => f a.val) = lsum l (fun a => if P a then f a else 0) := by
  induction l with
  | nil => rfl
  | cons b l ih =>
    by_cases h : P b
    · simp only [subList, dif_pos h, lsum_cons, ih, if_pos h]
    · simp only [subList, dif_neg h, lsum_cons, ih, if_neg h]
      grind

/-- A sum over `Enum.ofSubtype P l` is the sum over `l` (when all of `l` satisfies `P`). -/
theorem fsum_ofSubtype {α : Type} (P : α → Prop) [DecidablePred P] (l : List α) (hl : l.Nodup)
    (hP : ∀ a, P a → a ∈ l) (hl' : ∀ a ∈ l, P a) (f : α → R) :
    @fsum R _ {a // P a} (Enum.ofSubtype P l hl hP) (fun a => f a.val) = lsum l f := by
  unfold fsum
  show lsum (subList P l) (fun a => f a.val) = lsum l f
  rw [lsum_subList]
  apply lsum_congr
  intro a ha
  rw [if_pos (hl' a ha)]

end SubtypeSums

/-! ### `Option α`: a release or `⊥` -/

/-- `Option α` is finite when `α` is: `⊥` (`none`) first, then the values. -/
instance instEnumOption {α : Type} [Enum α] : Enum (Option α) where
  elems := none :: (Enum.elems : List α).map some
  nodup := by
    rw [List.nodup_cons]
    refine ⟨by simp, nodup_map_of_inj some (fun a b h => Option.some.inj h) _ Enum.nodup⟩
  complete := by
    intro o
    cases o with
    | none => exact List.mem_cons_self
    | some a => exact List.mem_cons_of_mem _ (List.mem_map_of_mem (Enum.complete a))

theorem fsum_option {R : Type} [ExpField R] {α : Type} [Enum α] (f : Option α → R) :
    fsum f = f none + fsum (fun a : α => f (some a)) := by
  unfold fsum
  show lsum (none :: (Enum.elems : List α).map some) f = _
  rw [lsum_cons, lsum_map]

/-! ### `Fin n`: block labels and stop indices -/

/-- `0, 1, …, n − 1`. -/
def finList : (n : Nat) → List (Fin n)
  | 0 => []
  | n + 1 => 0 :: (finList n).map Fin.succ

theorem mem_finList : ∀ (n : Nat) (i : Fin n), i ∈ finList n
  | 0, i => i.elim0
  | n + 1, i => by
    simp only [finList]
    cases i using Fin.cases with
    | zero => exact List.mem_cons_self
    | succ j => exact List.mem_cons_of_mem _ (List.mem_map_of_mem (mem_finList n j))

theorem nodup_finList : ∀ n : Nat, (finList n).Nodup
  | 0 => by simp [finList]
  | n + 1 => by
    simp only [finList]
    rw [List.nodup_cons]
    refine ⟨?_, nodup_map_of_inj Fin.succ (fun a b h => Fin.succ_inj.mp h) _ (nodup_finList n)⟩
    intro hm
    rw [List.mem_map] at hm
    obtain ⟨b, _, he⟩ := hm
    exact Fin.succ_ne_zero b he

/-- `Fin n`, listed `0, 1, …, n − 1`. -/
instance instEnumFin (n : Nat) : Enum (Fin n) where
  elems := finList n
  nodup := nodup_finList n
  complete := mem_finList n

section FinSums

variable {R : Type} [ExpField R]

theorem fsum_fin_zero (f : Fin 0 → R) : fsum f = 0 := rfl

theorem fsum_fin_succ {n : Nat} (f : Fin (n + 1) → R) :
    fsum f = f 0 + fsum (fun i : Fin n => f i.succ) := by
  show lsum (finList (n + 1)) f = f 0 + lsum (finList n) (fun i => f i.succ)
  rw [finList, lsum_cons, lsum_map]

end FinSums

/-! ### `A ⊕ B` -/

/-- `A ⊕ B` is finite when `A` and `B` are: the `inl`s, then the `inr`s. -/
instance instEnumSum {A B : Type} [Enum A] [Enum B] : Enum (A ⊕ B) where
  elems := (Enum.elems : List A).map Sum.inl ++ (Enum.elems : List B).map Sum.inr
  nodup := by
    apply nodup_append_of
    · exact nodup_map_of_inj _ (fun a b h => Sum.inl.inj h) _ Enum.nodup
    · exact nodup_map_of_inj _ (fun a b h => Sum.inr.inj h) _ Enum.nodup
    · intro o h1 h2
      obtain ⟨a, _, ha⟩ := List.mem_map.mp h1
      obtain ⟨b, _, hb⟩ := List.mem_map.mp h2
      rw [← ha] at hb
      cases hb
  complete o := by
    cases o with
    | inl a => exact List.mem_append.mpr (Or.inl (List.mem_map.mpr ⟨a, Enum.complete a, rfl⟩))
    | inr b => exact List.mem_append.mpr (Or.inr (List.mem_map.mpr ⟨b, Enum.complete b, rfl⟩))

theorem fsum_sum {R : Type} [ExpField R] {A B : Type} [Enum A] [Enum B] (f : A ⊕ B → R) :
    fsum f = fsum (fun a => f (Sum.inl a)) + fsum (fun b => f (Sum.inr b)) := by
  show lsum ((Enum.elems : List A).map Sum.inl ++ (Enum.elems : List B).map Sum.inr) f = _
  rw [lsum_append, lsum_map, lsum_map]
  rfl

/-! ### `Iter.Vec W k`: histories of a fixed length (Alg. 3, Hartmann et al. 2022, Sec. 5) -/

/-- Lists of length `k`: the histories `(s_1, …, s_k)` of the iterative mechanism. -/
abbrev Iter.Vec (W : Type) (k : Nat) := {l : List W // l.length = k}

/-- `s :: t`. -/
def Iter.Vec.cons {W : Type} {k : Nat} (s : W) (t : Iter.Vec W k) : Iter.Vec W (k + 1) :=
  ⟨s :: t.1, by rw [List.length_cons, t.2]⟩

/-- The empty history. -/
def Iter.Vec.nil {W : Type} : Iter.Vec W 0 := ⟨[], rfl⟩

section VecEnum

variable {W : Type} [Enum W]

/-- All histories of length `k`, by their first element. -/
def vecElems : (k : Nat) → List (Iter.Vec W k)
  | 0 => [Iter.Vec.nil]
  | k + 1 => (Enum.elems : List W).flatMap (fun s => (vecElems k).map (Iter.Vec.cons s))

theorem vecElems_nodup : ∀ k, (vecElems (W := W) k).Nodup
  | 0 => by
    show [Iter.Vec.nil].Nodup
    rw [List.nodup_cons]
    exact ⟨List.not_mem_nil, List.nodup_nil⟩
  | k + 1 => by
    rw [vecElems]
    apply nodup_flatMap Enum.nodup
    · intro s
      apply nodup_map_of_inj _ _ _ (vecElems_nodup k)
      intro a b h
      have h1 := congrArg (fun v : Iter.Vec W (k + 1) => v.1.tail) h
      exact Subtype.ext h1
    · intro s s' hss x hx y hy hxy
      obtain ⟨a, _, ha⟩ := List.mem_map.mp hx
      obtain ⟨b, _, hb⟩ := List.mem_map.mp hy
      subst ha hb
      have h1 := congrArg (fun v : Iter.Vec W (k + 1) => v.1.head?) hxy
      simp only [Iter.Vec.cons, List.head?_cons, Option.some.injEq] at h1
      exact hss h1

theorem vecElems_complete : ∀ k (t : Iter.Vec W k), t ∈ vecElems k
  | 0, ⟨l, hl⟩ => by
    have h : l = [] := List.eq_nil_of_length_eq_zero hl
    subst h
    exact List.mem_cons_self
  | k + 1, ⟨l, hl⟩ => by
    cases l with
    | nil => simp at hl
    | cons s l' =>
      have hl' : l'.length = k := by simp at hl; exact hl
      rw [vecElems, List.mem_flatMap]
      refine ⟨s, Enum.complete s, List.mem_map.mpr ⟨⟨l', hl'⟩, vecElems_complete k _, rfl⟩⟩

/-- Histories of length `k` over a finite `W`, by their first element. -/
instance instEnumVec (k : Nat) : Enum (Iter.Vec W k) where
  elems := vecElems k
  nodup := vecElems_nodup k
  complete := vecElems_complete k

variable {R : Type} [ExpField R]

theorem fsum_vec_zero (g : Iter.Vec W 0 → R) : fsum g = g Iter.Vec.nil := by
  show lsum [Iter.Vec.nil] g = g Iter.Vec.nil
  rw [lsum_cons, lsum_nil]
  grind

theorem fsum_vec_succ {k : Nat} (g : Iter.Vec W (k + 1) → R) :
    fsum g = fsum (fun s : W => fsum (fun t : Iter.Vec W k => g (Iter.Vec.cons s t))) := by
  show lsum (vecElems (k + 1)) g
    = lsum Enum.elems (fun s => lsum (vecElems k) (fun t => g (Iter.Vec.cons s t)))
  rw [vecElems, lsum_flatMap]
  apply lsum_congr
  intro s _
  rw [lsum_map]

/-- A sum over histories of length `c = a + b` is a sum over the first `a` outputs and then
the last `b`. -/
theorem fsum_vec_split (F : List W → R) :
    ∀ (a b c : Nat), c = a + b →
      fsum (fun t : Iter.Vec W c => F t.1)
        = fsum (fun u : Iter.Vec W a => fsum (fun v : Iter.Vec W b => F (u.1 ++ v.1))) := by
  intro a
  induction a generalizing F with
  | zero =>
    intro b c hc
    have hc' : c = b := by omega
    subst hc'
    rw [fsum_vec_zero]
    rfl
  | succ a ih =>
    intro b c hc
    obtain ⟨m, rfl⟩ : ∃ m, c = m + 1 := ⟨a + b, by omega⟩
    rw [fsum_vec_succ, fsum_vec_succ]
    apply fsum_congr
    intro s
    exact ih (fun l => F (s :: l)) b m (by omega)

end VecEnum

/-! ### Dependent pairs `Σ i, F i` (Alg. 3's output: a stop index and a history) -/

/-- All pairs `⟨i, b⟩`, by their first component. -/
def sigmaElems {I : Type} [Enum I] (F : I → Type) [∀ i, Enum (F i)] : List (Σ i, F i) :=
  (Enum.elems : List I).flatMap (fun i => (Enum.elems : List (F i)).map (Sigma.mk i))

/-- `Σ i, F i` is finite when `I` and every `F i` are. -/
instance instEnumSigma {I : Type} [Enum I] (F : I → Type) [∀ i, Enum (F i)] :
    Enum (Σ i, F i) where
  elems := sigmaElems F
  nodup := by
    apply nodup_flatMap Enum.nodup
    · intro i
      apply nodup_map_of_inj _ _ _ Enum.nodup
      intro a b h
      exact eq_of_heq (Sigma.mk.inj h).2
    · intro i j hij x hx y hy hxy
      obtain ⟨a, _, ha⟩ := List.mem_map.mp hx
      obtain ⟨b, _, hb⟩ := List.mem_map.mp hy
      subst ha hb
      exact hij (Sigma.mk.inj hxy).1
  complete := by
    intro ⟨i, b⟩
    exact List.mem_flatMap.mpr ⟨i, Enum.complete i, List.mem_map.mpr ⟨b, Enum.complete b, rfl⟩⟩

theorem fsum_sigma {R : Type} [ExpField R] {I : Type} [Enum I] (F : I → Type)
    [∀ i, Enum (F i)] (g : (Σ i, F i) → R) :
    fsum g = fsum (fun i => fsum (fun b : F i => g ⟨i, b⟩)) := by
  show lsum (sigmaElems F) g = lsum Enum.elems (fun i => lsum Enum.elems (fun b : F i => g ⟨i, b⟩))
  rw [sigmaElems, lsum_flatMap]
  apply lsum_congr
  intro i _
  rw [lsum_map]

/-! ### `Window lo hi`: the clamped grid release (`Odp/Mech/Common/Grid.lean`) -/

/-- `lo, lo + 1, …, lo + n − 1`. -/
def intRange (lo : Int) : Nat → List Int
  | 0 => []
  | n + 1 => lo :: intRange (lo + 1) n

theorem mem_intRange : ∀ (n : Nat) (lo v : Int), v ∈ intRange lo n ↔ lo ≤ v ∧ v < lo + n
  | 0, lo, v => by
    simp only [intRange, List.not_mem_nil, false_iff]
    omega
  | n + 1, lo, v => by
    simp only [intRange, List.mem_cons, mem_intRange n (lo + 1) v]
    omega

theorem nodup_intRange : ∀ (n : Nat) (lo : Int), (intRange lo n).Nodup
  | 0, _ => by simp [intRange]
  | n + 1, lo => by
    simp only [intRange]
    rw [List.nodup_cons]
    refine ⟨?_, nodup_intRange n (lo + 1)⟩
    rw [mem_intRange]
    omega

/-- The release window `[lo, hi]` of grid values. -/
abbrev Window (lo hi : Int) := {v : Int // lo ≤ v ∧ v ≤ hi}

/-- The window `[lo, hi]`, listed `lo, …, hi`. -/
instance instEnumWindow (lo hi : Int) : Enum (Window lo hi) :=
  Enum.ofSubtype _ (intRange lo (hi - lo + 1).toNat) (nodup_intRange _ _)
    (fun v hv => (mem_intRange _ _ _).2 (by omega))

/-! ### `Answers N`: the output of Alg. 2 (`Odp/Mech/SVT/Privacy.lean`) -/

/-- All answer lists of length at most `n`. -/
def boolLists : Nat → List (List Bool)
  | 0 => [[]]
  | n + 1 => [] :: ((boolLists n).map (List.cons false) ++ (boolLists n).map (List.cons true))

theorem mem_boolLists : ∀ (n : Nat) (a : List Bool), a ∈ boolLists n ↔ a.length ≤ n
  | 0, a => by
    cases a with
    | nil => simp [boolLists]
    | cons b a => simp [boolLists]
  | n + 1, a => by
    cases a with
    | nil => simp [boolLists]
    | cons b a =>
      simp only [boolLists, List.mem_cons, List.mem_append, List.mem_map, List.length_cons]
      constructor
      · intro h
        rcases h with h | ⟨y, hy, he⟩ | ⟨y, hy, he⟩
        · cases h
        · have := (mem_boolLists n y).1 hy; cases he; omega
        · have := (mem_boolLists n y).1 hy; cases he; omega
      · intro h
        have ha : a ∈ boolLists n := (mem_boolLists n a).2 (by omega)
        cases b
        · exact Or.inr (Or.inl ⟨a, ha, rfl⟩)
        · exact Or.inr (Or.inr ⟨a, ha, rfl⟩)

theorem nodup_boolLists : ∀ n : Nat, (boolLists n).Nodup
  | 0 => by simp [boolLists]
  | n + 1 => by
    simp only [boolLists]
    rw [List.nodup_cons, List.nodup_append]
    refine ⟨by simp, nodup_map_of_inj _ (fun a b h => (List.cons.inj h).2) _ (nodup_boolLists n),
      nodup_map_of_inj _ (fun a b h => (List.cons.inj h).2) _ (nodup_boolLists n), ?_⟩
    intro a ha b hb
    rw [List.mem_map] at ha hb
    obtain ⟨a', _, he⟩ := ha
    obtain ⟨b', _, he'⟩ := hb
    rw [← he, ← he']
    intro h
    cases h

/-- **The output type of Alg. 2**: answer sequences (`true` = ⊤, `false` = ⊥) of length at
most `N`. -/
abbrev Answers (N : Nat) := {a : List Bool // a.length ≤ N}

/-- Answer lists of length at most `N`, listed as `boolLists N`. -/
instance instEnumAnswers (N : Nat) : Enum (Answers N) :=
  Enum.ofSubtype (fun a : List Bool => a.length ≤ N) (boolLists N) (nodup_boolLists N)
    (fun a h => (mem_boolLists N a).2 h)

/-! ### Block labels -/

/-- The two blocks of M_toy's partition: the values, and `{⊥}` (odp: `value_or_bottom`;
`Odp/Mech/Toy/Privacy.lean`). -/
inductive ToyBlock where
  | value
  | bottom
  deriving DecidableEq

instance instEnumToyBlock : Enum ToyBlock where
  elems := [.value, .bottom]
  nodup := by decide
  complete := by intro b; cases b <;> decide

/-- The two blocks of the PTR family's partition (PTR functions, `M_IQR`, Alg. 5): released
values and `⊥` (`Odp/Mech/PTR/Privacy.lean`). -/
inductive ValueOrBottom where
  | value
  | bottom
  deriving DecidableEq

instance instEnumValueOrBottom : Enum ValueOrBottom where
  elems := [.value, .bottom]
  nodup := by decide
  complete k := by cases k <;> decide

end

end Odp.Mech
