/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# The accountant's ledger rules are sound for Theorem 7

The accountant (Python: `odp.Accountant`) runs Alg. 1 on natural numbers in units of `1/D`
(`Odp.LedgerCore`). This file links those rules to the composition experiment:

* An analyst's `Strategy` is a tree of `Request`s: a mechanism with its declared ODP guarantee in
  ledger units (`supEps`, block costs `blocks`, the block index `block o` of each output, `δ_i`).
* `enforce D s A` is what the accountant does with it: a request is run only if its declared
  `sup ℰ` and `δ_i` fit the remaining budget (`Request.admitted`, Alg. 1 line 4); after output `o`
  it writes the row `r.entry o` and continues from `update s (r.entry o)` (lines 7–8).
* `enforce_valid`: if every request's declared guarantee is true (`Strategy.AllHonest`: the ODP
  claim, and the Lemma 4 row `blocksOk` of the certificate), the enforced experiment satisfies
  Alg. 1's validity condition for the budget `(s.eps / D, s.delta / D)`; so Theorem 7 applies
  (`accountant_composition`).
* `certificate_sound`: a certificate whose rows `replay` accepts lists exactly the rows the
  accountant writes along that run (every round on it was admitted), spends at most the budget,
  and the run is a run of an experiment that Theorem 7 covers (for honest requests: the DP
  conclusion is `accountant_composition`, which the certificate does not add to).
* `checkCert_certificate_sound`: the same for a certificate the kernel accepted with
  `checkCert` (what `odp verify --kernel` decides), whose Lemma 4, Lemma 6 and refund rows then
  hold as well.

What is taken on trust is exactly `Request.Honest`: that each mechanism's declared ODP guarantee
holds (the per-mechanism lemmas of Hartmann et al. 2022, tested on the Python side) and that the realised block is
reported truthfully.
-/
module

public import Odp.Core.Composition
public import Odp.LedgerCore

@[expose] public section

set_option autoImplicit false

namespace Odp.Core

noncomputable section

open ExpField
open Odp.LedgerCore

variable {R X O : Type} [ExpField R] [Enum O]

/-- A request to the accountant: a mechanism and its declared ODP guarantee, in units of `1/D`. -/
structure Request (X O R : Type) [ExpField R] [Enum O] where
  x₀ : X
  x₁ : X
  M : Mechanism X O R
  /-- the declared `sup_k ℰ(P_k)` -/
  supEps : Nat
  /-- the block costs `ℰ(P_1), …, ℰ(P_m)` -/
  blocks : List Nat
  /-- the index of the block that contains an output -/
  block : O → Nat
  /-- `δ_i` -/
  delta : Nat

namespace Request

/-- The ledger row written when the request releases `o`. -/
def entry (r : Request X O R) (o : O) : Entry :=
  { supEps := r.supEps, charged := blockAt (r.block o) r.blocks, delta := r.delta }

/-- The declared cost of output `o`, as an element of `R`. -/
def cost (D : Nat) (r : Request X O R) (o : O) : R := amt D (blockAt (r.block o) r.blocks)

/-- The request as a round of Alg. 1. -/
def toChoice (D : Nat) (r : Request X O R) : Choice X O R :=
  { x₀ := r.x₀, x₁ := r.x₁, M := r.M, cost := r.cost D, delta := amt D r.delta }

/-- What the accountant takes on trust about a request: the databases are neighbours, the
mechanism's declared ODP guarantee is true, and its declared blocks pass the certificate's Lemma 4
row (`supEps` is the largest block cost, the realised block exists, the charge is its cost). -/
def Honest (Nbr : X → X → Prop) (D : Nat) (r : Request X O R) : Prop :=
  Nbr r.x₀ r.x₁ ∧ ODPcost Nbr r.M (r.cost D) (amt D r.delta) ∧
    ∀ o, blocksOk (r.entry o) r.blocks (r.block o) = true

