/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Linking certificates to the proofs: M_toy

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

Here: `mechOk_toy` (in `Odp/LedgerCore.lean`), `toyIndex` (values ↦ 0, ⊥ ↦ 1), `toy_cost_link`
(`amt D (blockAt (toyIndex b) bs) = toyCosts (amt D e) b`, `δ = 0`), `toy_model_odpCost`
(`toy_odp` in the certificate's terms, `ODP_iff_ODPcost`), `ToyBuiltin`, `ToyBuiltin.odpCost`,
`toy_honest`.

**What stays assumed**: the neighbour relation (`Nbr r.x₀ r.x₁`, and that the query value moves
by at most `m` grid units between neighbours); that the release *is* the model's (odp's Python
samplers and mechanisms are not proved to compute these laws). No noise hypothesis: M_toy's law
is written out.
-/
module

public import Odp.Certs.LinkCore
public import Odp.Mech.Toy.Privacy

@[expose] public section

set_option autoImplicit false

namespace Odp.Certs.Link

open Odp.Core Odp.Core.ExpField Odp.LedgerCore Odp.Mech

noncomputable section

variable {R X O : Type} [ExpField R]

/-! ### M_toy -/

/-- The position of an M_toy class in the certificate's class order (values, ⊥). -/
def toyIndex : ToyBlock → Nat
  | .value => 0
  | .bottom => 1

/-- **Cost link, M_toy**: an accepted `mech toy` row with parameter `ε` lists the classes
(values, ⊥) at `toyCosts (ε/D)`, and `δ = 0`. -/
theorem toy_cost_link (D : Nat) {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindToy ps gs = true) :
    (∀ b, (amt D (blockAt (toyIndex b) bs) : R) = toyCosts (amt D (blockAt 0 ps)) b) ∧
      (amt D e.delta : R) = 0 := by
  obtain ⟨hb, hd⟩ := mechOk_toy h
  refine ⟨fun b => ?_, by rw [hd]; exact amt_zero D⟩
  rw [hb]
  cases b
  · rfl
  · exact amt_zero D

/-- M_toy's guarantee (`toy_odp`) in the certificate's terms. -/
theorem toy_model_odpCost (Nbr : X → X → Prop) (D e m : Nat) (hm : 0 < m)
    (hε : (0 : R) ≤ amt D e) (n : X → Int)
    (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi)
    {en : Entry} {bs : List Nat} {gs : List StepGroup}
    (h : mechOk en bs true kindToy [e] gs = true) :
    ODPcost Nbr (toyMech m (amt D e) hε n lo hi hlh)
      (fun o => amt D (blockAt (toyIndex (toyBlock o)) bs)) (amt D en.delta) := by
  have h1 := (ODP_iff_ODPcost Nbr _ toyBlock (toyCosts (amt D e)) 0).mp
    (toy_odp Nbr m hm (amt D e) hε n hn lo hi hlh)
  have hl := toy_cost_link (R := R) D h
  exact odpCost_congr h1 (fun o => (hl.1 (toyBlock o)).symm) hl.2.symm

/-- A request that is a round of **M_toy** (paper, Sec. 1; `odp.mechanisms.noise.ToyMechanism`):
it releases `f` of a draw of `toyMech m (e/D) hε n lo hi hlh` (a fair coin, then the clamped grid
Laplace release of `n x` — its law written out, `clampedLaplace` — or ⊥), labels values `0` and
⊥ `1`, and its rows pass `mech toy` with parameter `e`. Carried hypotheses: `m ≥ 1`, `e/D ≥ 0`,
`n` moves by at most `m` between neighbours; no noise hypothesis. -/
inductive ToyBuiltin [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) : Prop
  | intro (e m : Nat) (hm : 0 < m) (hε : (0 : R) ≤ amt D e) (n : X → Int)
      (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi)
      (f : Option (Window lo hi) → O)
      (hreal : Realizes r (toyMech m (amt D e) hε n lo hi hlh) f (fun o => toyIndex (toyBlock o)))
      (hrow : mechOk r.rowEntry r.blocks true kindToy [e] [] = true)

/-- **Honesty (ODP conjunct), M_toy**. -/
theorem ToyBuiltin.odpCost [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    {r : Request X O R} (h : ToyBuiltin Nbr D r) :
    ODPcost Nbr r.M (r.cost D) (amt D r.delta) := by
  obtain ⟨e, m, hm, hε, n, hn, lo, hi, hlh, f, hreal, hrow⟩ := h
  exact odp_of_realizes Nbr D hreal (toy_model_odpCost Nbr D e m hm hε n hn lo hi hlh hrow)

/-- **Honesty, M_toy, on its own output type**: a request whose mechanism is M_toy, labelled
(values ↦ 0, ⊥ ↦ 1), whose rows pass `mech toy` with its `ε` and whose `supEps` is the largest
block, between neighbours, is honest. -/
theorem toy_honest (Nbr : X → X → Prop) (D e m : Nat) (hm : 0 < m)
    (hε : (0 : R) ≤ amt D e) (n : X → Int)
    (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi)
    (r : Request X (Option (Window lo hi)) R) (hM : r.M = toyMech m (amt D e) hε n lo hi hlh)
    (hb : ∀ o, r.block o = toyIndex (toyBlock o))
    (hrow : mechOk r.rowEntry r.blocks true kindToy [e] [] = true)
    (hsup : r.supEps = listMax r.blocks) (hN : Nbr r.x₀ r.x₁) : r.Honest Nbr D := by
  have hodp := ToyBuiltin.odpCost
    (ToyBuiltin.intro e m hm hε n hn lo hi hlh (fun o => o) (realizes_self hM hb) hrow)
  refine honest_of Nbr D r hN hodp hsup (fun o => ?_)
  have hl2 : listLen (toyBlocks (blockAt 0 [e])) = 2 := rfl
  rw [(mechOk_toy hrow).1, hl2, hb o]
  cases toyBlock o <;> decide

end

end Odp.Certs.Link
