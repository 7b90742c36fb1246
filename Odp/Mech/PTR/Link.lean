/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Linking certificates to the proofs: PTR, M_IQR, the exponential median

For this kind of `mech` row (`Odp.LedgerCore.mechOk`), as for every linked kind (the shared
part is `Odp/Certs/LinkCore.lean`, the capstone `Odp/Certs/Link.lean`):

1. **Cost link**: if `mechOk` accepts the round's rows with the row's parameters `ps` (natural
   numbers in units of `1/D`), then the round's blocks, read in `R` with `amt D`, are the cost
   function that the mechanism's theorem is proved for, evaluated at the parameters read with
   `amt D`, in the certificate's class order, and the round's `δ` is the mechanism's.
2. **Honesty**: a request that releases `f` of a draw of the Lean model (with its hypotheses),
   labels outputs by the model's partition in the certificate's class order, and whose declared
   rows pass `mechOk` for this kind with the model's parameters satisfies the ODP conjunct of
   `Request.Honest`; on the model's own output type, all of `Request.Honest`, given the
   neighbours and that `supEps` is the largest block (what `blocksOk` checks on every accepted
   step).

Here, for the kinds `ptr`, `iqr` and `median`: the rows over `Nat` (`mechOk_ptr`, `mechOk_iqr`,
`mechOk_median`); the class order (values, ⊥) of the partition `{values, ⊥}` (`vobIndex`,
`vob_range`, shared with test-and-release, `Odp/Mech/TestRelease/Link.lean`); the cost links
`ptr_cost_link` (`ptrCosts`, `δ` the row's), `iqr_cost_link` (`iqrCosts`, `δ` the row's),
`median_cost_link` (one class, `δ = 0`); honesty `PtrBuiltin.odpCost`, `IqrBuiltin.odpCost`,
`MedianBuiltin.odpCost` and on the model's own output type `ptr_honest`, `iqr_honest`,
`median_honest`, from `ptr_odp`, `iqr_logBinLap_odp` and `expMedian_dp` with Lemma 3.

