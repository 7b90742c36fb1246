/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Certificates of runs of built-in mechanisms, stated in full

Hartmann, Bindschaedler, Bentkamp, West 2022 (*Privacy accounting εconomics*, PoPETs):
Theorem 7 (Alg. 1) for the accountant's ledger, with the honesty of each request (its declared ODP guarantee, Definition 2,
and its Lemma 4 row) derived from the mechanisms' proofs in `Odp/Mech` instead of assumed.

Each `example` below writes out in full one result of the links (`Odp/Certs/LinkCore.lean`, the
`Link.lean` of each mechanism's folder under `Odp/Mech`, `Odp/Certs/Link.lean`) — every hypothesis
and the whole conclusion — and proves it by `@` the theorem that carries it, as is. A theorem
that is weakened (a hypothesis added or strengthened, a conclusion narrowed) no longer proves its
example, and this file fails to compile.

* §1 the capstone `certificate_sound_builtin` (a kernel-accepted certificate, `checkCert`, of a
  run whose requests are all built-in: every row check holds, the rows are the accountant's,
  they fit the budget, and the run is `(ε_t, δ_t)`-DP) and `accountant_composition_builtin`;
* §2 what "built-in" means, pinned by `rfl`: `Strategy.AllBuiltin`, `BuiltinOk`,
  `BuiltinRequest` (one of twelve kinds), `Realizes`, `IsPush`;
* §3 for each kind, what suffices for a request to be a built-in request of that kind (the
  constructor of its predicate, written out): the Lean model of the mechanism (`toyMech`,
  `laplaceMech`, …, from `Odp/Mech`) with its noise hypotheses and stated data facts, relabelled
  into the run's output type, labelled by the model's partition, with rows passing `mechOk`
  (`Odp/LedgerCore.lean`, what `odp verify --kernel` has the kernel decide) for that kind at the
  model's parameters in units of `1/D`;
* §4 for each kind, its cost link (`dp_cost_link`, `toy_cost_link`, …, `lemma11_cost_link`):
  what an accepted `mech` row of that kind says about the round's blocks read in units of `1/D`
  (`amt D`) and its `δ` — the model's cost function of `Odp/Mech` (`toyCosts`, `svtCosts`,
  `ptrCosts`, `iterCosts`, …) at the row's parameters, in the certificate's class order.

* §5 each kind's case analysis (its constructor is the only one), the certificate's class orders;
* §6 `mechOk` and every function it calls, written out.

The hypotheses named here (`LapNoise`, `GaussNoise`, `LapTail`, `TailNoise`,
`IQRDataFacts`, `ERMRelease`, `TestSensitivity`, `UtilitySensitivity`, `StepsDP`, `PrefixDP`,
`IsPTRFunction`) are those of `Odp/Mech` (the trust boundary `Odp/Mech/Common/Noise.lean`;
`IsPTRFunction`, Definition 9, in `Odp/Mech/PTR/Privacy.lean`; their statements are pinned by
`Odp/Mech/Spec.lean`). The capstone does not read the certificate's `mech` or `blocks` rows:
`mechOk` of each request's declared rows is part of `Strategy.AllBuiltin`
(`Odp/Certs/Witness.lean` shows a certificate of the same run with every round `declared` is
accepted with the same conclusion). The kinds `declared`, `erm` and `iter_costs` are
not linked (see the header of `Odp/Certs/Link.lean`).
-/
module

public import Odp.Certs.Link

@[expose] public section

set_option autoImplicit false

namespace OdpSpec.Certs

open Odp.Core Odp.Core.ExpField Odp.LedgerCore Odp.Mech Odp.Mech.Iter Odp.Certs Odp.Certs.Link

/-! ## §1 The capstone -/

/-- **A run of built-in mechanisms is `(ε_t, δ_t)`-DP (Theorem 7) from the mechanisms'
hypotheses, and a kernel-accepted certificate of it lists the accountant's rows.** For a strategy all of whose requests are built-in
(`Strategy.AllBuiltin`, §2–§3), a certificate the kernel accepts (`checkCert s cs = some t`) whose
rows are those of the run with outputs `os`: every step's row checks hold, the rows are exactly
the accountant's along that run, their charges and `δ`s fit the budget `s`, and the accountant's
experiment (`enforce`) is `(s.eps / D, s.delta / D)`-DP. -/
example : ∀ {R X O : Type} [ExpField R] [Enum O] [DecidableEq O]
    (Nbr : X → X → Prop) (D : Nat), 0 < D →
    ∀ (A : Strategy X O R) (s t : State) (os : List O) (cs : List CertStep),
    A.AllBuiltin Nbr D → checkCert s cs = some t → cs.map CertStep.entry = A.rowsAlong os →
      (∀ c ∈ cs, stepRowsOk c = true) ∧ runRows s A os = A.rowsAlong os ∧
        totalCharged (A.rowsAlong os) ≤ s.eps ∧ totalDelta (A.rowsAlong os) ≤ s.delta ∧
        ∀ V : List O → Bool,
          (enforce D s A).prob false V
            ≤ exp (amt D s.eps) * (enforce D s A).prob true V + amt D s.delta :=
  @Odp.Certs.certificate_sound_builtin

/-- **Theorem 7 for the accountant running built-in mechanisms** (no certificate). -/
example : ∀ {R X O : Type} [ExpField R] [Enum O] [DecidableEq O]
    (Nbr : X → X → Prop) (D : Nat), 0 < D →
    ∀ (A : Strategy X O R) (s : State), A.AllBuiltin Nbr D → ∀ V : List O → Bool,
      (enforce D s A).prob false V
        ≤ exp (amt D s.eps) * (enforce D s A).prob true V + amt D s.delta :=
  @Odp.Certs.accountant_composition_builtin

