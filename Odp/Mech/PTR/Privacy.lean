/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Propose-Test-Release functions are ODP (Hartmann et al. 2022, Sec. 4.2, Definition 9)

The paper: "As can easily be seen, a PTR function `T` fulfills `(2ε, δ)`-DP. Letting
`P₁ = 𝒞'`, `P₂ = {⊥}` and `ℰ(P₁) = 2ε`, `ℰ(P₂) = ε`, `T` also fulfills
`({P₁, P₂}, ℰ, δ)`-ODP."

What is proved here:

* The shape shared by every mechanism of this family (PTR functions, `M_IQR`, Alg. 5): outputs
  `Option V` (`none` is `⊥`), the partition `{values, {⊥}}` (`vob`, labels `ValueOrBottom`).
  `odp_valueOrBottom` (by Lemma 6 of the Core, `odp_of_subsetDP`): if every event of values is
  `(ℰ(values), δ)`-close and `{⊥}` is `ℰ(⊥)`-close (δ = 0), the mechanism is
  `({values, ⊥}, ℰ, δ)`-ODP. This is the one generic lemma of the "test, then release on a pass,
  else ⊥" shape; `gate` builds that shape's output distribution from a release `rel` and a pass
  probability `pass v` of each released value `v`.
* Definition 9 for a fixed proposal `s` (`PTRAt Nbr M G ε δ`, with `G x` meaning
  `s ∈ G(T, x)`): conditions 2–4 of the paper verbatim; and for a function of the proposal
  (`IsPTRFunction`, with condition 1, `Pr(T(x, ⊥) = ⊥) = 1`).
* `ptr_odp_at`: a mechanism satisfying conditions 2–4 at a fixed proposal is
  `({values, ⊥}, ptrCosts ε, δ)`-ODP with `ptrCosts ε = (value ↦ 2ε, ⊥ ↦ ε)`.
  `ptr_odp`: an `(ε, δ)`-PTR function is so at every proposal, `⊥` included (for `s = ⊥` it needs
  `ε, δ ≥ 0`).

Hypotheses: Definition 9's conditions (the natural interface; `Odp/Mech/PTR/IQR.lean` derives them
for odp's log-bin IQR PTR function from the noise hypotheses of the trust boundary
`Odp/Mech/Common/Noise.lean`). Nothing is narrower than the paper, except that output types are finite
(`Enum V`; see `Odp/Mech/Common/Noise.lean`, "Finiteness"). The labels `ValueOrBottom` and their `Enum`
instance are in `Odp/Mech/Common/Enum.lean`, with every finite type of `Odp/Mech`.
-/
module

public import Odp.Core.Lemmas
public import Odp.Mech.Common.Enum

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech

open Odp.Core

noncomputable section

open ExpField

variable {R X V : Type} [ExpField R]

variable [Enum V]

/-! ### The partition `{values, {⊥}}` -/

/-- The block of an output: `some v ↦ value`, `none (⊥) ↦ bottom`. -/
def vob : Option V → ValueOrBottom
  | none => .bottom
  | some _ => .value

/-- The event `{some v | v ∈ C}` (a set of released values). -/
def valEvent (C : Event V) : Event (Option V)
  | none => false
  | some v => C v

/-- The event `{⊥}`. -/
def botEvent : Event (Option V)
  | none => true
  | some _ => false

/-- The event "a value is released" (`≠ ⊥`). -/
def isValue : Event (Option V) := fun o => o.isSome

omit [Enum V] in
theorem isValue_eq : (isValue : Event (Option V)) = valEvent (fun _ => true) := by
  funext o
  cases o <;> rfl

theorem Pr_valEvent (p : Dist (Option V) R) (C : Event V) :
    Pr p (valEvent C) = fsum (fun v => if C v then p.mass (some v) else 0) := by
  unfold Pr
  rw [fsum_option]
  show (if false = true then p.mass none else 0) + _ = _
  simp only [Bool.false_eq_true, if_false]
  have : ∀ a : R, 0 + a = a := fun a => by grind
  exact this _