**What stays assumed**: neighbours; that the release is the model's; Definition 9's conditions
for a PTR function (`IsPTRFunction`, the PTR kind's interface, `Odp/Mech/PTR/Privacy.lean`); for
`M_IQR` the tail bound `Pr(Z ≥ K) ≤ δ/2` and the stated data facts `IQRDataFacts`; for the median
the stated `UtilitySensitivity` (all in the trust boundary `Odp/Mech/Common/Noise.lean`).
-/
module

public import Odp.Certs.LinkCore
public import Odp.Mech.PTR.IQR
public import Odp.Mech.PTR.Median

@[expose] public section

set_option autoImplicit false

namespace Odp.Certs.Link

open Odp.Core Odp.Core.ExpField Odp.LedgerCore Odp.Mech

noncomputable section

variable {R X O : Type} [ExpField R]

/-! ### The `mech` row (over `Nat`) -/

theorem mechOk_ptr {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindPtr ps gs = true) :
    bs = [2 * blockAt 0 ps, blockAt 0 ps] ∧ e.delta = blockAt 1 ps := by
  have h' : (arity ps gs 2 && costsAre e bs true (ptrBlocks (blockAt 0 ps)) (blockAt 1 ps))
      = true := h
  exact costsAre_blocks (band_right h')

theorem mechOk_iqr {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindIqr ps gs = true) :
    bs = [3 * blockAt 0 ps, 2 * blockAt 0 ps] ∧ e.delta = blockAt 1 ps := by
  have h' : (arity ps gs 2 && costsAre e bs true (iqrBlocks (blockAt 0 ps)) (blockAt 1 ps))
      = true := h
  exact costsAre_blocks (band_right h')

theorem mechOk_median {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindMedian ps gs = true) :
    bs = [blockAt 0 ps] ∧ e.delta = 0 := by
  have h' : (arity ps gs 1 && costsAre e bs true (dpBlocks (blockAt 0 ps)) 0) = true := h
  exact costsAre_blocks (band_right h')

/-! ### The partition `{values, ⊥}` and amounts -/

/-- The position of a class of the partition `{values, ⊥}` in the certificate's class order. -/
def vobIndex : ValueOrBottom → Nat
  | .value => 0
  | .bottom => 1

theorem amt_two (D a : Nat) : (amt D (2 * a) : R) = 2 * amt D a := by
  rw [show 2 * a = a + a by omega, amt_add]
  grind

theorem amt_three (D a : Nat) : (amt D (3 * a) : R) = 3 * amt D a := by
  rw [show 3 * a = a + a + a by omega, amt_add, amt_add]
  grind

theorem vob_range {V : Type} (o : Option V) (l : List Nat) (hl : listLen l = 2) :
    vobIndex (vob o) < listLen l := by
  rw [hl]
  cases o
  · show 1 < 2; decide
  · show 0 < 2; decide

/-! ### PTR (Sec. 4.2, Definition 9) -/

/-- **Cost link, PTR**: an accepted `mech ptr` row with parameters `ε, δ` lists (values, ⊥) at
`ptrCosts (ε/D)` and the round's `δ` is `δ`. -/
theorem ptr_cost_link (D : Nat) {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindPtr ps gs = true) :
    (∀ b, (amt D (blockAt (vobIndex b) bs) : R) = ptrCosts (amt D (blockAt 0 ps)) b) ∧
      e.delta = blockAt 1 ps ∧ listLen bs = 2 := by
  obtain ⟨hb, hd⟩ := mechOk_ptr h
  refine ⟨fun b => ?_, hd, by rw [hb]; rfl⟩
  rw [hb]
  cases b
  · exact amt_two D _
  · rfl

/-- A request that is a round of a **PTR function** `T` at the proposal `s` (Sec. 4.2): it
releases `f` of `T s`'s output, labels values `0` and ⊥ `1`, and its rows pass `mech ptr` with
parameters `e, d`. Carried hypothesis: `T` is an `(e/D, d/D)`-PTR function (Definition 9). -/
inductive PtrBuiltin [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) : Prop
  | intro {C V : Type} [Enum V] (e d : Nat) (T : Option C → Mechanism X (Option V) R)
      (hT : IsPTRFunction Nbr T (amt D e) (amt D d)) (s : Option C) (f : Option V → O)
      (hreal : Realizes r (T s) f (fun o => vobIndex (vob o)))
      (hrow : mechOk r.rowEntry r.blocks true kindPtr [e, d] [] = true)

theorem PtrBuiltin.odpCost [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat} (hD : 0 < D)
    {r : Request X O R} (h : PtrBuiltin Nbr D r) :
    ODPcost Nbr r.M (r.cost D) (amt D r.delta) := by
  obtain ⟨e, d, T, hT, s, f, hreal, hrow⟩ := h
  have hl := ptr_cost_link (R := R) D hrow
  have h1 := (ODP_iff_ODPcost Nbr _ vob (ptrCosts (amt D e)) (amt D d)).mp
    (ptr_odp Nbr T (amt D e) (amt D d) (amt_nonneg hD e) (amt_nonneg hD d) hT s)
  exact odp_of_realizes Nbr D hreal
    (odpCost_congr h1 (fun o => (hl.1 (vob o)).symm) (congrArg (amt D) hl.2.1.symm))

/-- **Honesty, PTR, on its own output type**. -/
theorem ptr_honest {C V : Type} [Enum V] [DecidableEq V] (Nbr : X → X → Prop) (D : Nat)
    (hD : 0 < D) (e d : Nat) (T : Option C → Mechanism X (Option V) R)
    (hT : IsPTRFunction Nbr T (amt D e) (amt D d)) (s : Option C) (r : Request X (Option V) R)
    (hM : r.M = T s) (hb : ∀ o, r.block o = vobIndex (vob o))
    (hrow : mechOk r.rowEntry r.blocks true kindPtr [e, d] [] = true)
    (hsup : r.supEps = listMax r.blocks) (hN : Nbr r.x₀ r.x₁) : r.Honest Nbr D := by
  have hodp := PtrBuiltin.odpCost hD
    (PtrBuiltin.intro e d T hT s (fun o => o) (realizes_self hM hb) hrow)
  refine honest_of Nbr D r hN hodp hsup (fun o => ?_)
  rw [hb o]
  exact vob_range o _ (ptr_cost_link (R := R) D hrow).2.2

/-! ### M_IQR (Lemma 10, odp's log-bin discretisations) -/

/-- **Cost link, M_IQR**: an accepted `mech iqr` row with parameters `ε, δ` lists (values, ⊥) at
`iqrCosts (ε/D)` and the round's `δ` is `δ`. -/
theorem iqr_cost_link (D : Nat) {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindIqr ps gs = true) :
    (∀ b, (amt D (blockAt (vobIndex b) bs) : R) = iqrCosts (amt D (blockAt 0 ps)) b) ∧
      e.delta = blockAt 1 ps ∧ listLen bs = 2 := by
  obtain ⟨hb, hd⟩ := mechOk_iqr h
  refine ⟨fun b => ?_, hd, by rw [hb]; rfl⟩
  rw [hb]
  cases b
  · exact amt_three D _
  · exact amt_two D _

/-- A request that is a round of **odp's `M_IQR(ε, δ)`** with its laws written out
(`iqrLogBinLap`: the log-bin PTR function on the first discretisation and, on its ⊥, on the
second, each with `δ/2`; test noise the discrete Laplace of scale `1/ε`, release the sub-bin
index plus the discrete Laplace of scale `(L − 1)/ε` clamped to the declared index window): it
releases `f` of the output, labels values `0` and ⊥ `1`, and its rows pass `mech iqr` with
parameters `e, d`. Carried hypotheses: the pass tail `Pr(Z ≥ K) ≤ δ/2` (a fact about the number
`K`) and the stated data facts of both discretisations (`IQRDataFacts`); no noise hypothesis. -/
inductive IqrBuiltin [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) : Prop
  | intro {V : Type} [Enum V] [DecidableEq V] (e d : Nat) (hε : (0 : R) ≤ amt D e) (K : Int)
      (L : Nat) (lo₁ hi₁ : Int) (h₁ : lo₁ ≤ hi₁) (out₁ : Option (Window lo₁ hi₁) → V)
      (lo₂ hi₂ : Int) (h₂ : lo₂ ≤ hi₂) (out₂ : Option (Window lo₂ hi₂) → V) (A₁ A₂ : X → Int)
      (sub₁ sub₂ : X → Option Int) (htail : discreteLaplaceTail (amt D e : R) K ≤ amt D d / 2)
      (hd₁ : IQRDataFacts Nbr A₁ sub₁ L) (hd₂ : IQRDataFacts Nbr A₂ sub₂ L) (f : Option V → O)
      (hreal : Realizes r (iqrLogBinLap (amt D e) hε K L lo₁ hi₁ h₁ out₁ lo₂ hi₂ h₂ out₂ A₁ A₂
        sub₁ sub₂) f (fun o => vobIndex (vob o)))
      (hrow : mechOk r.rowEntry r.blocks true kindIqr [e, d] [] = true)

theorem IqrBuiltin.odpCost [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat} (hD : 0 < D)
    {r : Request X O R} (h : IqrBuiltin Nbr D r) :
    ODPcost Nbr r.M (r.cost D) (amt D r.delta) := by
  obtain ⟨e, d, hε, K, L, lo₁, hi₁, h₁, out₁, lo₂, hi₂, h₂, out₂, A₁, A₂, sub₁, sub₂, htail, hd₁,
    hd₂, f, hreal, hrow⟩ := h
  have hl := iqr_cost_link (R := R) D hrow
  have h1 := (ODP_iff_ODPcost Nbr _ vob (iqrCosts (amt D e)) (amt D d)).mp
    (iqr_logBinLap_odp Nbr hε (amt_nonneg hD d) K L lo₁ hi₁ h₁ out₁ lo₂ hi₂ h₂ out₂ A₁ A₂ sub₁
      sub₂ htail hd₁ hd₂)
  exact odp_of_realizes Nbr D hreal
    (odpCost_congr h1 (fun o => (hl.1 (vob o)).symm) (congrArg (amt D) hl.2.1.symm))

/-- **Honesty, M_IQR, on its own output type**. -/
theorem iqr_honest {V : Type} [Enum V] [DecidableEq V] (Nbr : X → X → Prop) (D : Nat)
    (hD : 0 < D) (e d : Nat) (K : Int) (L : Nat) (lo₁ hi₁ : Int) (h₁ : lo₁ ≤ hi₁)
    (out₁ : Option (Window lo₁ hi₁) → V) (lo₂ hi₂ : Int) (h₂ : lo₂ ≤ hi₂)
    (out₂ : Option (Window lo₂ hi₂) → V) (A₁ A₂ : X → Int) (sub₁ sub₂ : X → Option Int)
    (htail : discreteLaplaceTail (amt D e : R) K ≤ amt D d / 2)
    (hd₁ : IQRDataFacts Nbr A₁ sub₁ L) (hd₂ : IQRDataFacts Nbr A₂ sub₂ L)
    (r : Request X (Option V) R)
    (hM : r.M = iqrLogBinLap (amt D e) (amt_nonneg hD e) K L lo₁ hi₁ h₁ out₁ lo₂ hi₂ h₂ out₂ A₁ A₂
      sub₁ sub₂)
    (hb : ∀ o, r.block o = vobIndex (vob o))
    (hrow : mechOk r.rowEntry r.blocks true kindIqr [e, d] [] = true)
    (hsup : r.supEps = listMax r.blocks) (hN : Nbr r.x₀ r.x₁) : r.Honest Nbr D := by
  have hodp := IqrBuiltin.odpCost hD (IqrBuiltin.intro e d (amt_nonneg hD e) K L lo₁ hi₁ h₁ out₁
    lo₂ hi₂ h₂ out₂ A₁ A₂ sub₁ sub₂ htail hd₁ hd₂ (fun o => o) (realizes_self hM hb) hrow)
  refine honest_of Nbr D r hN hodp hsup (fun o => ?_)
  rw [hb o]
  exact vob_range o _ (iqr_cost_link (R := R) D hrow).2.2

/-! ### The exponential median (one class, Lemma 3) -/

/-- **Cost link, median**: one class costing `ε`, `δ = 0`. -/
theorem median_cost_link (D : Nat) {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindMedian ps gs = true) :
    (amt D (blockAt 0 bs) : R) = amt D (blockAt 0 ps) ∧ e.delta = 0 := by
  obtain ⟨hb, hd⟩ := mechOk_median h
  rw [hb]
  exact ⟨rfl, hd⟩

/-- A request that is a round of **odp's exponential median** (`expMech y₀ u (e/D)` on a public
finite grid `Y`): it releases `f` of the output, one class, rows passing `mech median` with
parameter `e`. Carried hypothesis: the stated `UtilitySensitivity`. -/
inductive MedianBuiltin [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) : Prop
  | intro {Y : Type} [Enum Y] (e : Nat) (y₀ : Y) (u : X → Y → Int)
      (hu : UtilitySensitivity Nbr u) (f : Y → O)
      (hreal : Realizes r (expMech y₀ u (amt D e)) f (fun _ => 0))
      (hrow : mechOk r.rowEntry r.blocks true kindMedian [e] [] = true)

theorem MedianBuiltin.odpCost [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    (hD : 0 < D) {r : Request X O R} (h : MedianBuiltin Nbr D r) :
    ODPcost Nbr r.M (r.cost D) (amt D r.delta) := by
  obtain ⟨e, y₀, u, hu, f, hreal, hrow⟩ := h
  obtain ⟨hb, hd⟩ := mechOk_median hrow
  have hdp := expMedian_dp (R := R) Nbr y₀ u hu (amt D e) (amt_nonneg hD e)
  have hd' : r.delta = 0 := hd
  have hdp' : DP Nbr (expMech y₀ u (amt (R := R) D e)) (amt D e) (amt D r.delta) := by
    rw [hd', amt_zero]; exact hdp
  exact odp_of_realizes Nbr D hreal (dp_model_odpCost Nbr D _ hb hdp')

/-- **Honesty, median, on its own output type**. -/
theorem median_honest {Y : Type} [Enum Y] [DecidableEq Y] (Nbr : X → X → Prop) (D : Nat)
    (hD : 0 < D) (e : Nat) (y₀ : Y) (u : X → Y → Int) (hu : UtilitySensitivity Nbr u)
    (r : Request X Y R) (hM : r.M = expMech y₀ u (amt D e)) (hb : ∀ o, r.block o = 0)
    (hrow : mechOk r.rowEntry r.blocks true kindMedian [e] [] = true)
    (hsup : r.supEps = listMax r.blocks) (hN : Nbr r.x₀ r.x₁) : r.Honest Nbr D := by
  have hodp := MedianBuiltin.odpCost hD
    (MedianBuiltin.intro e y₀ u hu (fun o => o) (realizes_self hM hb) hrow)
  refine honest_of Nbr D r hN hodp hsup (fun o => ?_)
  rw [hb o, (mechOk_median hrow).1]
  exact Nat.zero_lt_succ _

end

end Odp.Certs.Link
