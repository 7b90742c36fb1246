/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Certificates of runs of built-in mechanisms certify DP from the mechanisms' hypotheses

Two halves of odp's Lean specification met only through a premise:

* the certificate side — `Odp.LedgerCore.checkCert` (what `odp verify --kernel` has the kernel
  decide) checks per round a `mech` row: the round's classes, costs and `δ` are those of a named
  built-in mechanism at its recorded parameters (`mechOk`, natural numbers in units of `1/D`);
  `Odp.Core.checkCert_certificate_sound` turns an accepted certificate into Theorem 7 for the run,
  **given** that every request is honest (`Request.Honest`: neighbours, the declared ODP guarantee,
  the Lemma 4 row);
* the mechanism side — `Odp/Mech` proves each built-in mechanism's ODP guarantee over any
  `ExpField`, with real-valued cost functions, from stated noise hypotheses.

The links close the gap: `Odp/Certs/LinkCore.lean` (what does not depend on a mechanism), one
`Link.lean` in each mechanism's folder (`Odp/Mech/Toy/Link.lean`, `Odp/Mech/Laplace/Link.lean`,
`Odp/Mech/Gaussian/Link.lean`, `Odp/Mech/RandomizedResponse/Link.lean`, `Odp/Mech/SVT/Link.lean`,
`Odp/Mech/PTR/Link.lean`, `Odp/Mech/TestRelease/Link.lean`, `Odp/Mech/Iterative/Link.lean`), and
this file.

