/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Linking certificates to the mechanisms' proofs: the mechanism-independent part

`Odp.Core.Request.Honest` (what the accountant takes on trust about a request) has three
conjuncts: the databases are neighbours, the mechanism's declared guarantee holds
(`ODPcost Nbr r.M (r.cost D) (amt D r.delta)`), and every output's Lemma 4 row passes
`blocksOk`. The links derive the last two from the proofs of `Odp/Mech` and the `mech` row that
`Odp.LedgerCore.mechOk` checks: this file, one `Link.lean` in each mechanism's folder under
`Odp/Mech` (e.g. `Odp/Mech/Laplace/Link.lean`), and the capstone `Odp/Certs/Link.lean`. This file
holds what does not depend on a mechanism:

* **Relabelled outputs** (`IsPush`, `odpCost_push`). A run fixes one output type `O` for all its
  requests; a built-in model with its own output type `Om` enters the run through a map
  `f : Om → O` (`Sum.inl`, `some`, …): `IsPush f M M'` says that `M' x` is the law of `f` of a
  draw of `M x` (`Odp.Mech.postProcess f M` is one, by definition). Output-wise ODP transfers
  when the cost on `O` is the model's cost through `f` — no injectivity is needed: this is
  post-processing with labels kept (`Odp.Mech.odp_postProcess`), proved here from the Core only
  so that every family of `Odp/Mech` can use it. `odpCost_comap`: a model on another input type,
  fed `g x`, with neighbours mapped to neighbours.
* `Realizes r M f idx`: the request releases `f` of a draw of the model `M` and labels `f o` by
  the model's class index `idx o` (the position of its class in the certificate's class order);
  then the request's declared cost of `f o` is the `idx o`-th block (`odp_of_realizes`).
* `blocksOk_of_rows`: the Lemma 4 conjunct of `Honest` holds for every output as soon as
  `supEps` is the largest block (`blocksOk` checks exactly this on every accepted step) and every
  output's class index is in range. `rows_of_step`: a step of a kernel-accepted certificate that
  records a round of `r` gives the first fact and the `mech` row check for `r`'s declared rows
  (`Request.rowEntry`; `mechOk` never reads `charged`).
* Amounts: `amt D (k·a) = k·amt D a`, …; `arity_params`. Each kind's `mech` row read off
  `mechOk` is in the kind's `Link.lean` (`mechOk_laplace`, `mechOk_ptr`, …; the toy, SVT, DP and
  Lemma 11 ones are `Odp.LedgerCore.mechOk_*`).
* A user's DP charge (`mech dp`: `DpBuiltin`, `dp_cost_link`), whose DP is the user's claim, and
  `dp_model_odpCost` (Lemma 3 for a one-class round), shared by the one-class kinds.
* `fsum_eq_lsum`: a finite sum is the sum over any complete duplicate-free list (so sums over
  `Fin n` are computed without depending on which `Enum (Fin n)` instance is in scope).

Nothing here is assumed.
-/
module

public import Odp.Core.Ledger

@[expose] public section

set_option autoImplicit false

namespace Odp.Certs.Link

open Odp.Core Odp.Core.ExpField Odp.LedgerCore

noncomputable section

