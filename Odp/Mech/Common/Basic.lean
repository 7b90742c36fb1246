/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Tools for the mechanisms' guarantees, and post-processing

* Finite output types: every `Enum` instance (`Option`, `Fin n`, subtypes cut out of a list, …)
  and the sums over them are in `Odp/Mech/Common/Enum.lean` (imported through
  `Odp/Mech/Common/Noise.lean`).
* Expectations (`Odp.Mech.Expect`, the trust boundary in `Odp/Mech/Common/Noise.lean`):
  monotone, zero on zero, commute with finite sums; the law of `out (n + Z)` for a map
  `out : ℤ → O` into a finite type (`lawOf`), and its event probabilities. A discrete Laplace unit
  shift iterated: a shift by `d` with `|d| ≤ k` costs `e^{kα}` (`LapNoise.shift_le`).
* Output-wise bounds: `p o ≤ e^{cost o} q o` for every output gives ODP with δ = 0
  (`odp_of_pointwise`) and DP (`dp_of_pointwise`).
* **Post-processing**: a data-independent map `f` of the outputs preserves (ε, δ)-DP
  (`dp_postProcess`), and preserves (𝒫, ℰ, δ)-ODP when it keeps each output's block label
  (`odp_postProcess`: `κ' (f o) = κ o`, costs unchanged).

Randomized response is in `Odp/Mech/RandomizedResponse/Privacy.lean`;
the grid, the window and the clamp in `Odp/Mech/Common/Grid.lean`.

Narrower than Hartmann et al. 2022: nothing here.
-/
module

public import Odp.Core.Lemmas
public import Odp.Mech.Common.Noise

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech

open Odp.Core
open Odp.Core.ExpField

noncomputable section

variable {R : Type} [ExpField R]

/-! ### Small facts -/

theorem natR_one : (natR 1 : R) = 1 := by
  show natR 0 + 1 = 1
  rw [natR_zero]; grind

theorem ite_unit (p : Prop) [Decidable p] : (0 : R) ≤ (if p then 1 else 0) ∧ (if p then (1 : R) else 0) ≤ 1 := by
  by_cases h : p
  · rw [if_pos h]; grind
  · rw [if_neg h]; grind

theorem ite_unit2 (p q : Prop) [Decidable p] [Decidable q] :
    (0 : R) ≤ (if p then (if q then 1 else 0) else 0) ∧ (if p then (if q then (1 : R) else 0) else 0) ≤ 1 := by
  by_cases h : p
  · rw [if_pos h]; exact ite_unit q
  · rw [if_neg h]; grind

/-! ### Expectations -/

namespace Expect

variable (N : Expect R)

theorem bdd_const {c : R} (h : 0 ≤ c) : Bdd (fun _ : Int => c) := ⟨c, fun _ => ⟨h, by grind⟩⟩

theorem bdd_unit {f : Int → R} (h : ∀ z, 0 ≤ f z ∧ f z ≤ 1) : Bdd f := ⟨1, h⟩

theorem bdd_add {f g : Int → R} (hf : Bdd f) (hg : Bdd g) : Bdd (fun z => f z + g z) := by
  obtain ⟨B, hB⟩ := hf
  obtain ⟨C, hC⟩ := hg
  exact ⟨B + C, fun z => by have := hB z; have := hC z; grind⟩

theorem bdd_smul {f : Int → R} {a : R} (ha : 0 ≤ a) (hf : Bdd f) : Bdd (fun z => a * f z) := by
  obtain ⟨B, hB⟩ := hf
  exact ⟨a * B, fun z => ⟨mul_nonneg' ha (hB z).1, mul_le_mul_left' a (hB z).2 ha⟩⟩

theorem bdd_shift {f : Int → R} (hf : Bdd f) (d : Int) : Bdd (fun z => f (z + d)) := by
  obtain ⟨B, hB⟩ := hf
  exact ⟨B, fun z => hB (z + d)⟩