/-- Admission before any noise is drawn (Alg. 1, line 4): the declared `sup ℰ` and `δ_i` fit. -/
def admitted (s : State) (r : Request X O R) : Bool :=
  decide (r.supEps ≤ s.eps) && decide (r.delta ≤ s.delta)

theorem admitted_iff (s : State) (r : Request X O R) :
    r.admitted s = true ↔ (r.supEps ≤ s.eps ∧ r.delta ≤ s.delta) := by
  unfold admitted
  simp

/-- A row that `admits` accepts was admitted. -/
theorem admitted_of_admits {s : State} {r : Request X O R} {o : O}
    (h : admits s (r.entry o) = true) : r.admitted s = true := by
  obtain ⟨_, h2, h3⟩ := (admits_iff s (r.entry o)).mp h
  exact (admitted_iff s r).mpr ⟨h2, h3⟩

/-- For an honest request, admission makes every possible row acceptable to `admits`. -/
theorem admits_of_admitted {Nbr : X → X → Prop} {D : Nat} {s : State} {r : Request X O R}
    (hh : r.Honest Nbr D) (ha : r.admitted s = true) (o : O) : admits s (r.entry o) = true := by
  obtain ⟨h2, h3⟩ := (admitted_iff s r).mp ha
  have hb := (blocksOk_bound (hh.2.2 o)).2
  exact (admits_iff s (r.entry o)).mpr ⟨hb, h2, h3⟩

end Request

/-- An analyst's adaptive strategy: which request to make next, given the outputs so far. -/
inductive Strategy (X O R : Type) [ExpField R] [Enum O] : Type where
  | stop : Strategy X O R
  | ask (r : Request X O R) (cont : O → Strategy X O R) : Strategy X O R

namespace Strategy

/-- Every request the strategy can make is honest. -/
def AllHonest (Nbr : X → X → Prop) (D : Nat) : Strategy X O R → Prop
  | .stop => True
  | .ask r cont => r.Honest Nbr D ∧ ∀ o, AllHonest Nbr D (cont o)

/-- The rows a run with outputs `os` would record if every request were admitted (the rows a
certificate lists). -/
def rowsAlong : Strategy X O R → List O → List Entry
  | .stop, _ => []
  | .ask _ _, [] => []
  | .ask r cont, o :: os => r.entry o :: rowsAlong (cont o) os

end Strategy

/-- The accountant running a strategy from the remaining budget `s`: a request that is not
admitted ends the run (it is refused before any noise is drawn). -/
def enforce (D : Nat) : State → Strategy X O R → Adv X O R
  | _, .stop => .leaf
  | s, .ask r cont =>
      if r.admitted s then
        .node (r.toChoice D) (fun o => enforce D (update s (r.entry o)) (cont o))
      else .leaf

/-- The rows the accountant writes along the outputs `os`. -/
def runRows : State → Strategy X O R → List O → List Entry
  | _, .stop, _ => []
  | _, .ask _ _, [] => []
  | s, .ask r cont, o :: os =>
      if r.admitted s then r.entry o :: runRows (update s (r.entry o)) (cont o) os else []

theorem enforce_stop (D : Nat) (s : State) : enforce D s (.stop : Strategy X O R) = .leaf := rfl

theorem enforce_ask_pos (D : Nat) (s : State) (r : Request X O R) (cont : O → Strategy X O R)
    (h : r.admitted s = true) :
    enforce D s (.ask r cont)
      = .node (r.toChoice D) (fun o => enforce D (update s (r.entry o)) (cont o)) := by
  show (if r.admitted s then _ else _) = _
  rw [if_pos h]

theorem enforce_ask_neg (D : Nat) (s : State) (r : Request X O R) (cont : O → Strategy X O R)
    (h : ¬ r.admitted s = true) : enforce D s (.ask r cont) = .leaf := by
  show (if r.admitted s then _ else _) = _
  rw [if_neg h]

