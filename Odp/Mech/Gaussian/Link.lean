/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Linking certificates to the proofs: the grid Gaussian mechanism

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

Here: `mechOk_gaussian` (the row over `Nat`: one class costing `ε`, the round's `δ` the row's
`δ`), `gaussian_cost_link`, `GaussianBuiltin`, `GaussianBuiltin.odpCost` (from `gaussian_dp` and
Lemma 3), `gaussian_honest`.

**What stays assumed**: the neighbour relation and the grid sensitivity `m`; that the release is
the model's; the noise hypothesis `GaussNoise` of the trust boundary
`Odp/Mech/Common/Noise.lean` (the δ of Canonne, Kamath, Steinke 2020, Theorem 7, computed by
tested Python code).
-/
module

public import Odp.Certs.LinkCore
public import Odp.Mech.Gaussian.Privacy

@[expose] public section

set_option autoImplicit false

namespace Odp.Certs.Link

open Odp.Core Odp.Core.ExpField Odp.LedgerCore Odp.Mech

noncomputable section

variable {R X O : Type} [ExpField R]

/-! ### The `mech` row (over `Nat`) -/

theorem mechOk_gaussian {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindGaussian ps gs = true) :
    bs = [blockAt 0 ps] ∧ e.delta = blockAt 1 ps := by
  have h' : (arity ps gs 2 && costsAre e bs true (dpBlocks (blockAt 0 ps)) (blockAt 1 ps))
      = true := h
  exact costsAre_blocks (band_right h')

/-! ### The grid Gaussian mechanism (one class, Lemma 3) -/

/-- **Cost link, Gaussian**: the single block is `ε`, the round's `δ` is the row's `δ`. -/
theorem gaussian_cost_link (D : Nat) {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindGaussian ps gs = true) :
    (amt D (blockAt 0 bs) : R) = amt D (blockAt 0 ps) ∧
      (amt D e.delta : R) = amt D (blockAt 1 ps) := by
  obtain ⟨hb, hd⟩ := mechOk_gaussian h
  rw [hb, hd]
  exact ⟨rfl, rfl⟩

/-- A request that is a round of the **grid Gaussian mechanism** (`gaussianMech`, clamped), one
class, rows passing `mech gaussian` with parameters `e, d` (`δ = d/D`; the hypothesis
`GaussNoise` is Canonne, Kamath, Steinke 2020, Theorem 7, for that `δ`, a bound odp computes in tested Python code). -/
inductive GaussianBuiltin [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) : Prop
  | intro (e d m : Nat) (Z : GaussNoise R m (amt D e) (amt D d)) (n : X → Int)
      (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi)
      (f : Window lo hi → O)
      (hreal : Realizes r (gaussianMech m (amt D e) (amt D d) Z n lo hi hlh) f (fun _ => 0))
      (hrow : mechOk r.rowEntry r.blocks true kindGaussian [e, d] [] = true)

theorem GaussianBuiltin.odpCost [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    {r : Request X O R} (h : GaussianBuiltin Nbr D r) :
    ODPcost Nbr r.M (r.cost D) (amt D r.delta) := by
  obtain ⟨e, d, m, Z, n, hn, lo, hi, hlh, f, hreal, hrow⟩ := h
  obtain ⟨hb, hd⟩ := mechOk_gaussian hrow
  have hdp := gaussian_dp Nbr m (amt D e) (amt D d) Z n hn lo hi hlh
  have hd' : r.delta = d := hd
  have hdp' : DP Nbr (gaussianMech m (amt D e) (amt D d) Z n lo hi hlh) (amt D e)
      (amt D r.delta) := by rw [hd']; exact hdp
  exact odp_of_realizes Nbr D hreal (dp_model_odpCost Nbr D _ hb hdp')

/-- **Honesty, grid Gaussian, on its own output type** (one class, every output labelled `0`). -/
theorem gaussian_honest (Nbr : X → X → Prop) (D e d m : Nat)
    (Z : GaussNoise R m (amt D e) (amt D d)) (n : X → Int)
    (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi)
    (r : Request X (Window lo hi) R) (hM : r.M = gaussianMech m (amt D e) (amt D d) Z n lo hi hlh)
    (hb : ∀ o, r.block o = 0)
    (hrow : mechOk r.rowEntry r.blocks true kindGaussian [e, d] [] = true)
    (hsup : r.supEps = listMax r.blocks) (hN : Nbr r.x₀ r.x₁) : r.Honest Nbr D := by
  have hodp := GaussianBuiltin.odpCost
    (GaussianBuiltin.intro e d m Z n hn lo hi hlh (fun o => o) (realizes_self hM hb) hrow)
  refine honest_of Nbr D r hN hodp hsup (fun o => ?_)
  rw [hb o, (mechOk_gaussian hrow).1]
  exact Nat.zero_lt_succ _

end

end Odp.Certs.Link