theorem bdd_ind (S : Int → Bool) : Bdd (ind S : Int → R) :=
  bdd_unit (fun z => by unfold ind; exact ite_unit _)

theorem bdd_lsum {α : Type} (l : List α) (g : α → Int → R) (hg : ∀ a, Bdd (g a)) :
    Bdd (fun z => lsum l (fun a => g a z)) := by
  induction l with
  | nil => exact ⟨0, fun z => by simp only [lsum_nil]; grind⟩
  | cons a l ih =>
    have h := bdd_add (hg a) ih
    simp only [lsum_cons]
    exact h

theorem E_zero : N.E (fun _ => 0) = 0 := by
  have h := N.add (fun _ => 0) (fun _ => 0) (bdd_const (Std.le_refl 0)) (bdd_const (Std.le_refl 0))
  have h0 : (fun _ : Int => (0 : R) + 0) = (fun _ => 0) := funext (fun _ => by grind)
  rw [h0] at h
  grind

theorem E_mono {f g : Int → R} (hf : Bdd f) (hg : Bdd g) (h : ∀ z, f z ≤ g z) :
    N.E f ≤ N.E g := by
  have hd : Bdd (fun z => g z - f z) := by
    obtain ⟨B, hB⟩ := hg
    exact ⟨B, fun z => by have := hB z; have := h z; have := hf.elim (fun C hC => (hC z).1); grind⟩
  have h1 := N.add f (fun z => g z - f z) hf hd
  have h2 : (fun z => f z + (g z - f z)) = g := funext (fun z => by grind)
  rw [h2] at h1
  have h3 := N.nonneg _ hd
  grind

theorem E_congr {f g : Int → R} (h : ∀ z, f z = g z) : N.E f = N.E g := by
  rw [funext h]

/-- A finite sum of expectations is the expectation of the sum. -/
theorem E_lsum {α : Type} (l : List α) (g : α → Int → R) (hg : ∀ a, Bdd (g a)) :
    lsum l (fun a => N.E (g a)) = N.E (fun z => lsum l (fun a => g a z)) := by
  induction l with
  | nil =>
    rw [lsum_nil]
    have : (fun z : Int => lsum ([] : List α) (fun a => g a z)) = (fun _ => (0 : R)) :=
      funext (fun z => lsum_nil _)
    rw [this, E_zero]
  | cons a l ih =>
    rw [lsum_cons, ih, ← N.add _ _ (hg a) (bdd_lsum l g hg)]
    rfl

theorem E_fsum {α : Type} [Enum α] (g : α → Int → R) (hg : ∀ a, Bdd (g a)) :
    fsum (fun a => N.E (g a)) = N.E (fun z => fsum (fun a => g a z)) :=
  E_lsum N _ g hg

/-- The law of `out (n + Z)` for a map `out : ℤ → O` into a finite type. -/
def lawOf {O : Type} [Enum O] [DecidableEq O] (out : Int → O) (n : Int) : Dist O R where
  mass o := N.E (fun z => if out (n + z) = o then 1 else 0)
  nonneg o := N.nonneg _ (bdd_unit (fun _ => ite_unit _))
  total := by
    rw [E_fsum N _ (fun o => bdd_unit (fun _ => ite_unit _))]
    have h : (fun z => fsum (fun o : O => if out (n + z) = o then (1 : R) else 0))
        = (fun _ => 1) := by
      funext z
      have h1 := fsum_single (R := R) (out (n + z)) 1
      refine Eq.trans ?_ h1
      apply fsum_congr
      intro o
      by_cases h : out (n + z) = o
      · rw [if_pos h, if_pos h.symm]
      · rw [if_neg h, if_neg (fun e => h e.symm)]
    rw [h, N.one]