/-- Built-in requests are honest (`Request.Honest`: neighbours, the declared ODP guarantee, the
Lemma 4 row), the premise of `Odp.Core.checkCert_certificate_sound`. -/
example : ∀ {R X O : Type} [ExpField R] [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat},
    0 < D → ∀ A : Strategy X O R, A.AllBuiltin Nbr D → A.AllHonest Nbr D :=
  @Odp.Certs.allHonest_of_allBuiltin

/-! ## §2 What a built-in request is -/

/-- Every request the strategy can make is a built-in one. -/
example {R X O : Type} [ExpField R] [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) (cont : O → Strategy X O R) :
    (Strategy.stop : Strategy X O R).AllBuiltin Nbr D = True ∧
      (Strategy.ask r cont).AllBuiltin Nbr D =
        (BuiltinOk Nbr D r ∧ ∀ o, (cont o).AllBuiltin Nbr D) :=
  ⟨rfl, rfl⟩

/-- A built-in request: between neighbours, of one of the kinds, `supEps` the largest declared
block, every output's class listed. -/
example {R X O : Type} [ExpField R] [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) :
    BuiltinOk Nbr D r = (Nbr r.x₀ r.x₁ ∧ BuiltinRequest Nbr D r ∧ r.supEps = listMax r.blocks ∧
      ∀ o, r.block o < listLen r.blocks) :=
  rfl

/-- The twelve kinds linked (§3). -/
example {R X O : Type} [ExpField R] [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) :
    BuiltinRequest Nbr D r = (DpBuiltin Nbr D r ∨ ToyBuiltin Nbr D r ∨ LaplaceBuiltin Nbr D r ∨
      GaussianBuiltin Nbr D r ∨ RrBuiltin Nbr D r ∨ SvtBuiltin Nbr D r ∨ PtrBuiltin Nbr D r ∨
      IqrBuiltin Nbr D r ∨ TestReleaseBuiltin Nbr D r ∨ MedianBuiltin Nbr D r ∨
      IterBuiltin Nbr D r ∨ Lemma11Builtin Nbr D r) :=
  rfl

