/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Linking certificates to the proofs: randomized response

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

Here: `mechOk_rr` (the row over `Nat`: one class costing `ε`, `δ = 0`), `rr_cost_link`,
`RrBuiltin`, `RrBuiltin.odpCost` (from `rr_dp` and Lemma 3), `rr_honest`.

**What stays assumed**: the neighbours; that the release is the model's law (`rrMech`; odp's
Python sampler is not proved to draw it). No noise hypothesis: the law is written out.
-/
module

public import Odp.Certs.LinkCore
public import Odp.Mech.RandomizedResponse.Privacy

@[expose] public section

set_option autoImplicit false

namespace Odp.Certs.Link

open Odp.Core Odp.Core.ExpField Odp.LedgerCore Odp.Mech

noncomputable section

variable {R X O : Type} [ExpField R]

/-! ### The `mech` row (over `Nat`) -/

theorem mechOk_rr {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindRr ps gs = true) :
    bs = [blockAt 0 ps] ∧ e.delta = 0 := by
  have h' : (arity ps gs 1 && costsAre e bs true (dpBlocks (blockAt 0 ps)) 0) = true := h
  exact costsAre_blocks (band_right h')

/-! ### Randomized response (one class, Lemma 3) -/

/-- **Cost link, randomized response**: the single block is `ε`, `δ = 0`. -/
theorem rr_cost_link (D : Nat) {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindRr ps gs = true) :
    (amt D (blockAt 0 bs) : R) = amt D (blockAt 0 ps) ∧ (amt D e.delta : R) = 0 := by
  obtain ⟨hb, hd⟩ := mechOk_rr h
  rw [hb, hd]
  exact ⟨rfl, amt_zero D⟩

/-- A request that is a round of **randomized response** (`rrMech`) on a finite category type,
one class, rows passing `mech rr` with parameter `e`. No noise hypothesis: `rr_dp` is about the
law itself. -/
inductive RrBuiltin [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) : Prop
  | intro {C : Type} [Enum C] [DecidableEq C] (e : Nat) (truth : X → C) (f : C → O)
      (hreal : Realizes r (rrMech (amt D e) truth) f (fun _ => 0))
      (hrow : mechOk r.rowEntry r.blocks true kindRr [e] [] = true)

theorem RrBuiltin.odpCost [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat} (hD : 0 < D)
    {r : Request X O R} (h : RrBuiltin Nbr D r) :
    ODPcost Nbr r.M (r.cost D) (amt D r.delta) := by
  obtain ⟨e, truth, f, hreal, hrow⟩ := h
  obtain ⟨hb, hd⟩ := mechOk_rr hrow
  have hdp := rr_dp Nbr (amt (R := R) D e) (amt_nonneg hD e) truth
  have hd' : (amt D r.delta : R) = 0 := by
    have : r.delta = 0 := hd
    rw [this]; exact amt_zero D
  have hdp' : DP Nbr (rrMech (amt (R := R) D e) truth) (amt D e) (amt D r.delta) := by
    rw [hd']; exact hdp
  exact odp_of_realizes Nbr D hreal (dp_model_odpCost Nbr D _ hb hdp')

/-- **Honesty, randomized response, on its own output type** (one class, every output labelled
`0`). -/
theorem rr_honest {C : Type} [Enum C] [DecidableEq C] (Nbr : X → X → Prop) (D : Nat)
    (hD : 0 < D) (e : Nat) (truth : X → C) (r : Request X C R)
    (hM : r.M = rrMech (amt D e) truth) (hb : ∀ o, r.block o = 0)
    (hrow : mechOk r.rowEntry r.blocks true kindRr [e] [] = true)
    (hsup : r.supEps = listMax r.blocks) (hN : Nbr r.x₀ r.x₁) : r.Honest Nbr D := by
  have hodp := RrBuiltin.odpCost hD
    (RrBuiltin.intro (Nbr := Nbr) e truth (fun o => o) (realizes_self hM hb) hrow)
  refine honest_of Nbr D r hN hodp hsup (fun o => ?_)
  rw [hb o, (mechOk_rr hrow).1]
  exact Nat.zero_lt_succ _

end

end Odp.Certs.Link