theorem Pr_botEvent (p : Dist (Option V) R) : Pr p botEvent = p.mass none := by
  unfold Pr
  rw [fsum_option]
  show (if true = true then p.mass none else 0)
    + fsum (fun v => if false = true then p.mass (some v) else 0) = _
  simp only [if_true, Bool.false_eq_true, if_false]
  rw [fsum_zero]
  grind

theorem Pr_mono (p : Dist V R) {S T : Event V} (h : ∀ o, S o = true → T o = true) :
    Pr p S ≤ Pr p T := by
  unfold Pr
  apply fsum_le
  intro o
  cases hS : S o
  · cases T o <;> simp <;> first | grind | exact p.nonneg o
  · rw [h o hS]; simp; grind

/-- `Pr(⊥) + Pr(≠ ⊥) = 1`. -/
theorem Pr_bot_add_isValue (p : Dist (Option V) R) : Pr p botEvent + Pr p isValue = 1 := by
  rw [Pr_botEvent, isValue_eq, Pr_valEvent, ← p.total, fsum_option p.mass]
  simp

theorem Pr_valEvent_le_isValue (p : Dist (Option V) R) (C : Event V) :
    Pr p (valEvent C) ≤ Pr p isValue := by
  apply Pr_mono
  intro o h
  cases o with
  | none => cases h
  | some v => rfl

omit [Enum V] in
/-- An event inside the block of values is `valEvent` of its values. -/
theorem event_of_sub_value (S : Event (Option V))
    (hS : ∀ o, S o = true → decide (vob o = ValueOrBottom.value) = true) :
    S = valEvent (fun v => S (some v)) := by
  funext o
  cases o with
  | none =>
    cases h : S none
    · rfl
    · have := hS none h
      simp [vob] at this
  | some v => rfl

/-- An event inside the block `{⊥}` has probability `Pr(⊥)` or `0`. -/
theorem Pr_of_sub_bottom (p : Dist (Option V) R) (S : Event (Option V))
    (hS : ∀ o, S o = true → decide (vob o = ValueOrBottom.bottom) = true) :
    Pr p S = if S none then p.mass none else 0 := by
  unfold Pr
  rw [fsum_option]
  have h0 : fsum (fun v => if S (some v) then p.mass (some v) else (0 : R)) = 0 := by
    have e : fsum (fun v => if S (some v) then p.mass (some v) else (0 : R))
        = fsum (fun _ : V => (0 : R)) := by
      apply fsum_congr
      intro v
      cases h : S (some v)
      · simp
      · have := hS (some v) h
        simp [vob] at this
    rw [e, fsum_zero]
  rw [h0]
  grind

