/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Finite types for the iterative mechanism (paper 002, Sec. 5)

The output of Alg. 3 is a released history `(s_1, …, s_{k_i})`: a list of step outputs whose
length is one of the stopping points. To apply the Core's Definitions 1, 2, 5, Lemma 6 and
Theorem 7, which need a finite output type with an `Enum` instance, this file enumerates

* `Fin n` (the stop indices `i`), listed `0, 1, …, n−1`;
* `Vec W k = {l : List W // l.length = k}` (histories of length `k` over a finite `W`);
* dependent pairs `Σ i, F i` (the output of Alg. 3: a stop index and a history of that length);

each with the sum lemma that its enumeration order gives (`fsum_fin_succ`, `fsum_vec_succ`,
`fsum_sigma`), and the splitting of a sum over histories of length `a + b` into a double sum
(`fsum_vec_split`). Nothing here is a hypothesis; no statement is narrower than the paper.

The instances are named `Odp.Mech.Iter.enum*` (another module may need `Enum (Fin n)` as well;
the lead may move these to `Odp.Core`).
-/
module

public import Odp.Core.Prob

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech.Iter

open Odp.Core Odp.Core.ExpField

noncomputable section

variable {R : Type} [ExpField R]

/-! ### Sums over appended, mapped and flattened lists -/

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

/-! ### Duplicate-free lists built by `map` and `flatMap` -/

theorem nodup_map_of_inj {α β : Type} {l : List α} (hl : l.Nodup) (g : α → β)
    (hg : ∀ a b, g a = g b → a = b) : (l.map g).Nodup := by
  rw [List.Nodup, List.pairwise_map]
  exact List.Pairwise.imp (fun hab he => hab (hg _ _ he)) hl

theorem nodup_flatMap {α β : Type} {l : List α} (hl : l.Nodup) (g : α → List β)
    (hg : ∀ a, (g a).Nodup) (hdis : ∀ a b, a ≠ b → ∀ x ∈ g a, ∀ y ∈ g b, x ≠ y) :
    (l.flatMap g).Nodup := by
  rw [List.Nodup, List.pairwise_flatMap]
  exact ⟨fun a _ => hg a, List.Pairwise.imp (fun hab x hx y hy => hdis _ _ hab x hx y hy) hl⟩

/-! ### `Fin n` -/

/-- `0, 1, …, n−1`. -/
def finElems : (n : Nat) → List (Fin n)
  | 0 => []
  | n + 1 => 0 :: (finElems n).map Fin.succ

theorem finElems_nodup : ∀ n, (finElems n).Nodup
  | 0 => List.nodup_nil
  | n + 1 => by
    rw [finElems, List.nodup_cons]
    refine ⟨?_, nodup_map_of_inj (finElems_nodup n) Fin.succ (fun a b h => Fin.succ_inj.mp h)⟩
    intro h
    obtain ⟨a, _, ha⟩ := List.mem_map.mp h
    exact Fin.succ_ne_zero a ha

theorem finElems_complete : ∀ n (i : Fin n), i ∈ finElems n
  | 0, i => i.elim0
  | n + 1, i => by
    rw [finElems]
    cases i using Fin.cases with
    | zero => exact List.mem_cons_self
    | succ j => exact List.mem_cons_of_mem _ (List.mem_map.mpr ⟨j, finElems_complete n j, rfl⟩)

instance enumFin (n : Nat) : Enum (Fin n) where
  elems := finElems n
  nodup := finElems_nodup n
  complete := finElems_complete n

theorem fsum_fin_zero (f : Fin 0 → R) : fsum f = 0 := rfl

theorem fsum_fin_succ {n : Nat} (f : Fin (n + 1) → R) :
    fsum f = f 0 + fsum (fun i : Fin n => f i.succ) := by
  show lsum (finElems (n + 1)) f = f 0 + lsum (finElems n) (fun i => f i.succ)
  rw [finElems, lsum_cons, lsum_map]

/-! ### A sum with one non-zero term -/

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

/-! ### Histories of a fixed length -/