/-- `M'` is the law of `f` of a draw of `M` (post-processing by a relabelling). -/
example {R X O Om : Type} [ExpField R] [Enum Om] [Enum O] [DecidableEq O] (f : Om → O)
    (M : Mechanism X Om R) (M' : Mechanism X O R) :
    IsPush f M M' = ∀ x o', (M' x).mass o' = fsum (fun o => if f o = o' then (M x).mass o else 0) :=
  rfl

/-- The request releases `f` of a draw of the model `M` and labels `f o` with the model's class
index `idx o` (the position of `o`'s class in the certificate's class order). -/
example {R X O Om : Type} [ExpField R] [Enum O] [DecidableEq O] [Enum Om] (r : Request X O R)
    (M : Mechanism X Om R) (f : Om → O) (idx : Om → Nat) :
    Realizes r M f idx ↔ (IsPush f M r.M ∧ ∀ o, r.block (f o) = idx o) :=
  ⟨fun h => ⟨h.push, h.label⟩, fun h => ⟨h.1, h.2⟩⟩

/-- The rows `mechOk` reads: the request's declared `supEps` and `δ`. -/
example {R X O : Type} [ExpField R] [Enum O] (r : Request X O R) :
    r.rowEntry = { supEps := r.supEps, charged := 0, delta := r.delta } :=
  rfl

/-! ## §3 What suffices, per kind -/

/-- **`dp`**: a user's DP charge — any mechanism that is `(supEps/D, δ/D)`-DP (Lemma 3), one
class. Rests on: the user's claim that their mechanism is DP. -/
example : ∀ {R X O : Type} [ExpField R] [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    {r : Request X O R} {Om : Type} [Enum Om] (M : Mechanism X Om R) (f : Om → O),
    Realizes r M f (fun _ => 0) → DP Nbr M (amt D r.supEps) (amt D r.delta) →
    mechOk r.rowEntry r.blocks true kindDp [] [] = true → DpBuiltin Nbr D r :=
  @DpBuiltin.intro

/-- **`toy`**: M_toy (Sec. 1) at `ε = e/D`, classes (values, ⊥). Rests on: the grid
sensitivity `hn` (no noise hypothesis: the release's law, `clampedLaplace`, is written out). -/
example : ∀ {R X O : Type} [ExpField R] [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    {r : Request X O R} (e m : Nat), 0 < m → ∀ (hε : (0 : R) ≤ amt D e) (n : X → Int),
    (∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) → ∀ (lo hi : Int) (hlh : lo ≤ hi)
    (f : Option (Window lo hi) → O),
    Realizes r (toyMech m (amt D e) hε n lo hi hlh) f (fun o => toyIndex (toyBlock o)) →
    mechOk r.rowEntry r.blocks true kindToy [e] [] = true → ToyBuiltin Nbr D r :=
  @ToyBuiltin.intro

/-- **`laplace`**: the clamped grid Laplace mechanism at `ε = e/D`, one class. Rests on: the
grid sensitivity `hn` (no noise hypothesis). -/
example : ∀ {R X O : Type} [ExpField R] [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    {r : Request X O R} (e m : Nat), 0 < m → ∀ (hε : (0 : R) ≤ amt D e) (n : X → Int),
    (∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) → ∀ (lo hi : Int) (hlh : lo ≤ hi)
    (f : Window lo hi → O),
    Realizes r (laplaceMech m (amt D e) hε n lo hi hlh) f (fun _ => 0) →
    mechOk r.rowEntry r.blocks true kindLaplace [e] [] = true → LaplaceBuiltin Nbr D r :=
  @LaplaceBuiltin.intro

/-- **`gaussian`**: the clamped grid Gaussian mechanism at `(e/D, d/D)`, one class. Rests on:
`GaussNoise` (its `δ` computed by tested Python code), the grid sensitivity `hn`. -/
example : ∀ {R X O : Type} [ExpField R] [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    {r : Request X O R} (e d m : Nat) (Z : GaussNoise R m (amt D e) (amt D d)) (n : X → Int),
    (∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) → ∀ (lo hi : Int) (hlh : lo ≤ hi)
    (f : Window lo hi → O),
    Realizes r (gaussianMech m (amt D e) (amt D d) Z n lo hi hlh) f (fun _ => 0) →
    mechOk r.rowEntry r.blocks true kindGaussian [e, d] [] = true → GaussianBuiltin Nbr D r :=
  @GaussianBuiltin.intro

/-- **`rr`**: randomized response over a finite type at `ε = e/D`, one class. No hypothesis. -/
example : ∀ {R X O : Type} [ExpField R] [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    {r : Request X O R} {C : Type} [Enum C] [DecidableEq C] (e : Nat) (truth : X → C) (f : C → O),
    Realizes r (rrMech (amt D e) truth) f (fun _ => 0) →
    mechOk r.rowEntry r.blocks true kindRr [e] [] = true → RrBuiltin Nbr D r :=
  @RrBuiltin.intro

/-- **`svt`**: SVT (Alg. 2, Lemma 8) with `c` accepts, `ε₁ = e1/D`, `ε₂ = e2/D`, `N` answers;
classes by the class at which the answer list ends. Rests on: `LapNoise` (threshold), `LapTail`
(queries), the queries' grid sensitivity `hA` for every query the analyst may ask. -/
example : ∀ {R X O : Type} [ExpField R] [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    {r : Request X O R} (c e1 e2 m N : Nat), 0 < m → ∀ (ρ : LapNoise R (amt D e1 / natR m))
    (ν : LapTail R (amt D e2 / natR (2 * c * m))) (A : Analyst X),
    (∀ h Q, A h = some Q → ∀ x x', Nbr x x' → Q.q x ≤ Q.q x' + m ∧ Q.q x' ≤ Q.q x + m) →
    ∀ (f : Answers N → O),
    Realizes r (svtMech ρ ν A c N) f (fun a => (svtBlock c N a).val) →
    mechOk r.rowEntry r.blocks true kindSvt [c, e1, e2] [] = true → SvtBuiltin Nbr D r :=
  @SvtBuiltin.intro

/-- **`ptr`**: a PTR function (Definition 9) at `(e/D, d/D)` and any state `s`, classes
(values, ⊥). Rests on: Definition 9 for `T`. -/
example : ∀ {R X O : Type} [ExpField R] [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    {r : Request X O R} {C V : Type} [Enum V] (e d : Nat) (T : Option C → Mechanism X (Option V) R),
    IsPTRFunction Nbr T (amt D e) (amt D d) → ∀ (s : Option C) (f : Option V → O),
    Realizes r (T s) f (fun o => vobIndex (vob o)) →
    mechOk r.rowEntry r.blocks true kindPtr [e, d] [] = true → PtrBuiltin Nbr D r :=
  @PtrBuiltin.intro

/-- **`iqr`**: odp's M_IQR (Lemma 10, log bins) at `(e/D, d/D)` with its laws written out (the
discrete Laplace test noise, the clamped discrete Laplace release), classes (values, ⊥). Rests
on: the pass tail `Pr(Z ≥ K) ≤ δ/2` and `IQRDataFacts` for both quartile discretisations — no
noise hypothesis. -/
example : ∀ {R X O : Type} [ExpField R] [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    {r : Request X O R} {V : Type} [Enum V] [DecidableEq V] (e d : Nat) (hε : (0 : R) ≤ amt D e)
    (K : Int) (L : Nat) (lo₁ hi₁ : Int) (h₁ : lo₁ ≤ hi₁) (out₁ : Option (Window lo₁ hi₁) → V)
    (lo₂ hi₂ : Int) (h₂ : lo₂ ≤ hi₂) (out₂ : Option (Window lo₂ hi₂) → V) (A₁ A₂ : X → Int)
    (sub₁ sub₂ : X → Option Int), discreteLaplaceTail (amt D e : R) K ≤ amt D d / 2 →
    IQRDataFacts Nbr A₁ sub₁ L → IQRDataFacts Nbr A₂ sub₂ L → ∀ (f : Option V → O),
    Realizes r (iqrLogBinLap (amt D e) hε K L lo₁ hi₁ h₁ out₁ lo₂ hi₂ h₂ out₂ A₁ A₂ sub₁ sub₂) f
      (fun o => vobIndex (vob o)) →
    mechOk r.rowEntry r.blocks true kindIqr [e, d] [] = true → IqrBuiltin Nbr D r :=
  @IqrBuiltin.intro

/-- **`test_release`**: test-and-release (Alg. 5, Thm. 17 on odp's grid), classes (values, ⊥).
Rests on: `TailNoise`, `ERMRelease`, `TestSensitivity`, and that neighbours in `X` are
neighbours in the train/test split (`trNbr`). -/
example : ∀ {R X O : Type} [ExpField R] [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    {r : Request X O R} {Xtr Xte V : Type} [Enum V] (NbrTr : Xtr → Xtr → Prop)
    (NbrTe : Xte → Xte → Prop) (g : X → Xtr × Xte),
    (∀ x x', Nbr x x' → trNbr NbrTr NbrTe (g x) (g x')) →
    ∀ (e1 e2 u ut utr : Nat) (Z : TailNoise R (amt D e2 / natR u)) (rel : Xtr → Dist V R)
    (score : V → Xte → Int) (thr : Int), ERMRelease NbrTr rel score (amt D e1) utr →
    TestSensitivity NbrTe score ut → ∀ (f : Option V → O),
    Realizes r (fun x => testRelease Z rel score thr (g x)) f (fun o => vobIndex (vob o)) →
    mechOk r.rowEntry r.blocks true kindTestRelease [e1, e2, u, ut, utr] [] = true →
    TestReleaseBuiltin Nbr D r :=
  @TestReleaseBuiltin.intro

/-- **`median`**: odp's exponential-mechanism median at `ε = e/D`, one class. Rests on:
`UtilitySensitivity`. -/
example : ∀ {R X O : Type} [ExpField R] [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    {r : Request X O R} {Y : Type} [Enum Y] (e : Nat) (y₀ : Y) (u : X → Y → Int),
    UtilitySensitivity Nbr u → ∀ (f : Y → O),
    Realizes r (expMech y₀ u (amt D e)) f (fun _ => 0) →
    mechOk r.rowEntry r.blocks true kindMedian [e] [] = true → MedianBuiltin Nbr D r :=
  @MedianBuiltin.intro

/-- **`iter`**: an iterative mechanism with stops `S.ks` and basic composition (Lemma 11),
classes by the stop reached. Rests on: `StepsDP` with the per-step `ε`s and `δ`s read from the
certificate's step groups. -/
example : ∀ {R X O : Type} [ExpField R] [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    {r : Request X O R} {W : Type} [Enum W] (M : Step X W R) (S : Stops)
    (rule : Fin S.ks.length → List W → Bool) (gs : List StepGroup),
    StepsDP Nbr M (stepList D (fun g => g.eps) gs) (stepList D (fun g => g.delta) gs) →
    ∀ (f : IterOut W S.ks → O), Realizes r (iterMech M S rule) f (fun o => o.1.val) →
    mechOk r.rowEntry r.blocks true kindIter S.ks gs = true → IterBuiltin Nbr D r :=
  @IterBuiltin.intro

/-- **`lemma11`**: an iterative mechanism with stops `S.ks` and any composition rule (Lemma 11),
classes by the stop reached. Rests on: `PrefixDP` with the stop costs and `δ`s the certificate
lists (computed by tested Python code for non-basic rules). -/
example : ∀ {R X O : Type} [ExpField R] [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    {r : Request X O R} {W : Type} [Enum W] (M : Step X W R) (S : Stops)
    (rule : Fin S.ks.length → List W → Bool) (gs : List StepGroup),
    S.ks = gs.map StepGroup.count →
    PrefixDP Nbr M S.ks (fun i => amt D (blockAt i.val (stopCosts gs)))
      (fun i => amt D (blockAt i.val (gs.map StepGroup.delta))) →
    ∀ (f : IterOut W S.ks → O), Realizes r (iterMech M S rule) f (fun o => o.1.val) →
    mechOk r.rowEntry r.blocks true kindLemma11 [] gs = true → Lemma11Builtin Nbr D r :=
  @Lemma11Builtin.intro

/-! ## §4 Cost links: what an accepted `mech` row says about the blocks

For each kind, what `mechOk` accepting a round's rows (entry `e`, blocks `bs`, parameters `ps`,
step groups `gs`) says about its blocks read in units of `1/D` (`amt D`) and its `δ`: they are the
model's cost function of `Odp/Mech` at the row's parameters, class by class in the certificate's
class order. -/

/-- **`dp`**: if `mechOk` accepts a `dp` round, it lists one block, and that block read in units
of `1/D` is the entry's `supEps`. -/
example : ∀ {R : Type} [ExpField R] (D : Nat) {e : Entry} {bs ps : List Nat}
    {gs : List StepGroup}, mechOk e bs true kindDp ps gs = true →
    listLen bs = 1 ∧ (amt D (blockAt 0 bs) : R) = amt D e.supEps :=
  @Odp.Certs.Link.dp_cost_link

/-- **`toy`**: if `mechOk` accepts a `toy` round with parameter [e], its blocks in the order
(values, ⊥) read in units of `1/D` are `toyCosts (amt D e)` (`e/D` for values, `0` for ⊥), and
`δ = 0`. -/
example : ∀ {R : Type} [ExpField R] (D : Nat) {e : Entry} {bs ps : List Nat}
    {gs : List StepGroup}, mechOk e bs true kindToy ps gs = true →
    (∀ b, (amt D (blockAt (toyIndex b) bs) : R) = toyCosts (amt D (blockAt 0 ps)) b) ∧
      (amt D e.delta : R) = 0 :=
  @Odp.Certs.Link.toy_cost_link

/-- **`laplace`**: if `mechOk` accepts a `laplace` round with parameter [e], its first block read
in units of `1/D` is `amt D e`, and `δ = 0`. -/
example : ∀ {R : Type} [ExpField R] (D : Nat) {e : Entry} {bs ps : List Nat}
    {gs : List StepGroup}, mechOk e bs true kindLaplace ps gs = true →
    (amt D (blockAt 0 bs) : R) = amt D (blockAt 0 ps) ∧ (amt D e.delta : R) = 0 :=
  @Odp.Certs.Link.laplace_cost_link

/-- **`gaussian`**: if `mechOk` accepts a `gaussian` round with parameters [e, d], its first block
read in units of `1/D` is `amt D e`, and its `δ` is `amt D d`. -/
example : ∀ {R : Type} [ExpField R] (D : Nat) {e : Entry} {bs ps : List Nat}
    {gs : List StepGroup}, mechOk e bs true kindGaussian ps gs = true →
    (amt D (blockAt 0 bs) : R) = amt D (blockAt 0 ps) ∧
      (amt D e.delta : R) = amt D (blockAt 1 ps) :=
  @Odp.Certs.Link.gaussian_cost_link

/-- **`rr`**: if `mechOk` accepts an `rr` round with parameter [e], its first block read in units
of `1/D` is `amt D e`, and `δ = 0`. -/
example : ∀ {R : Type} [ExpField R] (D : Nat) {e : Entry} {bs ps : List Nat}
    {gs : List StepGroup}, mechOk e bs true kindRr ps gs = true →
    (amt D (blockAt 0 bs) : R) = amt D (blockAt 0 ps) ∧ (amt D e.delta : R) = 0 :=
  @Odp.Certs.Link.rr_cost_link

/-- **`svt`**: if `mechOk` accepts an `svt` round with parameters [c, e1, e2], then `c ≥ 1`, it
lists `c + 1` blocks, and these read in units of `1/D` are `svtCosts c (amt D e1) (amt D e2)` in
the certificate's class order (class `k` = `k` accepts), and `δ = 0`. -/
example : ∀ {R : Type} [ExpField R] (D : Nat) {e : Entry} {bs ps : List Nat}
    {gs : List StepGroup}, mechOk e bs true kindSvt ps gs = true →
    0 < blockAt 0 ps ∧ listLen bs = blockAt 0 ps + 1 ∧
      (∀ k : Fin (blockAt 0 ps + 1), (amt D (blockAt k.val bs) : R)
        = svtCosts (blockAt 0 ps) (amt D (blockAt 1 ps)) (amt D (blockAt 2 ps)) k) ∧
      (amt D e.delta : R) = 0 :=
  @Odp.Certs.Link.svt_cost_link

/-- **`ptr`**: if `mechOk` accepts a `ptr` round with parameters [e, d], it lists two blocks, in
the order (values, ⊥) they read in units of `1/D` as `ptrCosts (amt D e)` (`2e/D` for values,
`e/D` for ⊥), and its `δ` is `d`. -/
example : ∀ {R : Type} [ExpField R] (D : Nat) {e : Entry} {bs ps : List Nat}
    {gs : List StepGroup}, mechOk e bs true kindPtr ps gs = true →
    (∀ b, (amt D (blockAt (vobIndex b) bs) : R) = ptrCosts (amt D (blockAt 0 ps)) b) ∧
      e.delta = blockAt 1 ps ∧ listLen bs = 2 :=
  @Odp.Certs.Link.ptr_cost_link

/-- **`iqr`**: if `mechOk` accepts an `iqr` round with parameters [e, d], it lists two blocks, in
the order (values, ⊥) they read in units of `1/D` as `iqrCosts (amt D e)` (`3e/D` for values,
`2e/D` for ⊥), and its `δ` is `d`. -/
example : ∀ {R : Type} [ExpField R] (D : Nat) {e : Entry} {bs ps : List Nat}
    {gs : List StepGroup}, mechOk e bs true kindIqr ps gs = true →
    (∀ b, (amt D (blockAt (vobIndex b) bs) : R) = iqrCosts (amt D (blockAt 0 ps)) b) ∧
      e.delta = blockAt 1 ps ∧ listLen bs = 2 :=
  @Odp.Certs.Link.iqr_cost_link

/-- **`test_release`**: for `D > 0`, if `mechOk` accepts a `test_release` round with parameters
[e1, e2, u, ut, utr], then `u ≥ 1`, `δ = 0`, it lists two blocks, and in the order (values, ⊥)
they read in units of `1/D` as `testReleaseCosts (amt D e1) (amt D e2) u ut utr`. -/
example : ∀ {R : Type} [ExpField R] (D : Nat), 0 < D → ∀ {e : Entry} {bs ps : List Nat}
    {gs : List StepGroup}, mechOk e bs true kindTestRelease ps gs = true →
    0 < blockAt 2 ps ∧ e.delta = 0 ∧ listLen bs = 2 ∧
      ∀ b, (amt D (blockAt (vobIndex b) bs) : R)
        = testReleaseCosts (amt D (blockAt 0 ps)) (amt D (blockAt 1 ps)) (blockAt 2 ps)
            (blockAt 3 ps) (blockAt 4 ps) b :=
  @Odp.Certs.Link.testRelease_cost_link

/-- **`median`**: if `mechOk` accepts a `median` round with parameter [e], its first block read
in units of `1/D` is `amt D e`, and `δ = 0`. -/
example : ∀ {R : Type} [ExpField R] (D : Nat) {e : Entry} {bs ps : List Nat}
    {gs : List StepGroup}, mechOk e bs true kindMedian ps gs = true →
    (amt D (blockAt 0 bs) : R) = amt D (blockAt 0 ps) ∧ e.delta = 0 :=
  @Odp.Certs.Link.median_cost_link

/-- **`iter`**: if `mechOk` accepts an `iter` round with stops `ks` and step groups `gs`, its
block of stop `i` read in units of `1/D` is `iterCosts ks eps i` (the sum of the first `k_i`
step `ε`s) and its `δ` is `iterDeltaBasic ks dl` (Lemma 11 with basic composition), for the
per-step `eps`, `dl` that `gs` describes; it lists one block per stop, and no stop exceeds the
number of steps. -/
example : ∀ {R : Type} [ExpField R] (D : Nat) {e : Entry} {bs ks : List Nat}
    {gs : List StepGroup}, mechOk e bs true kindIter ks gs = true →
    (∀ i : Fin ks.length, (amt D (blockAt i.val bs) : R)
      = iterCosts ks (stepList D (fun g => g.eps) gs) i) ∧
      (amt D e.delta : R) = iterDeltaBasic ks (stepList D (fun g => g.delta) gs) ∧
      listLen bs = ks.length ∧ (∀ i : Fin ks.length, ks.get i ≤ stepCount gs) :=
  @Odp.Certs.Link.iter_cost_link

/-- **`lemma11`**: for `D > 0`, if `mechOk` accepts a `lemma11` round with per-stop groups `gs`
(`k_i`, `ε^{k_i}`, `δ^{k_i}`), its block `i` read in units of `1/D` is the `ε^{k_i}` that
`gs` lists, its `δ` covers `Σ_i δ^{k_i}`, and it lists one block per stop. -/
example : ∀ {R : Type} [ExpField R] (D : Nat), 0 < D → ∀ {e : Entry} {bs ps : List Nat}
    {gs : List StepGroup}, mechOk e bs true kindLemma11 ps gs = true →
    (∀ i, (amt D (blockAt i bs) : R) = amt D (blockAt i (stopCosts gs))) ∧
      (amt D (stopDeltas gs) : R) ≤ amt D e.delta ∧ listLen bs = gs.length :=
  @Odp.Certs.Link.lemma11_cost_link

/-! ## §5 Each kind has only the constructor written out in §3

An inductive predicate with a second constructor would make "built-in" mean more than §3 says.
For each kind, its case analysis (`casesOn`) is pinned: every proof of it is the constructor of
§3 applied to arguments. -/

section Cases

variable {R X O : Type} [ExpField R] [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
  {r : Request X O R}

example : ∀ {motive : DpBuiltin Nbr D r → Prop} (t : DpBuiltin Nbr D r),
    (∀ (Om : Type) [Enum Om] M f hreal hdp hrow,
      motive (DpBuiltin.intro (Om := Om) M f hreal hdp hrow)) → motive t :=
  @DpBuiltin.casesOn R X O _ _ _ Nbr D r

example : ∀ {motive : ToyBuiltin Nbr D r → Prop} (t : ToyBuiltin Nbr D r),
    (∀ e m hm hε n hn lo hi hlh f hreal hrow,
      motive (ToyBuiltin.intro e m hm hε n hn lo hi hlh f hreal hrow)) → motive t :=
  @ToyBuiltin.casesOn R X O _ _ _ Nbr D r

example : ∀ {motive : LaplaceBuiltin Nbr D r → Prop} (t : LaplaceBuiltin Nbr D r),
    (∀ e m hm hε n hn lo hi hlh f hreal hrow,
      motive (LaplaceBuiltin.intro e m hm hε n hn lo hi hlh f hreal hrow)) → motive t :=
  @LaplaceBuiltin.casesOn R X O _ _ _ Nbr D r

example : ∀ {motive : GaussianBuiltin Nbr D r → Prop} (t : GaussianBuiltin Nbr D r),
    (∀ e d m Z n hn lo hi hlh f hreal hrow,
      motive (GaussianBuiltin.intro e d m Z n hn lo hi hlh f hreal hrow)) → motive t :=
  @GaussianBuiltin.casesOn R X O _ _ _ Nbr D r

example : ∀ {motive : RrBuiltin Nbr D r → Prop} (t : RrBuiltin Nbr D r),
    (∀ (C : Type) [Enum C] [DecidableEq C] e truth f hreal hrow,
      motive (RrBuiltin.intro (C := C) e truth f hreal hrow)) → motive t :=
  @RrBuiltin.casesOn R X O _ _ _ Nbr D r

example : ∀ {motive : SvtBuiltin Nbr D r → Prop} (t : SvtBuiltin Nbr D r),
    (∀ c e1 e2 m N hm ρ ν A hA f hreal hrow,
      motive (SvtBuiltin.intro c e1 e2 m N hm ρ ν A hA f hreal hrow)) → motive t :=
  @SvtBuiltin.casesOn R X O _ _ _ Nbr D r

example : ∀ {motive : PtrBuiltin Nbr D r → Prop} (t : PtrBuiltin Nbr D r),
    (∀ (C V : Type) [Enum V] e d T hT s f hreal hrow,
      motive (PtrBuiltin.intro (C := C) (V := V) e d T hT s f hreal hrow)) → motive t :=
  @PtrBuiltin.casesOn R X O _ _ _ Nbr D r

example : ∀ {motive : IqrBuiltin Nbr D r → Prop} (t : IqrBuiltin Nbr D r),
    (∀ (V : Type) [Enum V] [DecidableEq V] e d hε K L lo₁ hi₁ h₁ out₁ lo₂ hi₂ h₂ out₂ A₁ A₂
      sub₁ sub₂ htail hd₁ hd₂ f hreal hrow,
      motive (IqrBuiltin.intro (V := V) e d hε K L lo₁ hi₁ h₁ out₁ lo₂ hi₂ h₂ out₂ A₁ A₂ sub₁ sub₂
        htail hd₁ hd₂ f hreal hrow)) → motive t :=
  @IqrBuiltin.casesOn R X O _ _ _ Nbr D r

example : ∀ {motive : TestReleaseBuiltin Nbr D r → Prop} (t : TestReleaseBuiltin Nbr D r),
    (∀ (Xtr Xte V : Type) [Enum V] NbrTr NbrTe g hg e1 e2 u ut utr Z rel score thr hrel htest
      f hreal hrow,
      motive (TestReleaseBuiltin.intro (Xtr := Xtr) (Xte := Xte) (V := V) NbrTr NbrTe g hg e1 e2
        u ut utr Z rel score thr hrel htest f hreal hrow)) → motive t :=
  @TestReleaseBuiltin.casesOn R X O _ _ _ Nbr D r

example : ∀ {motive : MedianBuiltin Nbr D r → Prop} (t : MedianBuiltin Nbr D r),
    (∀ (Y : Type) [Enum Y] e y₀ u hu f hreal hrow,
      motive (MedianBuiltin.intro (Y := Y) e y₀ u hu f hreal hrow)) → motive t :=
  @MedianBuiltin.casesOn R X O _ _ _ Nbr D r

example : ∀ {motive : IterBuiltin Nbr D r → Prop} (t : IterBuiltin Nbr D r),
    (∀ (W : Type) [Enum W] M S rule gs hsteps f hreal hrow,
      motive (IterBuiltin.intro (W := W) M S rule gs hsteps f hreal hrow)) → motive t :=
  @IterBuiltin.casesOn R X O _ _ _ Nbr D r

example : ∀ {motive : Lemma11Builtin Nbr D r → Prop} (t : Lemma11Builtin Nbr D r),
    (∀ (W : Type) [Enum W] M S rule gs hks hcomp f hreal hrow,
      motive (Lemma11Builtin.intro (W := W) M S rule gs hks hcomp f hreal hrow)) → motive t :=
  @Lemma11Builtin.casesOn R X O _ _ _ Nbr D r

end Cases

/-- The class orders of the certificate: (values, ⊥) ↦ (0, 1); the per-step `ε`s and `δ`s of an
iterative round, read from its step groups (`count` copies of each group's value). -/
example {R : Type} [ExpField R] (D : Nat) (sel : StepGroup → Nat) (g : StepGroup)
    (gs : List StepGroup) :
    toyIndex .value = 0 ∧ toyIndex .bottom = 1 ∧ vobIndex .value = 0 ∧ vobIndex .bottom = 1 ∧
    (stepList D sel [] : List R) = [] ∧
    (stepList D sel (g :: gs) : List R) = List.replicate g.count (amt D (sel g)) ++ stepList D sel gs :=
  ⟨rfl, rfl, rfl, rfl, rfl, rfl⟩

/-! ## §6 `mechOk`, written out

What `mechOk` (`Odp/LedgerCore.lean`, the rule that the generated Python checker and
`odp verify --kernel` apply to a `mech` row) accepts for each kind, and every function it calls.
(`listMax`, `listLen`, `blockAt` are written out in `Odp/Core/Spec.lean`.) -/

/-- The kinds' numbers. -/
example : kindDeclared = 0 ∧ kindDp = 1 ∧ kindLaplace = 2 ∧ kindGaussian = 3 ∧ kindRr = 4 ∧
    kindMedian = 5 ∧ kindErm = 6 ∧ kindToy = 7 ∧ kindSvt = 8 ∧ kindPtr = 9 ∧ kindIqr = 10 ∧
    kindIter = 11 ∧ kindIterCosts = 12 ∧ kindTestRelease = 13 ∧ kindLemma11 = 14 :=
  ⟨rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl⟩

/-- `mechOk` by kind. -/
example (e : Entry) (bs : List Nat) (hasBlocks : Bool) (kind : Nat) (ps : List Nat)
    (gs : List StepGroup) :
    mechOk e bs hasBlocks kind ps gs =
      if decide (kind = kindDeclared) then arity ps gs 0
      else if decide (kind = kindDp) then
        arity ps gs 0 && (if hasBlocks then listEq bs [e.supEps] else true)
      else if decide (kind = kindLaplace) then
        arity ps gs 1 && costsAre e bs hasBlocks (dpBlocks (blockAt 0 ps)) 0
      else if decide (kind = kindGaussian) then
        arity ps gs 2 && costsAre e bs hasBlocks (dpBlocks (blockAt 0 ps)) (blockAt 1 ps)
      else if decide (kind = kindRr) then
        arity ps gs 1 && costsAre e bs hasBlocks (dpBlocks (blockAt 0 ps)) 0
      else if decide (kind = kindMedian) then
        arity ps gs 1 && costsAre e bs hasBlocks (dpBlocks (blockAt 0 ps)) 0
      else if decide (kind = kindErm) then
        arity ps gs 1 && costsAre e bs hasBlocks (dpBlocks (blockAt 0 ps)) 0
      else if decide (kind = kindToy) then
        arity ps gs 1 && costsAre e bs hasBlocks (toyBlocks (blockAt 0 ps)) 0
      else if decide (kind = kindSvt) then
        arity ps gs 3 && svtOk e bs hasBlocks (blockAt 0 ps) (blockAt 1 ps) (blockAt 2 ps)
      else if decide (kind = kindPtr) then
        arity ps gs 2 && costsAre e bs hasBlocks (ptrBlocks (blockAt 0 ps)) (blockAt 1 ps)
      else if decide (kind = kindIqr) then
        arity ps gs 2 && costsAre e bs hasBlocks (iqrBlocks (blockAt 0 ps)) (blockAt 1 ps)
      else if decide (kind = kindIter) then
        stopsOk gs ps && costsAre e bs hasBlocks (iterBlocks gs ps) (iterDelta gs ps)
      else if decide (kind = kindIterCosts) then
        stopsOk gs ps && costsAre e bs hasBlocks (iterBlocks gs ps) e.delta
      else if decide (kind = kindTestRelease) then
        arity ps gs 5 && testReleaseOk e bs hasBlocks (blockAt 0 ps) (blockAt 1 ps) (blockAt 2 ps)
          (blockAt 3 ps) (blockAt 4 ps)
      else if decide (kind = kindLemma11) then
        decide (listLen ps = 0) && lemma11Ok e bs hasBlocks gs
      else false :=
  rfl

/-- The cost lists of the kinds, the arity and cost checks. -/
example (ε d n : Nat) (e : Entry) (bs expected ps : List Nat) (hasBlocks : Bool)
    (gs : List StepGroup) (a b : Nat) :
    dpBlocks ε = [ε] ∧ toyBlocks ε = [ε, 0] ∧ ptrBlocks ε = [2 * ε, ε] ∧
    iqrBlocks ε = [3 * ε, 2 * ε] ∧
    arity ps gs n = (decide (listLen ps = n) && decide (groupsLen gs = 0)) ∧
    costsAre e bs hasBlocks expected d = (decide (e.delta = d) &&
      (if hasBlocks then listEq bs expected else decide (e.supEps = listMax expected))) ∧
    natMax a b = (if decide (a ≤ b) then b else a) ∧ natMin a b = (if decide (a ≤ b) then a else b) :=
  ⟨rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl⟩

/-- Lists: equality, number of groups, number of steps. -/
example (x y : Nat) (xs ys : List Nat) (g : StepGroup) (gs : List StepGroup) :
    listEq [] [] = true ∧ listEq (x :: xs) (y :: ys) = (decide (x = y) && listEq xs ys) ∧
    listEq [] (y :: ys) = false ∧ listEq (x :: xs) [] = false ∧
    groupsLen [] = 0 ∧ groupsLen (g :: gs) = groupsLen gs + 1 ∧
    stepCount [] = 0 ∧ stepCount (g :: gs) = g.count + stepCount gs :=
  ⟨rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl⟩

/-- SVT's check (Lemma 8's costs `ℰ(S_{c'})·c = ε1·c + c'·ε2`, classes `c' = 0 … c`, `δ = 0`). -/
example (e : Entry) (bs : List Nat) (hasBlocks : Bool) (c e1 e2 k b : Nat) :
    svtOk e bs hasBlocks c e1 e2 = (decide (0 < c) && decide (e.delta = 0) &&
      (if hasBlocks then svtFrom c e1 e2 0 bs else decide (e.supEps = e1 + e2))) ∧
    svtFrom c e1 e2 k [] = decide (k = c + 1) ∧
    svtFrom c e1 e2 k (b :: bs)
      = (if decide (b * c = e1 * c + k * e2) then svtFrom c e1 e2 (k + 1) bs else false) :=
  ⟨rfl, rfl, rfl⟩

/-- Test-and-release's check (Thm. 17 on the grid). -/
example (e : Entry) (bs : List Nat) (hasBlocks : Bool) (e1 e2 u ut utr : Nat) :
    testReleaseOk e bs hasBlocks e1 e2 u ut utr = (decide (0 < u) && decide (e.delta = 0) &&
      (if hasBlocks then
        decide (listLen bs = 2) && decide (blockAt 0 bs * u = natMax (e1 * u) (ut * e2)) &&
          decide (blockAt 1 bs * u = natMin (blockAt 0 bs * u) (natMax utr ut * e2))
      else decide (e.supEps * u = natMax (e1 * u) (ut * e2)))) :=
  rfl

/-- Lemma 11 with basic composition: stops, prefix sums of the step groups, costs and `δ`. -/
example (k acc prev : Nat) (g : StepGroup) (gs : List StepGroup) (ks : List Nat) :
    prefixEps k acc [] = acc ∧
    prefixEps k acc (g :: gs) = (if decide (k ≤ g.count) then acc + k * g.eps
      else prefixEps (k - g.count) (acc + g.count * g.eps) gs) ∧
    prefixDelta k acc [] = acc ∧
    prefixDelta k acc (g :: gs) = (if decide (k ≤ g.count) then acc + k * g.delta
      else prefixDelta (k - g.count) (acc + g.count * g.delta) gs) ∧
    iterBlocks gs [] = [] ∧ iterBlocks gs (k :: ks) = prefixEps k 0 gs :: iterBlocks gs ks ∧
    iterDelta gs [] = 0 ∧ iterDelta gs (k :: ks) = prefixDelta k 0 gs + iterDelta gs ks ∧
    increasingFrom prev [] = true ∧
    increasingFrom prev (k :: ks) = (if decide (prev < k) then increasingFrom k ks else false) ∧
    stopsOk gs ks = (decide (0 < listLen ks) && increasingFrom 0 ks &&
      decide (listMax ks = stepCount gs)) :=
  ⟨rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl⟩

/-- Lemma 11 with any COMP: one group per stop `(k_i, ε^{k_i}, δ^{k_i})`. -/
example (e : Entry) (bs : List Nat) (hasBlocks : Bool) (prev : Nat) (g : StepGroup)
    (gs : List StepGroup) :
    stopCosts [] = [] ∧ stopCosts (g :: gs) = g.eps :: stopCosts gs ∧
    stopDeltas [] = 0 ∧ stopDeltas (g :: gs) = g.delta + stopDeltas gs ∧
    stopsAbove prev [] = true ∧
    stopsAbove prev (g :: gs) = (if decide (prev < g.count) then stopsAbove g.count gs else false) ∧
    lemma11Ok e bs hasBlocks gs = (decide (0 < groupsLen gs) && stopsAbove 0 gs &&
      decide (stopDeltas gs ≤ e.delta) &&
      (if hasBlocks then listEq bs (stopCosts gs) else decide (e.supEps = listMax (stopCosts gs)))) :=
  ⟨rfl, rfl, rfl, rfl, rfl, rfl, rfl⟩

end OdpSpec.Certs