/-- **The accountant enforces Alg. 1's validity condition**: with honest requests, the enforced
experiment is valid for the budget `(s.eps / D, s.delta / D)`. -/
theorem enforce_valid (Nbr : X → X → Prop) (D : Nat) (hD : 0 < D) (A : Strategy X O R) :
    ∀ s : State, A.AllHonest Nbr D →
      (enforce D s A).Valid Nbr (amt D s.eps) (amt D s.delta) := by
  induction A with
  | stop => intro s _; rw [enforce_stop]; exact trivial
  | ask r cont ih =>
    intro s hh
    obtain ⟨hr, hc⟩ := hh
    by_cases ha : r.admitted s = true
    · rw [enforce_ask_pos D s r cont ha]
      obtain ⟨hse, hsd⟩ := (Request.admitted_iff s r).mp ha
      have hcharge : ∀ o, blockAt (r.block o) r.blocks ≤ s.eps := by
        intro o
        have := (blocksOk_bound (hr.2.2 o)).2
        exact Nat.le_trans this hse
      refine ⟨hr.1, hr.2.1, ?_, amt_le hD hsd, ?_⟩
      · intro o
        exact amt_le hD (hcharge o)
      · intro o
        have h := ih o (update s (r.entry o)) (hc o)
        have e1 : (amt D (update s (r.entry o)).eps : R) = amt D s.eps - r.cost D o := by
          rw [update_eps]
          exact amt_sub D (hcharge o)
        have e2 : (amt D (update s (r.entry o)).delta : R) = amt D s.delta - amt D r.delta := by
          rw [update_delta]
          exact amt_sub D hsd
        rw [e1, e2] at h
        exact h
    · rw [enforce_ask_neg D s r cont ha]
      exact trivial

/-- **Theorem 7 for the accountant.** Every strategy of honest requests, run by the accountant
from the budget `(ε_t, δ_t) = (s.eps / D, s.delta / D)`, is `(ε_t, δ_t)`-DP as a whole: for every
set of views `V`, `Pr(V⁰ ∈ V) ≤ e^{ε_t} Pr(V¹ ∈ V) + δ_t`. -/
theorem accountant_composition (Nbr : X → X → Prop) (D : Nat) (hD : 0 < D)
    (A : Strategy X O R) (s : State) (hh : A.AllHonest Nbr D) (V : List O → Bool) :
    (enforce D s A).prob false V
      ≤ exp (amt D s.eps) * (enforce D s A).prob true V + amt D s.delta :=
  odp_composition Nbr (enforce D s A) (amt D s.eps) (amt D s.delta) (amt_nonneg hD _)
    (amt_nonneg hD _) (enforce_valid Nbr D hD A s hh) V