/-- Lists of length `k`: the histories `(s_1, …, s_k)`. -/
abbrev Vec (W : Type) (k : Nat) := {l : List W // l.length = k}

/-- `s :: t`. -/
def Vec.cons {W : Type} {k : Nat} (s : W) (t : Vec W k) : Vec W (k + 1) :=
  ⟨s :: t.1, by rw [List.length_cons, t.2]⟩

/-- The empty history. -/
def Vec.nil {W : Type} : Vec W 0 := ⟨[], rfl⟩

variable {W : Type} [Enum W]

/-- All histories of length `k`, by their first element. -/
def vecElems : (k : Nat) → List (Vec W k)
  | 0 => [Vec.nil]
  | k + 1 => (Enum.elems : List W).flatMap (fun s => (vecElems k).map (Vec.cons s))

theorem vecElems_nodup : ∀ k, (vecElems (W := W) k).Nodup
  | 0 => by
    show [Vec.nil].Nodup
    rw [List.nodup_cons]
    exact ⟨List.not_mem_nil, List.nodup_nil⟩
  | k + 1 => by
    rw [vecElems]
    apply nodup_flatMap Enum.nodup
    · intro s
      apply nodup_map_of_inj (vecElems_nodup k)
      intro a b h
      have h1 := congrArg (fun v : Vec W (k + 1) => v.1.tail) h
      exact Subtype.ext h1
    · intro s s' hss x hx y hy hxy
      obtain ⟨a, _, ha⟩ := List.mem_map.mp hx
      obtain ⟨b, _, hb⟩ := List.mem_map.mp hy
      subst ha hb
      have h1 := congrArg (fun v : Vec W (k + 1) => v.1.head?) hxy
      simp only [Vec.cons, List.head?_cons, Option.some.injEq] at h1
      exact hss h1

theorem vecElems_complete : ∀ k (t : Vec W k), t ∈ vecElems k
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

instance enumVec (k : Nat) : Enum (Vec W k) where
  elems := vecElems k
  nodup := vecElems_nodup k
  complete := vecElems_complete k

theorem fsum_vec_zero (g : Vec W 0 → R) : fsum g = g Vec.nil := by
  show lsum [Vec.nil] g = g Vec.nil
  rw [lsum_cons, lsum_nil]
  grind

theorem fsum_vec_succ {k : Nat} (g : Vec W (k + 1) → R) :
    fsum g = fsum (fun s : W => fsum (fun t : Vec W k => g (Vec.cons s t))) := by
  show lsum (vecElems (k + 1)) g
    = lsum Enum.elems (fun s => lsum (vecElems k) (fun t => g (Vec.cons s t)))
  rw [vecElems, lsum_flatMap]
  apply lsum_congr
  intro s _
  rw [lsum_map]

/-- A sum over histories of length `c = a + b` is a sum over the first `a` outputs and then
the last `b`. -/
theorem fsum_vec_split (F : List W → R) :
    ∀ (a b c : Nat), c = a + b →
      fsum (fun t : Vec W c => F t.1)
        = fsum (fun u : Vec W a => fsum (fun v : Vec W b => F (u.1 ++ v.1))) := by
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

/-! ### Dependent pairs -/

/-- All pairs `⟨i, b⟩`, by their first component. -/
def sigmaElems {I : Type} [Enum I] (F : I → Type) [∀ i, Enum (F i)] : List (Σ i, F i) :=
  (Enum.elems : List I).flatMap (fun i => (Enum.elems : List (F i)).map (Sigma.mk i))

instance enumSigma {I : Type} [Enum I] (F : I → Type) [∀ i, Enum (F i)] : Enum (Σ i, F i) where
  elems := sigmaElems F
  nodup := by
    apply nodup_flatMap Enum.nodup
    · intro i
      apply nodup_map_of_inj Enum.nodup
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

theorem fsum_sigma {I : Type} [Enum I] (F : I → Type) [∀ i, Enum (F i)] (g : (Σ i, F i) → R) :
    fsum g = fsum (fun i => fsum (fun b : F i => g ⟨i, b⟩)) := by
  show lsum (sigmaElems F) g = lsum Enum.elems (fun i => lsum Enum.elems (fun b : F i => g ⟨i, b⟩))
  rw [sigmaElems, lsum_flatMap]
  apply lsum_congr
  intro i _
  rw [lsum_map]

end

end Odp.Mech.Iter