variable {R X X' O Om : Type} [ExpField R]

/-! ### Amounts -/

theorem natR_mul_nat (a b : Nat) : (natR (a * b) : R) = natR a * natR b := by
  induction b with
  | zero => rw [Nat.mul_zero, natR_zero]; grind
  | succ b ih => rw [Nat.mul_succ, natR_add, ih, natR_succ]; grind

theorem amt_zero (D : Nat) : (amt D 0 : R) = 0 := by
  unfold amt
  rw [natR_zero]
  grind

theorem amt_add (D a b : Nat) : (amt D (a + b) : R) = amt D a + amt D b := by
  unfold amt
  rw [natR_add]
  grind

/-- `amt D (k·a) = k · amt D a`. -/
theorem amt_mul_left (D k a : Nat) : (amt D (k * a) : R) = natR k * amt D a := by
  unfold amt
  rw [natR_mul_nat]
  grind

theorem inv_natR_mul {n : Nat} (hn : 0 < n) : (natR n : R) * (natR n)⁻¹ = 1 :=
  Lean.Grind.Field.mul_inv_cancel (by have := natR_pos (R := R) hn; grind)

/-- Two amounts whose numerators, multiplied by the same positive number, agree, are equal. -/
theorem eq_of_mul_eq {a b u : Nat} (hu : 0 < u) (h : a * u = b * u) : a = b :=
  Nat.eq_of_mul_eq_mul_right hu h

/-! ### Finite sums over any enumeration -/

/-- A finite sum is the sum over any complete duplicate-free list of the type. -/
theorem fsum_eq_lsum {α : Type} [Enum α] [DecidableEq α] (L : List α) (hL : L.Nodup)
    (hc : ∀ a, a ∈ L) (f : α → R) : fsum f = lsum L f := by
  unfold fsum
  have e1 : lsum Enum.elems f
      = lsum Enum.elems (fun a => lsum L (fun b => if b = a then f a else 0)) := by
    apply lsum_congr
    intro a _
    rw [lsum_indicator_mem L hL a (f a), if_pos (hc a)]
  have e2 : lsum L f = lsum L (fun b => lsum Enum.elems (fun a => if b = a then f a else 0)) := by
    apply lsum_congr
    intro b _
    have h := lsum_indicator_mem (Enum.elems : List α) Enum.nodup b (f b)
    rw [if_pos (Enum.complete b)] at h
    rw [← h]
    apply lsum_congr
    intro a _
    by_cases hab : b = a
    · subst hab
      rw [if_pos rfl]
    · rw [if_neg hab, if_neg (fun h => hab h.symm)]
  rw [e1, e2]
  exact lsum_comm _ _ _

/-! ### Relabelled outputs (post-processing that keeps the labels) -/

/-- `M'` is the law of `f` of a draw of `M`: `Pr(M' x = o') = Σ_{o : f o = o'} Pr(M x = o)`.
(`Odp.Mech.postProcess f M` satisfies this by definition.) -/
def IsPush [Enum Om] [Enum O] [DecidableEq O] (f : Om → O) (M : Mechanism X Om R)
    (M' : Mechanism X O R) : Prop :=
  ∀ x o', (M' x).mass o' = fsum (fun o => if f o = o' then (M x).mass o else 0)

section Push

variable [Enum Om] [Enum O] [DecidableEq O]