/-- A certificate that `replay` accepts lists exactly the rows the accountant writes along that
run: every round on it was admitted. -/
theorem runRows_of_replay (A : Strategy X O R) :
    ∀ (s t : State) (os : List O), replay s (A.rowsAlong os) = some t →
      runRows s A os = A.rowsAlong os := by
  induction A with
  | stop => intro s t os _; cases os <;> rfl
  | ask r cont ih =>
    intro s t os h
    cases os with
    | nil => rfl
    | cons o os =>
      have h' : replay s (r.entry o :: (cont o).rowsAlong os) = some t := h
      rw [replay_cons] at h'
      by_cases ha : admits s (r.entry o) = true
      · rw [if_pos ha] at h'
        have hadm := Request.admitted_of_admits ha
        show (if r.admitted s then r.entry o :: runRows (update s (r.entry o)) (cont o) os
          else []) = r.entry o :: (cont o).rowsAlong os
        rw [if_pos hadm, ih o (update s (r.entry o)) t os h']
      · rw [if_neg ha] at h'
        cases h'

/-- The accountant's own rows always replay (for honest requests). -/
theorem replay_runRows (Nbr : X → X → Prop) (D : Nat) (A : Strategy X O R) :
    ∀ (s : State) (os : List O), A.AllHonest Nbr D → ∃ t, replay s (runRows s A os) = some t := by
  induction A with
  | stop => intro s os _; exact ⟨s, by cases os <;> rfl⟩
  | ask r cont ih =>
    intro s os hh
    cases os with
    | nil => exact ⟨s, rfl⟩
    | cons o os =>
      by_cases ha : r.admitted s = true
      · have e : runRows s (.ask r cont) (o :: os)
            = r.entry o :: runRows (update s (r.entry o)) (cont o) os := by
          show (if r.admitted s then _ else _) = _
          rw [if_pos ha]
        rw [e, replay_cons, if_pos (Request.admits_of_admitted hh.1 ha o)]
        exact ih o (update s (r.entry o)) os (hh.2 o)
      · have e : runRows s (.ask r cont) (o :: os) = [] := by
          show (if r.admitted s then _ else _) = _
          rw [if_neg ha]
        rw [e]
        exact ⟨s, rfl⟩

/-- **Certificate soundness.** If `replay` accepts the rows of a run (outputs `os`) from the
budget `s`, then (1) they are exactly the rows the accountant writes along that run, (2) the
total charge and the total `δ` fit in the budget, and (3) the experiment the accountant ran is
`(s.eps / D, s.delta / D)`-DP by Theorem 7 (for honest requests). -/
theorem certificate_sound (Nbr : X → X → Prop) (D : Nat) (hD : 0 < D) (A : Strategy X O R)
    (s t : State) (os : List O) (hh : A.AllHonest Nbr D)
    (hrep : replay s (A.rowsAlong os) = some t) :
    runRows s A os = A.rowsAlong os ∧
      totalCharged (A.rowsAlong os) ≤ s.eps ∧ totalDelta (A.rowsAlong os) ≤ s.delta ∧
      ∀ V : List O → Bool,
        (enforce D s A).prob false V
          ≤ exp (amt D s.eps) * (enforce D s A).prob true V + amt D s.delta := by
  obtain ⟨h1, h2, _, _⟩ := replay_sound (A.rowsAlong os) s t hrep
  exact ⟨runRows_of_replay A s t os hrep, h1, h2, accountant_composition Nbr D hD A s hh⟩

/-- **What `odp verify --kernel` decides, read through Theorem 7.** If the kernel accepts a
certificate (`checkCert s cs = some t`) whose rows are those of a run (outputs `os`) of a strategy
of honest requests, then every step's Lemma 4, Lemma 6 and refund rows hold, the rows are exactly
the ones the accountant writes along that run, they fit in the budget, and the accountant's
experiment is `(s.eps / D, s.delta / D)`-DP (Theorem 7).  The DP conclusion rests on the
requests being honest (`Request.Honest`), which no certificate can show; the certificate adds
that its rows are the accountant's own and fit the budget. -/
theorem checkCert_certificate_sound (Nbr : X → X → Prop) (D : Nat) (hD : 0 < D)
    (A : Strategy X O R) (s t : State) (os : List O) (cs : List CertStep)
    (hh : A.AllHonest Nbr D) (hcert : checkCert s cs = some t)
    (hrows : cs.map CertStep.entry = A.rowsAlong os) :
    (∀ c ∈ cs, stepRowsOk c = true) ∧ runRows s A os = A.rowsAlong os ∧
      totalCharged (A.rowsAlong os) ≤ s.eps ∧ totalDelta (A.rowsAlong os) ≤ s.delta ∧
      ∀ V : List O → Bool,
        (enforce D s A).prob false V
          ≤ exp (amt D s.eps) * (enforce D s A).prob true V + amt D s.delta := by
  obtain ⟨hrep, hok⟩ := checkCert_sound cs s t hcert
  rw [hrows] at hrep
  exact ⟨hok, certificate_sound Nbr D hD A s t os hh hrep⟩

end

end Odp.Core
