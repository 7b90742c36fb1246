/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Linking certificates to the proofs: the grid Laplace mechanism

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

Here: `mechOk_laplace` (the row over `Nat`: one class costing `ε`, `δ = 0`), `LaplaceBuiltin`,
`laplace_cost_link`, `LaplaceBuiltin.odpCost` (from `laplace_dp` and Lemma 3,
`dp_model_odpCost`), `laplace_honest`.

**What stays assumed**: the neighbour relation and that the query value moves by at most `m`
grid units between neighbours; that the release *is* the model's (odp's Python sampler is tested
against the exact law, not proved). No noise hypothesis: the clamped law is written out
(`Law.lean`).
-/
module

public import Odp.Certs.LinkCore
public import Odp.Mech.Laplace.Privacy

@[expose] public section

set_option autoImplicit false

namespace Odp.Certs.Link

open Odp.Core Odp.Core.ExpField Odp.LedgerCore Odp.Mech

noncomputable section

variable {R X O : Type} [ExpField R]

/-! ### The `mech` row (over `Nat`) -/

theorem mechOk_laplace {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindLaplace ps gs = true) :
    bs = [blockAt 0 ps] ∧ e.delta = 0 := by
  have h' : (arity ps gs 1 && costsAre e bs true (dpBlocks (blockAt 0 ps)) 0) = true := h
  exact costsAre_blocks (band_right h')

/-! ### The grid Laplace mechanism (one class, Lemma 3) -/


/-- A request that is a round of the **grid Laplace mechanism** (`laplaceMech`, clamped: its law
`clampedLaplace` written out, no noise hypothesis), one class for all outputs, rows passing
`mech laplace` with parameter `e`. -/
inductive LaplaceBuiltin [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) : Prop
  | intro (e m : Nat) (hm : 0 < m) (hε : (0 : R) ≤ amt D e) (n : X → Int)
      (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi)
      (f : Window lo hi → O)
      (hreal : Realizes r (laplaceMech m (amt D e) hε n lo hi hlh) f (fun _ => 0))
      (hrow : mechOk r.rowEntry r.blocks true kindLaplace [e] [] = true)

/-- **Cost link, one class** (`mech laplace`, and so `rr`, `median`: `dpBlocks`): the single
block is `ε`, `δ = 0`. -/
theorem laplace_cost_link (D : Nat) {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindLaplace ps gs = true) :
    (amt D (blockAt 0 bs) : R) = amt D (blockAt 0 ps) ∧ (amt D e.delta : R) = 0 := by
  obtain ⟨hb, hd⟩ := mechOk_laplace h
  rw [hb, hd]
  exact ⟨rfl, amt_zero D⟩

theorem LaplaceBuiltin.odpCost [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    {r : Request X O R} (h : LaplaceBuiltin Nbr D r) :
    ODPcost Nbr r.M (r.cost D) (amt D r.delta) := by
  obtain ⟨e, m, hm, hε, n, hn, lo, hi, hlh, f, hreal, hrow⟩ := h
  obtain ⟨hb, hd⟩ := mechOk_laplace hrow
  have hdp := laplace_dp Nbr m hm (amt D e) hε n hn lo hi hlh
  have hd' : (amt D r.delta : R) = 0 := by
    have : r.delta = 0 := hd
    rw [this]; exact amt_zero D
  have hdp' : DP Nbr (laplaceMech m (amt D e) hε n lo hi hlh) (amt D e) (amt D r.delta) := by
    rw [hd']; exact hdp
  exact odp_of_realizes Nbr D hreal (dp_model_odpCost Nbr D _ hb hdp')

/-- **Honesty, grid Laplace, on its own output type** (one class, every output labelled `0`). -/
theorem laplace_honest (Nbr : X → X → Prop) (D e m : Nat) (hm : 0 < m)
    (hε : (0 : R) ≤ amt D e) (n : X → Int)
    (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi)
    (r : Request X (Window lo hi) R) (hM : r.M = laplaceMech m (amt D e) hε n lo hi hlh)
    (hb : ∀ o, r.block o = 0)
    (hrow : mechOk r.rowEntry r.blocks true kindLaplace [e] [] = true)
    (hsup : r.supEps = listMax r.blocks) (hN : Nbr r.x₀ r.x₁) : r.Honest Nbr D := by
  have hodp := LaplaceBuiltin.odpCost
    (LaplaceBuiltin.intro e m hm hε n hn lo hi hlh (fun o => o) (realizes_self hM hb) hrow)
  refine honest_of Nbr D r hN hodp hsup (fun o => ?_)
  rw [hb o, (mechOk_laplace hrow).1]
  exact Nat.zero_lt_succ _

end

end Odp.Certs.Link