/-- `Pr[out (n + Z) ∈ S] = 𝔼[1_S(out (n + Z))]`. -/
theorem Pr_lawOf {O : Type} [Enum O] [DecidableEq O] (out : Int → O) (n : Int) (S : Event O) :
    Pr (N.lawOf out n) S = N.E (fun z => ind (fun w => S (out w)) (n + z)) := by
  unfold Pr
  have h1 : (fun o => if S o then (N.lawOf out n).mass o else 0)
      = (fun o => N.E (fun z => if S o then (if out (n + z) = o then 1 else 0) else 0)) := by
    funext o
    by_cases hS : S o = true
    · rw [if_pos hS]
      apply E_congr
      intro z
      rw [if_pos hS]
    · rw [if_neg hS]
      have h2 : (fun z : Int => if S o = true then (if out (n + z) = o then (1 : R) else 0) else 0)
          = (fun _ => 0) := funext (fun z => by rw [if_neg hS])
      rw [h2, E_zero]
  rw [h1, E_fsum N _ (fun o => bdd_unit (fun _ => ite_unit2 _ _))]
  apply E_congr
  intro z
  rw [fsum_ind_event]
  unfold ind
  rfl

end Expect

/-! ### The discrete Laplace unit shift, iterated -/

namespace LapNoise

variable {α : R} (L : LapNoise R α)

include L in
theorem one_le_exp_rate : 1 ≤ exp α := by
  have h := L.shift_up (fun _ => 1) (Expect.bdd_const (by grind))
  rw [L.one] at h
  grind

theorem shift_nat_up : ∀ (k : Nat) (f : Int → R), Bdd f →
    L.E (fun z => f (z + k)) ≤ exp (natR k * α) * L.E f
  | 0, f, _ => by
    have h : (fun z => f (z + ((0 : Nat) : Int))) = f := funext (fun z => by congr 1; omega)
    rw [h, natR_zero]
    have h2 : (0 : R) * α = 0 := by grind
    rw [h2, exp_zero]
    grind
  | k + 1, f, hf => by
    have h : (fun z => f (z + ((k + 1 : Nat) : Int))) = (fun z => (fun w => f (w + k)) (z + 1)) :=
      funext (fun z => by congr 1; omega)
    rw [h]
    have h1 := L.shift_up (fun w => f (w + k)) (Expect.bdd_shift hf k)
    have h2 := shift_nat_up k f hf
    have h3 := mul_le_mul_left' (exp α) h2 (exp_nonneg α)
    have h4 : exp (natR (k + 1) * α) = exp α * exp (natR k * α) := by
      rw [← exp_add, natR_succ]; congr 1; grind
    rw [h4]
    generalize L.E (fun w => f (w + k)) = a at h1 h3
    generalize L.E f = b at h3
    grind

theorem shift_nat_down : ∀ (k : Nat) (f : Int → R), Bdd f →
    L.E (fun z => f (z - k)) ≤ exp (natR k * α) * L.E f
  | 0, f, _ => by
    have h : (fun z => f (z - ((0 : Nat) : Int))) = f := funext (fun z => by congr 1; omega)
    rw [h, natR_zero]
    have h2 : (0 : R) * α = 0 := by grind
    rw [h2, exp_zero]
    grind
  | k + 1, f, hf => by
    have h : (fun z => f (z - ((k + 1 : Nat) : Int))) = (fun z => (fun w => f (w - k)) (z - 1)) :=
      funext (fun z => by congr 1; omega)
    rw [h]
    have h1 := L.shift_down (fun w => f (w - k)) (Expect.bdd_shift hf (-(k : Int)))
    have h2 := shift_nat_down k f hf
    have h3 := mul_le_mul_left' (exp α) h2 (exp_nonneg α)
    have h4 : exp (natR (k + 1) * α) = exp α * exp (natR k * α) := by
      rw [← exp_add, natR_succ]; congr 1; grind
    rw [h4]
    generalize L.E (fun w => f (w - k)) = a at h1 h3
    generalize L.E f = b at h3
    grind