/-- **The generic lemma** of the "test, then release, else ⊥" shape: closeness of the events of
values (cost `E value`, slack `δ`) and of `{⊥}` (cost `E bottom`, no slack) give
`({values, ⊥}, E, δ)`-ODP (by Lemma 6). -/
theorem odp_valueOrBottom (Nbr : X → X → Prop) (M : Mechanism X (Option V) R)
    (E : ValueOrBottom → R) (δ : R)
    (hv : ∀ x x', Nbr x x' → ∀ C : Event V,
      Pr (M x) (valEvent C) ≤ exp (E .value) * Pr (M x') (valEvent C) + δ)
    (hb : ∀ x x', Nbr x x' → (M x).mass none ≤ exp (E .bottom) * (M x').mass none) :
    ODP Nbr M vob E δ := by
  have h := odp_of_subsetDP Nbr M vob E
    (fun k => match k with | .value => δ | .bottom => (0 : R)) (by
      intro k
      cases k with
      | value =>
        intro x x' hx S hS
        rw [event_of_sub_value S hS]
        exact hv x x' hx _
      | bottom =>
        intro x x' hx S hS
        show Pr (M x) S ≤ exp (E .bottom) * Pr (M x') S + 0
        rw [Pr_of_sub_bottom (M x) S hS, Pr_of_sub_bottom (M x') S hS]
        cases S none
        · simp; grind
        · simp; have := hb x x' hx; grind)
  have e : fsum (fun k : ValueOrBottom => match k with | .value => δ | .bottom => (0 : R)) = δ := by
    show δ + ((0 : R) + 0) = δ
    grind
  rw [e] at h
  exact h

/-! ### The output distribution of "release, test, `⊥` on a fail" -/

/-- Draw `v ∼ rel`; release it with probability `pass v`, else output `⊥`. -/
def gate (rel : Dist V R) (pass : V → R) (h0 : ∀ v, 0 ≤ pass v) (h1 : ∀ v, pass v ≤ 1) :
    Dist (Option V) R where
  mass o := match o with
    | none => fsum (fun v => rel.mass v * (1 - pass v))
    | some v => rel.mass v * pass v
  nonneg o := by
    cases o with
    | none =>
      exact fsum_nonneg (fun v => mul_nonneg' (rel.nonneg v) (by have := h1 v; grind))
    | some v => exact mul_nonneg' (rel.nonneg v) (h0 v)
  total := by
    rw [fsum_option]
    show fsum (fun v => rel.mass v * (1 - pass v)) + fsum (fun v => rel.mass v * pass v) = 1
    rw [← fsum_add]
    have e : fsum (fun v => rel.mass v * (1 - pass v) + rel.mass v * pass v) = fsum rel.mass :=
      fsum_congr (fun v => by grind)
    rw [e, rel.total]

theorem gate_none (rel : Dist V R) (pass : V → R) (h0 h1) :
    (gate rel pass h0 h1).mass none = fsum (fun v => rel.mass v * (1 - pass v)) := rfl

theorem gate_some (rel : Dist V R) (pass : V → R) (h0 h1) (v : V) :
    (gate rel pass h0 h1).mass (some v) = rel.mass v * pass v := rfl

theorem Pr_gate_valEvent (rel : Dist V R) (pass : V → R) (h0 h1) (C : Event V) :
    Pr (gate rel pass h0 h1) (valEvent C) = fsum (fun v => if C v then rel.mass v * pass v else 0) := by
  rw [Pr_valEvent]
  rfl

/-- With a pass probability that does not depend on the released value (PTR: the test does not
look at the release), `Pr(⊥) = 1 − π`. -/
theorem gate_none_const (rel : Dist V R) (π : R) (h0 h1) :
    (gate rel (fun _ => π) h0 h1).mass none = 1 - π := by
  rw [gate_none]
  have e : fsum (fun v => rel.mass v * (1 - π)) = fsum (fun v => (1 - π) * rel.mass v) :=
    fsum_congr (fun v => by grind)
  rw [e, fsum_mul_left, rel.total]
  grind

/-- With a constant pass probability `π`, `Pr(v ∈ C, released) = π · Pr_rel(C)`. -/
theorem Pr_gate_const (rel : Dist V R) (π : R) (h0 h1) (C : Event V) :
    Pr (gate rel (fun _ => π) h0 h1) (valEvent C) = π * Pr rel C := by
  rw [Pr_gate_valEvent]
  unfold Pr
  rw [← fsum_mul_left]
  apply fsum_congr
  intro v
  cases C v <;> simp <;> grind

/-! ### Definition 9 -/

/-- **Definition 9**, conditions 2–4, for the mechanism `M = T(·, s)` at one proposal `s ∈ 𝒞`;
`G x` stands for `s ∈ G(T, x)`. -/
structure PTRAt (Nbr : X → X → Prop) (M : Mechanism X (Option V) R) (G : X → Prop) (ε δ : R) :
    Prop where
  /-- condition 2: `Pr(T(x, s) = ⊥) ≤ e^ε Pr(T(x', s) = ⊥)` -/
  bot_close : ∀ x x', Nbr x x' → Pr (M x) botEvent ≤ exp ε * Pr (M x') botEvent
  /-- condition 2: `Pr(T(x, s) ≠ ⊥) ≤ e^ε Pr(T(x', s) ≠ ⊥)` -/
  value_close : ∀ x x', Nbr x x' → Pr (M x) isValue ≤ exp ε * Pr (M x') isValue
  /-- condition 3: for `s ∈ G(T, x)`, every set `C'` of values is `e^{2ε}`-close -/
  good : ∀ x, G x → ∀ x', Nbr x x' → ∀ C : Event V,
    Pr (M x) (valEvent C) ≤ exp (2 * ε) * Pr (M x') (valEvent C)
  /-- condition 4: for `s ∉ G(T, x)`, `Pr(T(x, s) ≠ ⊥) ≤ δ` -/
  bad : ∀ x, ¬ G x → Pr (M x) isValue ≤ δ

/-- **Definition 9** (`(ε, δ)`-PTR function `T : 𝒟 × (𝒞 ∪ {⊥}) → 𝒞' ∪ {⊥}`), with proposals
in `Option C` (`none` is `⊥`) and a good set `G s x ↔ s ∈ G(T, x)`. -/
def IsPTRFunction {C : Type} (Nbr : X → X → Prop) (T : Option C → Mechanism X (Option V) R)
    (ε δ : R) : Prop :=
  (∀ x, Pr (T none x) botEvent = 1) ∧
    ∃ G : C → X → Prop, ∀ s : C, PTRAt Nbr (T (some s)) (G s) ε δ

/-- The ODP costs of a PTR function: `ℰ(values) = 2ε`, `ℰ({⊥}) = ε`. -/
def ptrCosts (ε : R) : ValueOrBottom → R
  | .value => 2 * ε
  | .bottom => ε

/-- **Sec. 4.2**: a mechanism satisfying Definition 9's conditions 2–4 at its proposal is
`({values, ⊥}, ℰ, δ)`-ODP with `ℰ(values) = 2ε`, `ℰ({⊥}) = ε`. -/
theorem ptr_odp_at (Nbr : X → X → Prop) (M : Mechanism X (Option V) R) (G : X → Prop) (ε δ : R)
    (hδ : 0 ≤ δ) (h : PTRAt Nbr M G ε δ) : ODP Nbr M vob (ptrCosts ε) δ := by
  apply odp_valueOrBottom
  · intro x x' hx C
    show Pr (M x) (valEvent C) ≤ exp (2 * ε) * Pr (M x') (valEvent C) + δ
    have hp := mul_nonneg' (exp_nonneg (2 * ε)) (Pr_nonneg (M x') (valEvent C))
    by_cases hG : G x
    · have := h.good x hG x' hx C
      grind
    · have h1 := h.bad x hG
      have h2 := Pr_valEvent_le_isValue (M x) C
      grind
  · intro x x' hx
    show (M x).mass none ≤ exp ε * (M x').mass none
    rw [← Pr_botEvent, ← Pr_botEvent]
    exact h.bot_close x x' hx

/-- **Sec. 4.2**: an `(ε, δ)`-PTR function (Definition 9) is, at every proposal `s` (also
`s = ⊥`), `({values, ⊥}, ℰ, δ)`-ODP with `ℰ(values) = 2ε`, `ℰ({⊥}) = ε`. -/
theorem ptr_odp {C : Type} (Nbr : X → X → Prop) (T : Option C → Mechanism X (Option V) R)
    (ε δ : R) (hε : 0 ≤ ε) (hδ : 0 ≤ δ) (h : IsPTRFunction Nbr T ε δ) (s : Option C) :
    ODP Nbr (T s) vob (ptrCosts ε) δ := by
  obtain ⟨h1, G, hG⟩ := h
  cases s with
  | some s => exact ptr_odp_at Nbr (T (some s)) (G s) ε δ hδ (hG s)
  | none =>
    -- `T(·, ⊥) = ⊥` surely: no value has positive probability
    have hval : ∀ x (C : Event V), Pr (T none x) (valEvent C) = 0 := by
      intro x C
      have a := Pr_bot_add_isValue (T none x)
      have b := Pr_valEvent_le_isValue (T none x) C
      have c := Pr_nonneg (T none x) (valEvent C)
      rw [h1 x] at a
      grind
    apply odp_valueOrBottom
    · intro x x' _ C
      rw [hval x C, hval x' C]
      grind
    · intro x x' _
      show (T none x).mass none ≤ exp ε * (T none x').mass none
      rw [← Pr_botEvent, ← Pr_botEvent, h1 x, h1 x']
      have := one_le_exp hε
      grind

end

end Odp.Mech