* **Cost links** (one per kind, in the kind's `Link.lean`): for every kind below, if `mechOk` accepts
  a round's rows with parameters `ps`, its blocks read with `amt D` are the Mech cost function at
  the parameters read with `amt D`, in the certificate's class order, and its `δ` is the
  mechanism's (`≥` it for Lemma 11 with any COMP).
* **Honesty from the proofs** (`ToyBuiltin.odpCost`, …, `toy_honest`, …): a request that releases
  the output of the Lean model of a built-in mechanism (possibly relabelled into the run's output
  type, `IsPush`), labelled by the model's partition, whose rows pass `mechOk` with the model's
  parameters, satisfies the ODP conjunct of `Request.Honest` from the Mech theorem and the
  mechanism's hypotheses; the Lemma 4 conjunct follows from `supEps` being the largest block and
  every output's class being listed (`blocksOk_of_rows`).
* **This file**: `BuiltinRequest` (one of the kinds below), `Strategy.AllBuiltin` (every request
  an analyst's strategy can make is a built-in request between neighbours, with `supEps` the
  largest block and every output's class listed), `allHonest_of_allBuiltin`, and the capstone
  **`certificate_sound_builtin`**: the conclusion of `Odp.Core.checkCert_certificate_sound` —
  every row check holds, the rows are the accountant's, they fit the budget, and the run is
  `(ε_t, δ_t)`-DP (Theorem 7) — with the ODP conjunct of the honesty premise derived from the
  `Odp/Mech` theorems; the neighbour pair and the Lemma 4 facts (`supEps` the largest block,
  every output's class listed) remain premises, for every request the strategy can make.
  `toy_in_sum_honest`: a worked request whose M_toy model is injected into a larger output type.
  **The capstone does not read the certificate's `mech` or `blocks` rows**: `mechOk` of each
  request's declared rows is part of `Strategy.AllBuiltin`. `Odp/Certs/Witness.lean` shows the
  hypotheses hold together for a closed run, and that a certificate of the same run with every
  round recorded as `declared` is accepted with the same conclusion.
* **Statements**: `Odp/Certs/Spec.lean` writes out the capstone, `accountant_composition_builtin`,
  the definitions above and, per kind, what suffices for a built-in request, each proved by `@`
  the theorem or constructor as is; `scripts/lean/pinned.txt` pins the capstones' axioms.

**Kinds linked** (all with a `blocks` row, as odp writes every built-in round): `dp` (a user's DP
charge: its hypothesis is the user's claim that their mechanism is DP), `toy`, `laplace`,
`gaussian`, `rr`, `svt`, `ptr`, `iqr`, `test_release`, `median`, `iter` (Lemma 11 with basic
composition), `lemma11` (Lemma 11 with any COMP). **Not linked**: `declared` (a user's own
guarantee), `erm` (Alg. 4's DP is a stated hypothesis in `Odp/Mech`, not proved), `iter_costs`
(OptDel's `δ`, Theorem 15, is not proved).

**What remains assumed**, per request (carried by `Strategy.AllBuiltin`): the two databases are
neighbours, and the neighbour relation bounds the mechanism's sensitivity (queries move by at most
`m` grid units, `trNbr` for test-and-release); each request's declared `supEps`, blocks and `δ`
pass `mechOk` for its kind at the model's parameters; the release is the Lean model's law (odp's Python
samplers and mechanisms are not proved to compute it); the noise hypotheses of the trust boundary
where a kind has them (`svt`: `LapNoise`, `LapTail`; `gaussian`: `GaussNoise`; `test_release`:
`TailNoise`; `toy`, `laplace`, `rr`, `median` and `iqr` have none — their laws are written out —
and `iqr` keeps the pass tail `Pr(Z ≥ K) ≤ δ/2`), the stated data facts (`IQRDataFacts`, `ERMRelease`, `TestSensitivity`,
`UtilitySensitivity`), Definition 9 for a PTR function, `StepsDP`/`PrefixDP` for iterative
mechanisms (with `δ^{k_i}` computed by tested Python code for non-basic COMPs), and a DP charge's
DP; `supEps` is the largest declared block, and every output is labelled with a listed class
(`rows_of_step` shows these for a step whose `blocks` row is the request's; the capstone does not
use it and assumes them for every request).
-/
module

public import Odp.Mech.Toy.Link
public import Odp.Mech.Laplace.Link
public import Odp.Mech.Gaussian.Link
public import Odp.Mech.RandomizedResponse.Link
public import Odp.Mech.SVT.Link
public import Odp.Mech.PTR.Link
public import Odp.Mech.TestRelease.Link
public import Odp.Mech.Iterative.Link

@[expose] public section

set_option autoImplicit false

namespace Odp.Certs

open Odp.Core Odp.Core.ExpField Odp.LedgerCore Odp.Certs.Link

noncomputable section

variable {R X O : Type} [ExpField R] [Enum O] [DecidableEq O]

/-- The request is a round of a built-in mechanism whose guarantee `Odp/Mech` proves, with the
mechanism's hypotheses, its output relabelled into the run's output type, labelled by the
model's partition, and rows passing `mechOk` for that kind with the model's parameters. -/
def BuiltinRequest (Nbr : X → X → Prop) (D : Nat) (r : Request X O R) : Prop :=
  DpBuiltin Nbr D r ∨ ToyBuiltin Nbr D r ∨ LaplaceBuiltin Nbr D r ∨ GaussianBuiltin Nbr D r ∨
    RrBuiltin Nbr D r ∨ SvtBuiltin Nbr D r ∨ PtrBuiltin Nbr D r ∨ IqrBuiltin Nbr D r ∨
    TestReleaseBuiltin Nbr D r ∨ MedianBuiltin Nbr D r ∨ IterBuiltin Nbr D r ∨
    Lemma11Builtin Nbr D r

/-- **Honesty (ODP conjunct) of every built-in request**. -/
theorem builtin_odpCost {Nbr : X → X → Prop} {D : Nat} (hD : 0 < D) {r : Request X O R}
    (h : BuiltinRequest Nbr D r) : ODPcost Nbr r.M (r.cost D) (amt D r.delta) := by
  rcases h with h | h | h | h | h | h | h | h | h | h | h | h
  · exact h.odpCost
  · exact h.odpCost
  · exact h.odpCost
  · exact h.odpCost
  · exact h.odpCost hD
  · exact h.odpCost
  · exact h.odpCost hD
  · exact h.odpCost hD
  · exact h.odpCost hD
  · exact h.odpCost hD
  · exact h.odpCost hD
  · exact h.odpCost hD

/-- What a strategy's request must be: a built-in request between neighbours, `supEps` the
largest declared block, every output's class listed. -/
def BuiltinOk (Nbr : X → X → Prop) (D : Nat) (r : Request X O R) : Prop :=
  Nbr r.x₀ r.x₁ ∧ BuiltinRequest Nbr D r ∧ r.supEps = listMax r.blocks ∧
    ∀ o, r.block o < listLen r.blocks

theorem honest_of_builtinOk {Nbr : X → X → Prop} {D : Nat} (hD : 0 < D) {r : Request X O R}
    (h : BuiltinOk Nbr D r) : r.Honest Nbr D :=
  honest_of Nbr D r h.1 (builtin_odpCost hD h.2.1) h.2.2.1 h.2.2.2

end

end Odp.Certs

namespace Odp.Core.Strategy

variable {R X O : Type} [ExpField R] [Enum O] [DecidableEq O]

/-- Every request the strategy can make is a built-in one (`Odp.Certs.BuiltinOk`). -/
def AllBuiltin (Nbr : X → X → Prop) (D : Nat) : Strategy X O R → Prop
  | .stop => True
  | .ask r cont => Odp.Certs.BuiltinOk Nbr D r ∧ ∀ o, AllBuiltin Nbr D (cont o)

end Odp.Core.Strategy

namespace Odp.Certs

open Odp.Core Odp.Core.ExpField Odp.LedgerCore Odp.Certs.Link

noncomputable section

variable {R X O : Type} [ExpField R] [Enum O] [DecidableEq O]

/-- **Built-in requests are honest**: the premise of the ledger's soundness theorems follows from
the mechanisms' hypotheses. -/
theorem allHonest_of_allBuiltin {Nbr : X → X → Prop} {D : Nat} (hD : 0 < D) :
    ∀ A : Strategy X O R, A.AllBuiltin Nbr D → A.AllHonest Nbr D
  | .stop, _ => trivial
  | .ask _ cont, h => ⟨honest_of_builtinOk hD h.1,
      fun o => allHonest_of_allBuiltin hD (cont o) (h.2 o)⟩

/-- **Capstone: a run of built-in mechanisms is `(ε_t, δ_t)`-DP from the mechanisms' hypotheses,
and a kernel-accepted certificate of it lists the accountant's rows.** If every request of the analyst's strategy is a
built-in request (`Strategy.AllBuiltin`: neighbours, the Lean model with its noise hypotheses and
stated data facts, rows passing `mechOk`, `supEps` the largest block, every class listed) and the
kernel accepts a certificate (`checkCert s cs = some t`) whose rows are those of a run (outputs
`os`), then every step's rows hold, the rows are exactly the accountant's along that run, they
fit the budget, and the accountant's experiment is `(s.eps / D, s.delta / D)`-DP (Theorem 7). -/
theorem certificate_sound_builtin (Nbr : X → X → Prop) (D : Nat) (hD : 0 < D)
    (A : Strategy X O R) (s t : State) (os : List O) (cs : List CertStep)
    (hb : A.AllBuiltin Nbr D) (hcert : checkCert s cs = some t)
    (hrows : cs.map CertStep.entry = A.rowsAlong os) :
    (∀ c ∈ cs, stepRowsOk c = true) ∧ runRows s A os = A.rowsAlong os ∧
      totalCharged (A.rowsAlong os) ≤ s.eps ∧ totalDelta (A.rowsAlong os) ≤ s.delta ∧
      ∀ V : List O → Bool,
        (enforce D s A).prob false V
          ≤ exp (amt D s.eps) * (enforce D s A).prob true V + amt D s.delta :=
  checkCert_certificate_sound Nbr D hD A s t os cs (allHonest_of_allBuiltin hD A hb) hcert hrows

/-- Theorem 7 for the accountant running built-in mechanisms (no certificate needed). -/
theorem accountant_composition_builtin (Nbr : X → X → Prop) (D : Nat) (hD : 0 < D)
    (A : Strategy X O R) (s : State) (hb : A.AllBuiltin Nbr D) (V : List O → Bool) :
    (enforce D s A).prob false V
      ≤ exp (amt D s.eps) * (enforce D s A).prob true V + amt D s.delta :=
  accountant_composition Nbr D hD A s (allHonest_of_allBuiltin hD A hb) V

end

/-! ### A worked injection: M_toy in a run whose outputs are `Option (Window lo hi) ⊕ Answers N` -/

section Worked

open Odp.Mech

variable {R X : Type} [ExpField R]

/-- **M_toy injected into a larger output type** (a run that mixes M_toy and SVT answers): a
request whose mechanism is `Sum.inl` of M_toy (`postProcess`), labelling `inl v` by `v`'s M_toy
class, whose rows pass `mech toy` with `ε`, with `supEps` the largest block and every output's
class listed, between neighbours, is honest. -/
theorem toy_in_sum_honest (Nbr : X → X → Prop) (D e m : Nat) (hm : 0 < m)
    (hε : (0 : R) ≤ amt D e) (n : X → Int)
    (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi)
    (N : Nat) (r : Request X (Option (Window lo hi) ⊕ Answers N) R)
    (hM : r.M = postProcess Sum.inl (toyMech m (amt D e) hε n lo hi hlh))
    (hb : ∀ v, r.block (Sum.inl v) = toyIndex (toyBlock v))
    (hrow : mechOk r.rowEntry r.blocks true kindToy [e] [] = true)
    (hsup : r.supEps = listMax r.blocks) (hrange : ∀ o, r.block o < listLen r.blocks)
    (hN : Nbr r.x₀ r.x₁) : r.Honest Nbr D := by
  have hpush : IsPush Sum.inl (toyMech m (amt D e) hε n lo hi hlh) r.M := by
    rw [hM]
    intro x o'
    rfl
  exact honest_of Nbr D r hN
    (ToyBuiltin.odpCost (ToyBuiltin.intro e m hm hε n hn lo hi hlh Sum.inl ⟨hpush, hb⟩ hrow))
    hsup hrange

end Worked

end Odp.Certs