/-- Sums against a relabelled law are sums against the model's law. -/
theorem fsum_push {f : Om → O} {M : Mechanism X Om R} {M' : Mechanism X O R}
    (h : IsPush f M M') (x : X) (w : O → R) :
    fsum (fun o' => w o' * (M' x).mass o') = fsum (fun o => w (f o) * (M x).mass o) := by
  rw [← fsum_regroup f (fun o => w (f o) * (M x).mass o)]
  apply fsum_congr
  intro o'
  rw [h x o', ← fsum_mul_left]
  apply fsum_congr
  intro o
  by_cases hf : f o = o'
  · subst hf
    rw [if_pos rfl, if_pos rfl]
  · rw [if_neg hf, if_neg hf]
    grind

theorem ite_eq_ite_mul (b : Bool) (a m : R) :
    (if b then a * m else 0) = (if b then a else 0) * m := by
  cases b
  · simp only [Bool.false_eq_true, if_false]; grind
  · simp only [if_true]

theorem ite_eq_ite_one_mul (b : Bool) (m : R) :
    (if b then m else 0) = (if b then (1 : R) else 0) * m := by
  cases b
  · simp only [Bool.false_eq_true, if_false]; grind
  · simp only [if_true]; grind

/-- `Pr(M' x ∈ S) = Pr(M x ∈ f⁻¹ S)`. -/
theorem Pr_push {f : Om → O} {M : Mechanism X Om R} {M' : Mechanism X O R}
    (h : IsPush f M M') (x : X) (S : Event O) :
    Pr (M' x) S = Pr (M x) (fun o => S (f o)) := by
  unfold Pr
  rw [fsum_congr (fun o' => ite_eq_ite_one_mul (S o') ((M' x).mass o')), fsum_push h x,
    fsum_congr (fun o => ite_eq_ite_one_mul (S (f o)) ((M x).mass o))]

/-- **Relabelled outputs keep an output-wise ODP guarantee** whose cost is read through `f`
(post-processing with the labels kept; `f` need not be injective). -/
theorem odpCost_push (Nbr : X → X → Prop) {f : Om → O} {M : Mechanism X Om R}
    {M' : Mechanism X O R} (h : IsPush f M M') (c : O → R) (δ : R)
    (hM : ODPcost Nbr M (fun o => c (f o)) δ) : ODPcost Nbr M' c δ := by
  intro x x' hx S
  have h1 := hM x x' hx (fun o => S (f o))
  rw [Pr_push h x S]
  have e : fsum (fun o' => if S o' then exp (c o') * (M' x').mass o' else 0)
      = fsum (fun o => if S (f o) then exp (c (f o)) * (M x').mass o else 0) := by
    rw [fsum_congr (fun o' => ite_eq_ite_mul (S o') (exp (c o')) ((M' x').mass o')),
      fsum_push h x' (fun o' => if S o' then exp (c o') else 0),
      fsum_congr (fun o => ite_eq_ite_mul (S (f o)) (exp (c (f o))) ((M x').mass o))]
  rw [e]
  exact h1

/-- A mechanism is its own relabelling by the identity. -/
theorem isPush_id [DecidableEq Om] (M : Mechanism X Om R) : IsPush (fun o => o) M M := by
  intro x o'
  unfold fsum
  have h := lsum_indicator_mem (Enum.elems : List Om) Enum.nodup o' ((M x).mass o')
  rw [if_pos (Enum.complete o')] at h
  rw [← h]
  apply lsum_congr
  intro o _
  by_cases ho : o = o'
  · subst ho
    rfl
  · rw [if_neg ho, if_neg ho]

end Push

/-- Output-wise ODP with equal costs and equal `δ`. -/
theorem odpCost_congr [Enum O] {Nbr : X → X → Prop} {M : Mechanism X O R} {c c' : O → R}
    {δ δ' : R} (h : ODPcost Nbr M c δ) (hc : ∀ o, c o = c' o) (hδ : δ = δ') :
    ODPcost Nbr M c' δ' := by
  have e : c = c' := funext hc
  subst e
  subst hδ
  exact h

/-- A model on inputs `X'`, fed `g x`, keeps its guarantee for every relation whose neighbours
`g` maps to neighbours. -/
theorem odpCost_comap [Enum O] (Nbr : X → X → Prop) (Nbr' : X' → X' → Prop) (g : X → X')
    (hg : ∀ x x', Nbr x x' → Nbr' (g x) (g x')) (M : Mechanism X' O R) (c : O → R) (δ : R)
    (h : ODPcost Nbr' M c δ) : ODPcost Nbr (fun x => M (g x)) c δ :=
  fun x x' hx S => h (g x) (g x') (hg x x' hx) S

/-! ### A request that releases a model's output -/

/-- The request releases `f` of a draw of the model `M` (on its own output type `Om`) and
labels `f o` with the model's class index `idx o` (the position of `o`'s class in the
certificate's class order). -/
structure Realizes [Enum O] [DecidableEq O] [Enum Om] (r : Request X O R) (M : Mechanism X Om R)
    (f : Om → O) (idx : Om → Nat) : Prop where
  push : IsPush f M r.M
  label : ∀ o, r.block (f o) = idx o

/-- The request's declared cost of `f o` is the block of `o`'s class. -/
theorem cost_realizes [Enum O] [DecidableEq O] [Enum Om] {r : Request X O R}
    {M : Mechanism X Om R} {f : Om → O} {idx : Om → Nat} (h : Realizes r M f idx) (D : Nat)
    (o : Om) : r.cost D (f o) = amt D (blockAt (idx o) r.blocks) := by
  show amt D (blockAt (r.block (f o)) r.blocks) = _
  rw [h.label o]

/-- **The ODP conjunct of `Request.Honest` from the model's guarantee**: if the model is
output-wise ODP with the cost of `o` the `idx o`-th block of the request (read with `amt D`) and
`δ = amt D r.delta`, the request's declared guarantee holds. -/
theorem odp_of_realizes [Enum O] [DecidableEq O] [Enum Om] (Nbr : X → X → Prop) (D : Nat)
    {r : Request X O R} {M : Mechanism X Om R} {f : Om → O} {idx : Om → Nat}
    (h : Realizes r M f idx)
    (hM : ODPcost Nbr M (fun o => amt D (blockAt (idx o) r.blocks)) (amt D r.delta)) :
    ODPcost Nbr r.M (r.cost D) (amt D r.delta) := by
  apply odpCost_push Nbr h.push (r.cost D) (amt D r.delta)
  have e : (fun o => r.cost D (f o)) = (fun o => (amt D (blockAt (idx o) r.blocks) : R)) :=
    funext (cost_realizes h D)
  rw [e]
  exact hM

/-- A model on its own output type realises the request that releases it unchanged. -/
theorem realizes_self [Enum Om] [DecidableEq Om] {r : Request X Om R} {M : Mechanism X Om R}
    {idx : Om → Nat} (hM : r.M = M) (hb : ∀ o, r.block o = idx o) :
    Realizes r M (fun o => o) idx :=
  ⟨by rw [hM]; exact isPush_id M, hb⟩

/-! ### The Lemma 4 conjunct -/

/-- The rows a certificate records for a round of `r`, without the realised block (`mechOk`
reads only `supEps` and `δ`). -/
def _root_.Odp.Core.Request.rowEntry [Enum O] (r : Request X O R) : Entry :=
  { supEps := r.supEps, charged := 0, delta := r.delta }

/-- `mechOk` never reads the charge. -/
theorem mechOk_charged (e : Entry) (c : Nat) (bs : List Nat) (hb : Bool) (kind : Nat)
    (ps : List Nat) (gs : List StepGroup) :
    mechOk e bs hb kind ps gs = mechOk { e with charged := c } bs hb kind ps gs := rfl

/-- **The Lemma 4 conjunct of `Request.Honest`**: if `supEps` is the largest declared block and
every output's class is listed, every output's `blocks` row passes `blocksOk`. -/
theorem blocksOk_of_rows [Enum O] (r : Request X O R) (hsup : r.supEps = listMax r.blocks)
    (hrange : ∀ o, r.block o < listLen r.blocks) (o : O) :
    blocksOk (r.entry o) r.blocks (r.block o) = true := by
  show (decide (r.supEps = listMax r.blocks) && decide (r.block o < listLen r.blocks)
    && decide (blockAt (r.block o) r.blocks = blockAt (r.block o) r.blocks)) = true
  exact band_intro (band_intro (decide_eq_true hsup) (decide_eq_true (hrange o)))
    (decide_eq_true rfl)

/-- `Request.Honest` from its three parts. -/
theorem honest_of [Enum O] (Nbr : X → X → Prop) (D : Nat) (r : Request X O R)
    (hN : Nbr r.x₀ r.x₁) (hodp : ODPcost Nbr r.M (r.cost D) (amt D r.delta))
    (hsup : r.supEps = listMax r.blocks) (hrange : ∀ o, r.block o < listLen r.blocks) :
    r.Honest Nbr D :=
  ⟨hN, hodp, blocksOk_of_rows r hsup hrange⟩

/-- **What an accepted step says about its request**: a step that passes `stepRowsOk` and
records the round of `r` that released `o` (its row is `r.entry o`, its `blocks` row is `r`'s
blocks with the realised class) shows that `supEps` is the largest block, that `o`'s class is
listed, and that `r`'s declared rows pass the step's `mech` row. -/
theorem rows_of_step [Enum O] (r : Request X O R) (o : O) (c : CertStep)
    (he : c.entry = r.entry o) (hb : c.blocks = some (r.blocks, r.block o))
    (h : stepRowsOk c = true) :
    r.supEps = listMax r.blocks ∧ r.block o < listLen r.blocks ∧
      mechOk r.rowEntry r.blocks true c.mech.kind c.mech.params c.mech.groups = true := by
  have h1 := band_left (band_left (band_left h))
  have hm := stepRowsOk_mech h
  unfold stepMechOk at hm
  rw [hb] at h1 hm
  have h1' : blocksOk c.entry r.blocks (r.block o) = true := h1
  have hm' : mechOk c.entry r.blocks true c.mech.kind c.mech.params c.mech.groups = true := hm
  rw [he] at h1' hm'
  rw [mechOk_charged (r.entry o) 0] at hm'
  obtain ⟨s1, s2, _⟩ := blocksOk_sound h1'
  exact ⟨s1, s2, hm'⟩

/-! ### The `mech` rows: arity (each kind's row is read off in its own `Link.lean`) -/

theorem arity_params {ps : List Nat} {gs : List StepGroup} {n : Nat}
    (h : arity ps gs n = true) : listLen ps = n :=
  of_decide_eq_true (band_left h)

/-! ### One class costing `ε` (Lemma 3): DP charges, Laplace, Gaussian, RR, the median -/

/-- An `(ε, δ)`-DP model whose round lists one class costing `e` (`amt D e = ε`): by Lemma 3 it
is output-wise ODP with the cost of every output the first block and `δ` the round's. -/
theorem dp_model_odpCost [Enum Om] (Nbr : X → X → Prop) (D : Nat) (M : Mechanism X Om R)
    {e d : Nat} {bs : List Nat} (hbs : bs = [e]) (hdp : DP Nbr M (amt D e) (amt D d)) :
    ODPcost Nbr M (fun _ => amt D (blockAt 0 bs)) (amt D d) := by
  rw [hbs]
  exact odpCost_of_dp Nbr M (amt D e) (amt D d) hdp

/-- **Cost link, a user's DP charge**: one class, costing `supEps`. -/
theorem dp_cost_link (D : Nat) {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindDp ps gs = true) :
    listLen bs = 1 ∧ (amt D (blockAt 0 bs) : R) = amt D e.supEps := by
  rw [mechOk_dp h]
  exact ⟨rfl, rfl⟩

/-- **A user's DP charge** (`mech dp`, Lemma 3): the request releases `f` of a draw of a
mechanism `M` that is `(supEps/D, δ/D)`-DP — the user's claim about their own mechanism, a
hypothesis here (no noise model) — and its `mech` row passes (one class, costing `supEps`). -/
inductive DpBuiltin [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) : Prop
  | intro {Om : Type} [Enum Om] (M : Mechanism X Om R) (f : Om → O)
      (hreal : Realizes r M f (fun _ => 0))
      (hdp : DP Nbr M (amt D r.supEps) (amt D r.delta))
      (hrow : mechOk r.rowEntry r.blocks true kindDp [] [] = true)

/-- The ODP conjunct of `Request.Honest` for a user's DP charge. -/
theorem DpBuiltin.odpCost [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    {r : Request X O R} (h : DpBuiltin Nbr D r) : ODPcost Nbr r.M (r.cost D) (amt D r.delta) := by
  obtain ⟨M, f, hreal, hdp, hrow⟩ := h
  exact odp_of_realizes Nbr D hreal (dp_model_odpCost Nbr D M (mechOk_dp hrow) hdp)

/-! ### Lists of blocks -/

theorem blockAt_zero_cons (b : Nat) (bs : List Nat) : blockAt 0 (b :: bs) = b := rfl

theorem blockAt_succ_cons (k b : Nat) (bs : List Nat) : blockAt (k + 1) (b :: bs) = blockAt k bs :=
  rfl

theorem listLen_eq_length : ∀ l : List Nat, listLen l = l.length
  | [] => rfl
  | _ :: l => by
    show listLen l + 1 = l.length + 1
    rw [listLen_eq_length l]

/-- `blockAt i l` is the `i`-th element of `l`. -/
theorem blockAt_eq_get : ∀ (l : List Nat) (i : Nat) (h : i < l.length), blockAt i l = l.get ⟨i, h⟩
  | [], _, h => absurd h (Nat.not_lt_zero _)
  | _ :: _, 0, _ => rfl
  | _ :: l, i + 1, h => by
    rw [blockAt_succ_cons, blockAt_eq_get l i (by simp at h; omega)]
    rfl

end

end Odp.Certs.Link