include L in
/-- `e^{kα} ≤ e^{k'α}` for `k ≤ k'` (since `e^α ≥ 1`; no sign of `α` is assumed). -/
theorem exp_rate_le {k k' : Nat} (h : k ≤ k') : exp (natR k * α) ≤ exp (natR k' * α) := by
  have hk : k' = k + (k' - k) := by omega
  have hsplit : exp (natR k' * α) = exp (natR k * α) * exp (natR (k' - k) * α) := by
    rw [← exp_add]; congr 1; rw [hk, natR_add]; simp only [Nat.add_sub_cancel_left]; grind
  rw [hsplit]
  have h1 : 1 ≤ exp (natR (k' - k) * α) := by
    generalize k' - k = j
    induction j with
    | zero =>
      rw [natR_zero]
      have : (0 : R) * α = 0 := by grind
      rw [this, exp_zero]; grind
    | succ j ih =>
      have h4 : exp (natR (j + 1) * α) = exp α * exp (natR j * α) := by
        rw [← exp_add, natR_succ]; congr 1; grind
      rw [h4]
      have := one_le_exp_rate L
      have := mul_le_mul_left' (exp α) ih (exp_nonneg α)
      grind
  have := mul_le_mul_left' (exp (natR k * α)) h1 (exp_nonneg _)
  grind

/-- A shift of the noise by `d`, `|d| ≤ k`, costs at most `e^{kα}`. -/
theorem shift_le (k : Nat) (d : Int) (hd1 : -(k : Int) ≤ d) (hd2 : d ≤ k) (f : Int → R)
    (hf : Bdd f) : L.E (fun z => f (z + d)) ≤ exp (natR k * α) * L.E f := by
  have hE := L.nonneg f hf
  by_cases h : 0 ≤ d
  · have he : (fun z => f (z + d)) = (fun z => f (z + (d.toNat : Int))) :=
      funext (fun z => by congr 1; omega)
    rw [he]
    have h1 := shift_nat_up L d.toNat f hf
    have h2 := mul_le_mul_right' (L.E f) (exp_rate_le L (show d.toNat ≤ k by omega)) hE
    grind
  · have he : (fun z => f (z + d)) = (fun z => f (z - ((-d).toNat : Int))) :=
      funext (fun z => by congr 1; omega)
    rw [he]
    have h1 := shift_nat_down L (-d).toNat f hf
    have h2 := mul_le_mul_right' (L.E f) (exp_rate_le L (show (-d).toNat ≤ k by omega)) hE
    grind

end LapNoise

/-! ### Output-wise bounds -/

variable {X O K : Type} [Enum O]

/-- If every output satisfies `p o ≤ e^{ℰ(κ o)} q o` on neighbours, the mechanism is
(𝒫, ℰ, 0)-ODP (the paper's "this bound holds for every element `a ∈ S_{c'}`, hence for all
subsets", then Lemma 6). -/
theorem odp_of_pointwise [Enum K] [DecidableEq K] (Nbr : X → X → Prop) (M : Mechanism X O R)
    (κ : O → K) (E : K → R)
    (h : ∀ x x', Nbr x x' → ∀ o, (M x).mass o ≤ exp (E (κ o)) * (M x').mass o) :
    ODP Nbr M κ E 0 := by
  rw [ODP_iff_ODPcost]
  intro x x' hx S
  unfold Pr
  have h1 : fsum (fun o => if S o then (M x).mass o else 0)
      ≤ fsum (fun o => if S o then exp (E (κ o)) * (M x').mass o else 0) := by
    apply fsum_le
    intro o
    by_cases hS : S o = true
    · rw [if_pos hS, if_pos hS]; exact h x x' hx o
    · rw [if_neg hS, if_neg hS]; grind
  generalize fsum (fun o => if S o then (M x).mass o else 0) = a at h1
  generalize fsum (fun o => if S o then exp (E (κ o)) * (M x').mass o else 0) = b at h1
  grind

/-- If every output satisfies `p o ≤ e^ε q o` on neighbours, the mechanism is ε-DP. -/
theorem dp_of_pointwise (Nbr : X → X → Prop) (M : Mechanism X O R) (ε : R)
    (h : ∀ x x', Nbr x x' → ∀ o, (M x).mass o ≤ exp ε * (M x').mass o) : DP Nbr M ε 0 := by
  have h1 := odp_of_pointwise Nbr M (fun _ => ()) (fun _ => ε) h
  have h2 := dp_of_odp Nbr M (fun _ => ()) (fun _ => ε) 0 ε (fun _ => Std.le_refl ε) h1
  exact h2

/-! ### Post-processing -/

variable {O' K' : Type} [Enum O'] [DecidableEq O']

/-- Apply a data-independent map `f` to the output of `M`. -/
def postProcess (f : O → O') (M : Mechanism X O R) : Mechanism X O' R := fun x =>
  { mass := fun o' => fsum (fun o => if f o = o' then (M x).mass o else 0)
    nonneg := fun o' => fsum_nonneg (fun o => by
      by_cases h : f o = o'
      · rw [if_pos h]; exact (M x).nonneg o
      · rw [if_neg h]; grind)
    total := by
      rw [fsum_comm]
      rw [← (M x).total]
      apply fsum_congr
      intro o
      have h := fsum_ind_event (R := R) (fun _ : O' => true) (f o) ((M x).mass o)
      simp only [if_true] at h
      exact h }

/-- `Pr[f(M x) ∈ S] = Pr[M x ∈ f⁻¹(S)]`. -/
theorem Pr_postProcess (f : O → O') (M : Mechanism X O R) (x : X) (S : Event O') :
    Pr (postProcess f M x) S = Pr (M x) (fun o => S (f o)) := by
  unfold Pr postProcess
  simp only
  have h1 : (fun o' => if S o' then fsum (fun o => if f o = o' then (M x).mass o else 0) else 0)
      = (fun o' => fsum (fun o => if S o' then (if f o = o' then (M x).mass o else 0) else 0)) := by
    funext o'
    by_cases hS : S o' = true
    · rw [if_pos hS]
      apply fsum_congr
      intro o
      rw [if_pos hS]
    · rw [if_neg hS]
      have h2 : (fun o => if S o' = true then (if f o = o' then (M x).mass o else 0) else (0 : R))
          = (fun _ => 0) := funext (fun o => by rw [if_neg hS])
      rw [h2, fsum_zero]
  rw [h1, fsum_comm]
  apply fsum_congr
  intro o
  exact fsum_ind_event S (f o) ((M x).mass o)

/-- **Post-processing preserves DP.** -/
theorem dp_postProcess (Nbr : X → X → Prop) (f : O → O') (M : Mechanism X O R) (ε δ : R)
    (h : DP Nbr M ε δ) : DP Nbr (postProcess f M) ε δ := by
  intro x x' hx S
  rw [Pr_postProcess, Pr_postProcess]
  exact h x x' hx _

/-- **Post-processing preserves ODP** when the map keeps each output's block label
(`κ' (f o) = κ o`): same costs, same δ. -/
theorem odp_postProcess [Enum K] [DecidableEq K] (Nbr : X → X → Prop) (f : O → O')
    (M : Mechanism X O R) (κ : O → K) (κ' : O' → K) (hκ : ∀ o, κ' (f o) = κ o) (E : K → R)
    (δ : R) (h : ODP Nbr M κ E δ) : ODP Nbr (postProcess f M) κ' E δ := by
  intro x x' hx S
  rw [Pr_postProcess]
  have h1 : (fun k => exp (E k) * Pr (postProcess f M x') (fun o' => S o' && decide (κ' o' = k)))
      = (fun k => exp (E k) * Pr (M x') (fun o => S (f o) && decide (κ o = k))) := by
    funext k
    rw [Pr_postProcess]
    congr 2
    funext o
    rw [hκ]
  rw [h1]
  exact h x x' hx _
end

end Odp.Mech
