/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# What the Mathlib-free core proves, stated in full

This file is the one to read to know what is proved. Every result the project claims for the
core is written out below in full, with the paper's numbering (Hartmann et al., *Privacy
accounting εconomics*: Definitions 1, 2, 5, Lemmas 3, 4, 6, 20, Algorithm 1, Theorem 7), and
proved by the theorem of `Odp/Core` or `Odp/LedgerCore.lean` that claims it, *as is*: each
proof below is `@Odp.Core.<name>` (or `rfl` for a definition's equations), never a new argument.
So if a theorem's statement were weakened, or a definition it uses changed its meaning, this file
would stop compiling and the check would fail (`scripts/check_lean.sh` compiles it, audits it
and replays it through the kernel; the axioms of each theorem here are pinned in
`scripts/lean/pinned.txt`).

What the reader needs besides this file: Lean 4's core library (the ordered-field classes of
`Lean.Grind`, `List`, `Nat`, `Bool`, `Option`), and that the names below are the ones declared in
`Odp/Core` and `Odp/LedgerCore.lean` — the audit fails if anything outside this file declares a
name in the namespace `OdpSpec` or in the root namespace, where it could be picked up instead,
and the source scan refuses notation, macros and syntax in every checked file, so the symbols
below mean what Lean's core library says they mean.

Contents: §0 the number system and finite probability; §1 Definitions 1, 2, 5; §2 Lemmas 3, 4,
6; §3 Lemma 20; §4 Algorithm 1 and Theorem 7; §5 the accountant's ledger and certificates;
§6 pointers to the mechanisms' and the certificates' statement files; §7 composition lanes: a
laned session's guarantee from its lanes' (cited) filter theorems.

Deviations from the paper (each is a generalisation or is said where it appears): outputs are
finite (`Enum`); an event is a Boolean function on the outputs (on a finite type, every subset is
one); costs may be any element of the field (the paper asks `ℰ ≥ 0`); Lemma 20 does not need
`ℰ(P_k) ≤ ε_t`; Theorem 7 needs `0 ≤ ε_t`, `0 ≤ δ_t`.
-/
module

public import Odp.Core.Ledger
public import Odp.Core.Lanes
public import Odp.Certs.Example

@[expose] public section

set_option autoImplicit false

namespace OdpSpec

open Odp.Core Odp.Core.ExpField Odp.LedgerCore

/-! ## §0 The number system and finite probability -/

/-- Probabilities, privacy parameters and costs live in a type `R` with `ExpField R`, which is
exactly: Lean core's ordered-field classes, and a function `exp` with
`exp (a + b) = exp a * exp b`, `exp 0 = 1`, `exp a > 0` and monotonicity. Nothing else is
assumed (this is the type of `ExpField`'s only constructor). The real numbers with `Real.exp` are
one (`OdpMathlib/Real.lean`, in the Mathlib layer: stated only, not compiled here). -/
def expField_is : ∀ {R : Type} [Lean.Grind.Field R] [LE R] [LT R] [Std.IsLinearOrder R]
    [Std.LawfulOrderLT R] [Lean.Grind.OrderedRing R] (exp : R → R),
    (∀ a b : R, exp (a + b) = exp a * exp b) → exp 0 = 1 → (∀ a : R, 0 < exp a) →
    (∀ a b : R, a ≤ b → exp a ≤ exp b) → ExpField R :=
  @ExpField.mk

/- The class is satisfiable, at the rationals with `exp ≡ 1` (a check that no change to
`ExpField` or its parents made it empty; the reals are the intended model). -/
example : ExpField Rat :=
  expField_is (R := Rat) (fun _ => 1) (by intros; grind) rfl (by intros; grind) (by intros; grind)

/-- A finite type `α` (`Enum α`): a list of its elements, without duplicates, containing every
element. -/
def enum_is : ∀ {α : Type} (elems : List α), elems.Nodup → (∀ a : α, a ∈ elems) → Enum α :=
  @Enum.mk

/-- Finite sums: `lsum [a₁, …, aₙ] f = f a₁ + … + f aₙ`, and `fsum f = ∑_{a ∈ α} f a` over a
finite type. -/
theorem lsum_is {R α : Type} [ExpField R] (f : α → R) (a : α) (l : List α) :
    lsum [] f = 0 ∧ lsum (a :: l) f = f a + lsum l f := ⟨rfl, rfl⟩

theorem fsum_is {R α : Type} [ExpField R] [Enum α] (f : α → R) : fsum f = lsum Enum.elems f :=
  rfl

/-- A probability distribution on a finite type `O` (`Dist O R`): a mass function, nonnegative,
of total mass 1; any such function is one. -/
def dist_is : ∀ {O R : Type} [ExpField R] [Enum O] (mass : O → R), (∀ o : O, 0 ≤ mass o) →
    fsum mass = 1 → Dist O R :=
  @Dist.mk

/-- An event is a subset of the outputs, given by its indicator; `Pr p S = ∑_{o ∈ S} p(o)`. -/
theorem event_is (O : Type) : Event O = (O → Bool) := rfl

theorem Pr_is {O R : Type} [ExpField R] [Enum O] (p : Dist O R) (S : Event O) :
    Pr p S = fsum (fun o => if S o then p.mass o else 0) := rfl

/-- A mechanism gives, for each database, a distribution on the outputs. -/
theorem mechanism_is (X O R : Type) [ExpField R] [Enum O] : Mechanism X O R = (X → Dist O R) :=
  rfl

open Classical in
/-- The positive part `max(0, x)`. -/
theorem posPart_is {R : Type} [ExpField R] (x : R) : posPart x = if 0 ≤ x then x else 0 := rfl

/-- Ledger amounts are natural numbers in units of `1/D`: `amt D n = n / D`, with `natR n` the
natural number `n` in `R`. -/
theorem amt_is {R : Type} [ExpField R] (D n : Nat) :
    amt D n = natR n * (natR D : R)⁻¹ ∧ (natR 0 : R) = 0 ∧ (natR (n + 1) : R) = natR n + 1 :=
  ⟨rfl, rfl, rfl⟩

/-! ## §1 Definitions 1, 2 and 5

`X` is the type of databases and `Nbr : X → X → Prop` the neighbouring relation (any relation). A
partition `𝒫 = {P_k}` of the outputs is a labelling `κ : O → K` into a finite type of labels,
with blocks `P_k = {o | κ o = k}`, and `E k = ℰ(P_k)`. -/

/-- **Definition 1** ((ε, δ)-differential privacy): for all neighbouring `x, x'` and all
`S ⊆ Range(M)`, `Pr(M(x) ∈ S) ≤ e^ε Pr(M(x') ∈ S) + δ`. -/
theorem definition1 {R X O : Type} [ExpField R] [Enum O] (Nbr : X → X → Prop)
    (M : Mechanism X O R) (ε δ : R) :
    DP Nbr M ε δ ↔
      ∀ x x', Nbr x x' → ∀ S : Event O, Pr (M x) S ≤ exp ε * Pr (M x') S + δ :=
  Iff.rfl

/-- **Definition 2** ((𝒫, ℰ, δ)-output differential privacy): for all `S ⊆ 𝒪` and all
neighbouring `x, x'`, `Pr(M(x) ∈ S) ≤ δ + ∑_k e^{ℰ(P_k)} Pr(M(x') ∈ S ∩ P_k)`. -/
theorem definition2 {R X O K : Type} [ExpField R] [Enum O] [Enum K] [DecidableEq K]
    (Nbr : X → X → Prop) (M : Mechanism X O R) (κ : O → K) (E : K → R) (δ : R) :
    ODP Nbr M κ E δ ↔
      ∀ x x', Nbr x x' → ∀ S : Event O,
        Pr (M x) S ≤ δ + fsum (fun k => exp (E k) * Pr (M x') (fun o => S o && decide (κ o = k))) :=
  Iff.rfl

/-- Definition 2, output-wise form: `cost o` is `ℰ` of the block that contains `o`. -/
theorem definition2_cost {R X O : Type} [ExpField R] [Enum O] (Nbr : X → X → Prop)
    (M : Mechanism X O R) (cost : O → R) (δ : R) :
    ODPcost Nbr M cost δ ↔
      ∀ x x', Nbr x x' → ∀ S : Event O,
        Pr (M x) S ≤ δ + fsum (fun o => if S o then exp (cost o) * (M x').mass o else 0) :=
  Iff.rfl

/-- Definition 2, sum form: `∑_o max(0, M(x)(o) − e^{cost o} M(x')(o)) ≤ δ`. -/
theorem definition2_sum {R X O : Type} [ExpField R] [Enum O] (Nbr : X → X → Prop)
    (M : Mechanism X O R) (cost : O → R) (δ : R) :
    ODPsum Nbr M cost δ ↔
      ∀ x x', Nbr x x' →
        fsum (fun o => posPart ((M x).mass o - exp (cost o) * (M x').mass o)) ≤ δ :=
  Iff.rfl

/-- The three forms of Definition 2 are equivalent (partition form ⇔ output-wise form). -/
theorem definition2_partition_iff_cost : ∀ {R X O K : Type} [ExpField R] [Enum O] [Enum K]
    [DecidableEq K] (Nbr : X → X → Prop) (M : Mechanism X O R) (κ : O → K) (E : K → R) (δ : R),
    ODP Nbr M κ E δ ↔ ODPcost Nbr M (fun o => E (κ o)) δ :=
  @Odp.Core.ODP_iff_ODPcost

/-- … and output-wise form ⇔ sum form. -/
theorem definition2_cost_iff_sum : ∀ {R X O : Type} [ExpField R] [Enum O]
    (Nbr : X → X → Prop) (M : Mechanism X O R) (cost : O → R) (δ : R),
    ODPcost Nbr M cost δ ↔ ODPsum Nbr M cost δ :=
  @Odp.Core.ODPcost_iff_ODPsum

/-- **Definition 5** ((R, ε, δ)-subset differential privacy), for the subset `Rg` of the outputs:
for all `S ⊆ Rg` and all neighbouring `x, x'`, `Pr(M(x) ∈ S) ≤ e^ε Pr(M(x') ∈ S) + δ`. -/
theorem definition5 {R X O : Type} [ExpField R] [Enum O] (Nbr : X → X → Prop)
    (M : Mechanism X O R) (Rg : Event O) (ε δ : R) :
    SubsetDP Nbr M Rg ε δ ↔
      ∀ x x', Nbr x x' → ∀ S : Event O, (∀ o, S o = true → Rg o = true) →
        Pr (M x) S ≤ exp ε * Pr (M x') S + δ :=
  Iff.rfl

/-! ## §2 Lemmas 3, 4 and 6 -/

/-- **Lemma 3.** An (ε, δ)-DP mechanism is (𝒫, ℰ ≡ ε, δ)-ODP for every partition 𝒫. -/
theorem lemma3 : ∀ {R X O K : Type} [ExpField R] [Enum O] [Enum K] [DecidableEq K]
    (Nbr : X → X → Prop) (M : Mechanism X O R) (ε δ : R),
    DP Nbr M ε δ → ∀ κ : O → K, ODP Nbr M κ (fun _ => ε) δ :=
  @Odp.Core.odp_of_dp

/-- Lemma 3, output-wise form (the constant cost `ε`). -/
theorem lemma3_cost : ∀ {R X O : Type} [ExpField R] [Enum O] (Nbr : X → X → Prop)
    (M : Mechanism X O R) (ε δ : R), DP Nbr M ε δ → ODPcost Nbr M (fun _ => ε) δ :=
  @Odp.Core.odpCost_of_dp

/-- `sup_k ℰ(P_k)` over the (finite) labels, taken with `0`: `lmax l f` is the largest value of
`f` on `l`, or `0` if that is larger. -/
theorem supCost_is {R K : Type} [ExpField R] [Enum K] (E : K → R) :
    supCost E = lmax Enum.elems E := rfl

open Classical in
theorem lmax_is {R α : Type} [ExpField R] (f : α → R) (a : α) (l : List α) :
    lmax [] f = 0 ∧ lmax (a :: l) f = (if f a ≤ lmax l f then lmax l f else f a) := ⟨rfl, rfl⟩

/-- With nonnegative costs (as in the paper) and at least one label, `supCost E` is attained by a
block: it is the supremum of Lemma 4. -/
theorem supCost_attained : ∀ {R K : Type} [ExpField R] [Enum K] (E : K → R),
    (∀ k, 0 ≤ E k) → K → ∃ k, supCost E = E k :=
  @Odp.Core.supCost_attained

/-- **Lemma 4.** A (𝒫, ℰ, δ)-ODP mechanism is (sup_{P ∈ 𝒫} ℰ(P), δ)-DP. -/
theorem lemma4 : ∀ {R X O K : Type} [ExpField R] [Enum O] [Enum K] [DecidableEq K]
    (Nbr : X → X → Prop) (M : Mechanism X O R) (κ : O → K) (E : K → R) (δ : R),
    ODP Nbr M κ E δ → DP Nbr M (supCost E) δ :=
  @Odp.Core.dp_of_odp_sup

/-- Lemma 4, bound form: block costs at most `ε` give (ε, δ)-DP. -/
theorem lemma4_bound : ∀ {R X O K : Type} [ExpField R] [Enum O] [Enum K] [DecidableEq K]
    (Nbr : X → X → Prop) (M : Mechanism X O R) (κ : O → K) (E : K → R) (δ ε : R),
    (∀ k, E k ≤ ε) → ODP Nbr M κ E δ → DP Nbr M ε δ :=
  @Odp.Core.dp_of_odp

/-- Lemma 4, output-wise form: costs at most `ε` give (ε, δ)-DP. -/
theorem lemma4_cost : ∀ {R X O : Type} [ExpField R] [Enum O] (Nbr : X → X → Prop)
    (M : Mechanism X O R) (cost : O → R) (δ ε : R),
    (∀ o, cost o ≤ ε) → ODPcost Nbr M cost δ → DP Nbr M ε δ :=
  @Odp.Core.dp_of_odpCost

/-- **Lemma 6.** If `M` is (P_k, ℰ(P_k), Δ(P_k))-subset DP for every block `P_k`, then `M` is
(𝒫, ℰ, ∑_k Δ(P_k))-ODP. -/
theorem lemma6 : ∀ {R X O K : Type} [ExpField R] [Enum O] [Enum K] [DecidableEq K]
    (Nbr : X → X → Prop) (M : Mechanism X O R) (κ : O → K) (E Δ : K → R),
    (∀ k, SubsetDP Nbr M (fun o => decide (κ o = k)) (E k) (Δ k)) → ODP Nbr M κ E (fsum Δ) :=
  @Odp.Core.odp_of_subsetDP

/-! ## §3 Lemma 20 (App. B) -/

/-- The two-round experiment: first `v ∼ p`, then `w ∼ k v`; by the chain rule,
`Pr((v, w) ∈ V) = ∑_v p(v) · Pr(k v ∈ V_v)` with `V_v = {w | (v, w) ∈ V}`. -/
theorem Pr2_is {R O O₂ : Type} [ExpField R] [Enum O] [Enum O₂] (p : Dist O R)
    (k : O → Dist O₂ R) (V : O → Event O₂) :
    Pr2 p k V = fsum (fun v => p.mass v * Pr (k v) (V v)) := rfl

/-- **Lemma 20.** Let `x⁰ ~ x¹`, let `M₁` be (𝒫, ℰ, δ)-ODP with `δ ≤ δ_t`, and let `M₂⁰(v)`,
`M₂¹(v)` satisfy `Pr(M₂⁰(v) ∈ 𝒱) ≤ e^{ε_t − ℰ(P_k)} Pr(M₂¹(v) ∈ 𝒱) + δ_t − δ` for `v ∈ P_k`.
Then for every `𝒱 ⊆ 𝒪₁ × 𝒪₂`,
`Pr((M₁(x⁰), M₂⁰(M₁(x⁰))) ∈ 𝒱) ≤ e^{ε_t} Pr((M₁(x¹), M₂¹(M₁(x¹))) ∈ 𝒱) + δ_t`.
(The paper's `ℰ(P_k) ≤ ε_t`, `ε_t ≥ 0`, `δ_t ≥ 0` are not needed.) -/
theorem lemma20 : ∀ {R X O O₂ K : Type} [ExpField R] [Enum O] [Enum O₂] [Enum K] [DecidableEq K]
    (Nbr : X → X → Prop) (x₀ x₁ : X), Nbr x₀ x₁ →
    ∀ (M₁ : Mechanism X O R) (κ : O → K) (E : K → R) (δ εt δt : R),
      ODP Nbr M₁ κ E δ → δ ≤ δt →
      ∀ (M₂₀ M₂₁ : O → Dist O₂ R),
        (∀ (v : O) (W : Event O₂), Pr (M₂₀ v) W ≤ exp (εt - E (κ v)) * Pr (M₂₁ v) W + (δt - δ)) →
        ∀ V : O → Event O₂, Pr2 (M₁ x₀) M₂₀ V ≤ exp εt * Pr2 (M₁ x₁) M₂₁ V + δt :=
  @Odp.Core.lemma20

/-! ## §4 Algorithm 1 and Theorem 7

A deterministic adaptive adversary is a finite tree (`Adv`): at a node it picks (Alg. 1, line 4)
a `Choice` — two databases `x₀, x₁`, a mechanism `M`, its output-wise ODP costs `cost` and
`δ_i` (`delta`) — and after the output `o` continues as `cont o`. The secret bit `b` selects the
database (`Choice.input`). -/

theorem choice_input_is {X O R : Type} [ExpField R] [Enum O] (c : Choice X O R) :
    c.input false = c.x₀ ∧ c.input true = c.x₁ := ⟨rfl, rfl⟩

/-- Alg. 1, line 4 and lines 7–8: an adversary is valid for the remaining budget `(ε, δ)` when
at every node `x₀ ~ x₁`, `M` is ODP with the declared costs and `δ_i`, every cost is at most
`ε_r`, `δ_i ≤ δ_r`, and after each output `o` the rest is valid for `(ε_r − cost o, δ_r − δ_i)`. -/
theorem valid_is {R X O : Type} [ExpField R] [Enum O] (Nbr : X → X → Prop) (c : Choice X O R)
    (cont : O → Adv X O R) (ε δ : R) :
    (Adv.leaf : Adv X O R).Valid Nbr ε δ = True ∧
      ((Adv.node c cont).Valid Nbr ε δ =
        (Nbr c.x₀ c.x₁ ∧ ODPcost Nbr c.M c.cost c.delta ∧ (∀ o, c.cost o ≤ ε) ∧ c.delta ≤ δ ∧
          ∀ o, (cont o).Valid Nbr (ε - c.cost o) (δ - c.delta))) :=
  ⟨rfl, rfl⟩

/-- The probability that Alg. 1 with secret bit `b` returns a view (the list of outputs
`A_1, A_2, …`) in `V`, round by round by the chain rule. -/
theorem prob_is {R X O : Type} [ExpField R] [Enum O] (b : Bool) (c : Choice X O R)
    (cont : O → Adv X O R) (V : List O → Bool) :
    (Adv.leaf : Adv X O R).prob b V = (if V [] then 1 else 0) ∧
      (Adv.node c cont).prob b V
        = fsum (fun o => (c.M (c.input b)).mass o * (cont o).prob b (fun w => V (o :: w))) :=
  ⟨rfl, rfl⟩

/-- `prob b A` is a probability distribution on views: total 1, complements add up to 1. -/
theorem prob_univ : ∀ {R X O : Type} [ExpField R] [Enum O] (b : Bool) (A : Adv X O R),
    A.prob b (fun _ => true) = 1 :=
  @Odp.Core.Adv.prob_univ

theorem prob_compl : ∀ {R X O : Type} [ExpField R] [Enum O] (b : Bool) (A : Adv X O R)
    (V : List O → Bool), A.prob b V + A.prob b (fun w => !V w) = 1 :=
  @Odp.Core.Adv.prob_compl

/-- **Theorem 7** (deterministic adaptive adversary). For every adversary valid for the budget
`(ε_t, δ_t)` (`0 ≤ ε_t`, `0 ≤ δ_t`) and every set of views `𝒱`:
`Pr(V⁰ ∈ 𝒱) ≤ e^{ε_t} Pr(V¹ ∈ 𝒱) + δ_t`. -/
theorem theorem7 : ∀ {R X O : Type} [ExpField R] [Enum O] (Nbr : X → X → Prop) (A : Adv X O R)
    (ε δ : R), 0 ≤ ε → 0 ≤ δ → A.Valid Nbr ε δ →
      ∀ V : List O → Bool, A.prob false V ≤ exp ε * A.prob true V + δ :=
  @Odp.Core.odp_composition

/-- **Theorem 7** (randomised adversary): the coins `r ∼ ρ` are drawn first (Alg. 1, line 1)
and are part of the view; with coins `r` the adversary plays `A r`. -/
theorem theorem7_randomized : ∀ {R X O : Type} [ExpField R] [Enum O] {C : Type} [Enum C]
    (Nbr : X → X → Prop) (ρ : Dist C R) (A : C → Adv X O R) (ε δ : R),
    0 ≤ ε → 0 ≤ δ → (∀ r, (A r).Valid Nbr ε δ) →
    ∀ V : C → List O → Bool,
      fsum (fun r => ρ.mass r * (A r).prob false (V r))
        ≤ exp ε * fsum (fun r => ρ.mass r * (A r).prob true (V r)) + δ :=
  @Odp.Core.odp_composition_randomized

/-- Alg. 1 with the triple `(𝒫_i, ℰ_i, δ_i)` literally: a `PChoice` gives the partition by labels
`κ : O → K` and the block costs `E`. Line 4 asks `sup_{P ∈ 𝒫_i} ℰ_i(P) ≤ ε_r`; lines 7–8
subtract the cost of the realised block. -/
theorem pvalid_is {R X O K : Type} [ExpField R] [Enum O] [Enum K] [DecidableEq K]
    (Nbr : X → X → Prop) (c : PChoice X O K R) (cont : O → PAdv X O K R) (ε δ : R) :
    (PAdv.leaf : PAdv X O K R).Valid Nbr ε δ = True ∧
      ((PAdv.node c cont).Valid Nbr ε δ =
        (Nbr c.x₀ c.x₁ ∧ ODP Nbr c.M c.κ c.E c.delta ∧ supCost c.E ≤ ε ∧ c.delta ≤ δ ∧
          ∀ o, (cont o).Valid Nbr (ε - c.E (c.κ o)) (δ - c.delta))) :=
  ⟨rfl, rfl⟩

/-- Its views have the probabilities of the output-wise adversary with `cost o = ℰ_i(P_{i,κ o})`. -/
theorem pprob_is {R X O K : Type} [ExpField R] [Enum O] [Enum K] [DecidableEq K] (b : Bool)
    (c : PChoice X O K R) (cont : O → PAdv X O K R) (A : PAdv X O K R) (V : List O → Bool) :
    A.prob b V = A.toAdv.prob b V ∧
      (PAdv.leaf : PAdv X O K R).toAdv = Adv.leaf ∧
      (PAdv.node c cont).toAdv
        = Adv.node ⟨c.x₀, c.x₁, c.M, fun o => c.E (c.κ o), c.delta⟩ (fun o => (cont o).toAdv) :=
  ⟨rfl, rfl, rfl⟩

/-- Alg. 1's `I` rounds, the adversary choosing each round from the outputs seen so far
(`𝒜(R, A_1, …, A_{i−1})`). -/
theorem ofHistory_is {R X O K : Type} [ExpField R] [Enum O] (π : List O → PChoice X O K R)
    (n : Nat) (h : List O) :
    PAdv.ofHistory π 0 h = .leaf ∧
      PAdv.ofHistory π (n + 1) h = .node (π h) (fun o => PAdv.ofHistory π n (h ++ [o])) :=
  ⟨rfl, rfl⟩

/-- **Theorem 7** with explicit partitions. -/
theorem theorem7_partition : ∀ {R X O K : Type} [ExpField R] [Enum O] [Enum K] [DecidableEq K]
    (Nbr : X → X → Prop) (A : PAdv X O K R) (ε δ : R), 0 ≤ ε → 0 ≤ δ → A.Valid Nbr ε δ →
      ∀ V : List O → Bool, A.prob false V ≤ exp ε * A.prob true V + δ :=
  @Odp.Core.odp_composition_partition

/-- **Theorem 7** for Alg. 1 as written: `I` rounds, each chosen from the history. -/
theorem theorem7_alg1 : ∀ {R X O K : Type} [ExpField R] [Enum O] [Enum K] [DecidableEq K]
    (Nbr : X → X → Prop) (π : List O → PChoice X O K R) (I : Nat) (εt δt : R),
    0 ≤ εt → 0 ≤ δt → (PAdv.ofHistory π I []).Valid Nbr εt δt →
    ∀ V : List O → Bool,
      (PAdv.ofHistory π I []).prob false V
        ≤ exp εt * (PAdv.ofHistory π I []).prob true V + δt :=
  @Odp.Core.odp_composition_alg1

/-! ## §5 The accountant's ledger and its certificates

The accountant (`odp.Accountant`) runs Alg. 1 on natural numbers in units of `1/D`. -/

/-- Alg. 1, line 4 (`admits`: `charged ≤ supEps`, `supEps ≤ ε_r`, `δ_i ≤ δ_r`) and lines 7–8
(`update`), and a whole ledger (`replay`: `some` final budget if every row is admitted). -/
theorem ledger_rules_are (s : State) (e : Entry) (es : List Entry) :
    admits s e = (decide (e.charged ≤ e.supEps) && decide (e.supEps ≤ s.eps)
        && decide (e.delta ≤ s.delta)) ∧
      update s e = { eps := s.eps - e.charged, delta := s.delta - e.delta } ∧
      replay s [] = some s ∧
      replay s (e :: es) = (if admits s e then replay (update s e) es else none) :=
  ⟨rfl, rfl, rfl, rfl⟩

/-- The certificate's rows: Lemma 4 (`blocksOk`: `supEps` is the largest block cost, the realised
block exists, the charge is its cost), Lemma 6 (`deltasOk`: `δ_i ≥ ∑_k Δ_k`), and no refund
without a realised block (`refundJustified`). -/
theorem certificate_rows_are (e : Entry) (bs : List Nat) (k b x : Nat) (hasBlocks : Bool) :
    blocksOk e bs k = (decide (e.supEps = listMax bs) && decide (k < listLen bs)
        && decide (e.charged = blockAt k bs)) ∧
      deltasOk e bs = decide (listSum bs ≤ e.delta) ∧
      refundJustified e hasBlocks = (decide (e.supEps ≤ e.charged) || hasBlocks) ∧
      listMax [] = 0 ∧ listMax (x :: bs) = (if decide (listMax bs ≤ x) then x else listMax bs) ∧
      listLen [] = 0 ∧ listLen (x :: bs) = listLen bs + 1 ∧
      blockAt k [] = 0 ∧ blockAt k (b :: bs) = (if decide (k = 0) then b else blockAt (k - 1) bs) ∧
      listSum [] = 0 ∧ listSum (x :: bs) = x + listSum bs :=
  ⟨rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl⟩

/-- What `odp verify --kernel` asks the kernel to decide: `checkCert` replays the certificate,
each step passing `admits` and its rows (`stepRowsOk`): the Lemma 4 row, the Lemma 6 row, the
`mech` row (`stepMechOk`: the step's classes, costs and `δ` are the Lean cost function of the
named built-in mechanism's parameters, `Odp.LedgerCore.mechOk`) and the refund rule. -/
theorem checkCert_is (s : State) (c : CertStep) (cs : List CertStep) :
    stepMechOk c = (match c.blocks with
      | some (bs, _) => mechOk c.entry bs true c.mech.kind c.mech.params c.mech.groups
      | none => mechOk c.entry [] false c.mech.kind c.mech.params c.mech.groups) ∧
    stepRowsOk c = ((match c.blocks with
        | some (bs, k) => blocksOk c.entry bs k
        | none => true) &&
      (match c.deltas with
        | some ds => deltasOk c.entry ds
        | none => true) &&
      stepMechOk c &&
      refundJustified c.entry c.blocks.isSome) ∧
    checkCert s [] = some s ∧
    checkCert s (c :: cs)
      = (if admits s c.entry && stepRowsOk c then checkCert (update s c.entry) cs else none) :=
  ⟨rfl, rfl, rfl, rfl⟩

theorem totals_are (e : Entry) (es : List Entry) :
    totalCharged [] = 0 ∧ totalCharged (e :: es) = e.charged + totalCharged es ∧
      totalDelta [] = 0 ∧ totalDelta (e :: es) = e.delta + totalDelta es :=
  ⟨rfl, rfl, rfl, rfl⟩

/-- **Replay soundness.** A ledger that replays to `t` spends at most the budget, and `t` is the
budget minus the totals. -/
theorem replay_sound : ∀ (es : List Entry) (s t : State), replay s es = some t →
    totalCharged es ≤ s.eps ∧ totalDelta es ≤ s.delta ∧
      t.eps = s.eps - totalCharged es ∧ t.delta = s.delta - totalDelta es :=
  @Odp.LedgerCore.replay_sound

/-- **What an accepted certificate means**: its rows replay to `t`, and every step's Lemma 4,
Lemma 6 and refund rows hold. -/
theorem checkCert_sound : ∀ (cs : List CertStep) (s t : State), checkCert s cs = some t →
    replay s (cs.map CertStep.entry) = some t ∧ ∀ c ∈ cs, stepRowsOk c = true :=
  @Odp.LedgerCore.checkCert_sound

/-- A certificate checked in chunks (as `odp verify --kernel` does, 2,000 steps per chunk): the
first chunk ends where the second starts. -/
theorem checkCert_append : ∀ (l₁ l₂ : List CertStep) (s t u : State),
    checkCert s l₁ = some t → checkCert t l₂ = some u → checkCert s (l₁ ++ l₂) = some u :=
  @Odp.LedgerCore.checkCert_append

/-- A request to the accountant (`Request`: databases `x₀, x₁`, a mechanism, its declared
`sup ℰ` (`supEps`), block costs `blocks`, the block index of each output `block`, and `δ_i`, all
in units of `1/D`), the row it writes when it releases `o`, its cost in `R`, and the round of
Alg. 1 it is. -/
theorem request_is {R X O : Type} [ExpField R] [Enum O] (D : Nat) (s : State) (r : Request X O R)
    (o : O) :
    r.entry o = { supEps := r.supEps, charged := blockAt (r.block o) r.blocks, delta := r.delta } ∧
      r.cost D o = (amt D (blockAt (r.block o) r.blocks) : R) ∧
      r.toChoice D = { x₀ := r.x₀, x₁ := r.x₁, M := r.M, cost := r.cost D,
                       delta := amt D r.delta } ∧
      r.admitted s = (decide (r.supEps ≤ s.eps) && decide (r.delta ≤ s.delta)) :=
  ⟨rfl, rfl, rfl, rfl⟩

/-- What the accountant takes on trust about a request (the only hypothesis of §5): the
databases are neighbours, the mechanism's declared ODP guarantee holds, and its declared blocks
pass the certificate's Lemma 4 row for every output. -/
theorem honest_is {R X O : Type} [ExpField R] [Enum O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) (cont : O → Strategy X O R) :
    (r.Honest Nbr D ↔ (Nbr r.x₀ r.x₁ ∧ ODPcost Nbr r.M (r.cost D) (amt D r.delta) ∧
      ∀ o, blocksOk (r.entry o) r.blocks (r.block o) = true)) ∧
    ((Strategy.stop : Strategy X O R).AllHonest Nbr D = True) ∧
    ((Strategy.ask r cont).AllHonest Nbr D = (r.Honest Nbr D ∧ ∀ o, (cont o).AllHonest Nbr D)) :=
  ⟨Iff.rfl, rfl, rfl⟩

/-- The accountant running a strategy from the remaining budget `s`: a request that is not
admitted ends the run before any noise is drawn; after output `o` it continues from
`update s (r.entry o)`. `runRows` are the rows it writes; `rowsAlong` the rows a certificate
lists. -/
theorem enforce_is {R X O : Type} [ExpField R] [Enum O] (D : Nat) (s : State) (r : Request X O R)
    (cont : O → Strategy X O R) (o : O) (os : List O) :
    enforce D s (.stop : Strategy X O R) = .leaf ∧
      enforce D s (.ask r cont)
        = (if r.admitted s then
            .node (r.toChoice D) (fun o => enforce D (update s (r.entry o)) (cont o))
          else .leaf) ∧
      runRows s (.stop : Strategy X O R) os = [] ∧ runRows s (.ask r cont) [] = [] ∧
      runRows s (.ask r cont) (o :: os)
        = (if r.admitted s then r.entry o :: runRows (update s (r.entry o)) (cont o) os
          else []) ∧
      (Strategy.stop : Strategy X O R).rowsAlong os = [] ∧ (Strategy.ask r cont).rowsAlong [] = [] ∧
      (Strategy.ask r cont).rowsAlong (o :: os) = r.entry o :: (cont o).rowsAlong os :=
  ⟨rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl⟩

/-- **The accountant enforces Alg. 1's validity condition**: with honest requests, the
experiment it runs from the budget `s` is valid for `(s.eps / D, s.delta / D)`. -/
theorem enforce_valid : ∀ {R X O : Type} [ExpField R] [Enum O] (Nbr : X → X → Prop) (D : Nat),
    0 < D → ∀ (A : Strategy X O R) (s : State), A.AllHonest Nbr D →
      (enforce D s A).Valid Nbr (amt D s.eps) (amt D s.delta) :=
  @Odp.Core.enforce_valid

/-- **Theorem 7 for the accountant**: every strategy of honest requests, run by the accountant
from the budget `(ε_t, δ_t) = (s.eps / D, s.delta / D)`, is (ε_t, δ_t)-DP as a whole. -/
theorem accountant_composition : ∀ {R X O : Type} [ExpField R] [Enum O] (Nbr : X → X → Prop)
    (D : Nat), 0 < D → ∀ (A : Strategy X O R) (s : State), A.AllHonest Nbr D →
      ∀ V : List O → Bool,
        (enforce D s A).prob false V
          ≤ exp (amt D s.eps) * (enforce D s A).prob true V + amt D s.delta :=
  @Odp.Core.accountant_composition

/-- **Certificate soundness.** If `replay` accepts the rows of a run (outputs `os`) from the
budget `s`, then they are exactly the rows the accountant writes along that run, the totals fit
in the budget, and the accountant's experiment is (s.eps / D, s.delta / D)-DP (for honest
requests). -/
theorem certificate_sound : ∀ {R X O : Type} [ExpField R] [Enum O] (Nbr : X → X → Prop)
    (D : Nat), 0 < D → ∀ (A : Strategy X O R) (s t : State) (os : List O),
    A.AllHonest Nbr D → replay s (A.rowsAlong os) = some t →
      runRows s A os = A.rowsAlong os ∧
        totalCharged (A.rowsAlong os) ≤ s.eps ∧ totalDelta (A.rowsAlong os) ≤ s.delta ∧
        ∀ V : List O → Bool,
          (enforce D s A).prob false V
            ≤ exp (amt D s.eps) * (enforce D s A).prob true V + amt D s.delta :=
  @Odp.Core.certificate_sound

/-- **A certificate the kernel accepted** (`checkCert s cs = some t`, what `odp verify --kernel`
decides) whose rows are those of a run of honest requests: every step's rows hold, the rows are
the accountant's own, they fit in the budget, and the run is (s.eps / D, s.delta / D)-DP. -/
theorem checkCert_certificate_sound : ∀ {R X O : Type} [ExpField R] [Enum O]
    (Nbr : X → X → Prop) (D : Nat), 0 < D →
    ∀ (A : Strategy X O R) (s t : State) (os : List O) (cs : List CertStep),
    A.AllHonest Nbr D → checkCert s cs = some t → cs.map CertStep.entry = A.rowsAlong os →
      (∀ c ∈ cs, stepRowsOk c = true) ∧ runRows s A os = A.rowsAlong os ∧
        totalCharged (A.rowsAlong os) ≤ s.eps ∧ totalDelta (A.rowsAlong os) ≤ s.delta ∧
        ∀ V : List O → Bool,
          (enforce D s A).prob false V
            ≤ exp (amt D s.eps) * (enforce D s A).prob true V + amt D s.delta :=
  @Odp.Core.checkCert_certificate_sound

/-- The sample certificate `Odp/Certs/Example.lean`, decided by the kernel: budget `(1, 10⁻³)`
with `D = 10⁶`, two rounds, remaining budget `(0.6, 9.7·10⁻⁴)`. -/
theorem example_certificate :
    replay ⟨1000000, 1000⟩ [⟨300000, 100000, 10⟩, ⟨300000, 300000, 20⟩] = some ⟨600000, 970⟩ :=
  Odp.Certs.Example.run_ok

/-! ## §6 Mechanisms and certificates of their runs

The ODP guarantees of the mechanisms odp runs (Sec. 4–6 of the paper) are stated in full in
`Odp/Mech/Spec.lean`, and the link from a kernel-accepted certificate of a run of built-in
mechanisms to Theorem 7 (`Odp.Certs.certificate_sound_builtin`) in `Odp/Certs/Spec.lean`: files of
the same shape (each result written out and proved by `@` the theorem that claims it; they
hold only `example`s, so they declare no names), with the main theorems' axioms pinned in
`scripts/lean/pinned.txt`. -/

/-! ## §7 Composition lanes: a laned session is (ε_t, δ_t)-DP

A laned ledger divides `(ε_t, δ_t)` into lanes with shares `(ε_j, δ_j)` (`Share`: kind, ε, δ in
units of `1/D`), each a privacy filter: the ODP lane (Alg. 1, first), and zCDP, Rényi and
advanced-composition lanes whose budgets are `Slot`s and whose rounds are `Cost`s. The cited
theorems are hypotheses, written out below as the constructors of the structures that carry them
(never axioms): Haney, Shoemate, Tian, Vadhan, Vyrros, Xu, Zhang 2023 — Thm. 1.8 (Lyu 2022;
Vadhan–Zhang 2023: concurrent composition), Thm. 4.10 (zCDP filter), Thm. 4.6 = 1.22 (Rényi
filter at a fixed order), Thm. 3.7 / Cor. 3.5 (the Whitehouse et al. filter) — and Theorem 7 for
the ODP lane (proved above for the accountant, §5). -/

/-- The ledger rules a laned certificate passes (what `odp verify --kernel` decides besides
`checkCert`): the shares add up to the budget exactly, every charge goes to a coordinate of a
lane's budget, and every lane holds its charges — the ODP lane only first and never charged, a
zCDP or advanced lane in every coordinate (`Σ ≤ budget`), a Rényi lane in some order. -/
theorem lanesOk_is (total : State) (hs : List Share) (ss : List Slot) (cs : List Cost)
    (l k : Nat) :
    lanesOk total hs ss cs = (decide (sharesEps hs = total.eps) &&
        decide (sharesDelta hs = total.delta) && costsKnown ss cs && lanesFit 0 cs ss hs) ∧
      laneFits l k cs ss =
        (if decide (k = 0) then decide (l = 0) && !(laneCharged l cs)
         else if decide (k = 1) then allFit l cs ss
         else if decide (k = 2) then !(laneCharged l cs) || someFit l cs ss
         else if decide (k = 3) then allFit l cs ss
         else false) :=
  ⟨rfl, rfl⟩

/-- The sums a lane's coordinates are checked on: `costSum l k cs` adds the costs charged to
coordinate `k` of lane `l`; `allFit` (every coordinate of lane `l` within its slot's budget) and
`someFit` (some coordinate). -/
theorem laneSums_is (l k : Nat) (c : Cost) (cs : List Cost) (s : Slot) (ss : List Slot) :
    costSum l k [] = 0 ∧
      costSum l k (c :: cs) =
        (if decide (c.lane = l) && decide (c.coord = k) then c.amount else 0) + costSum l k cs ∧
      allFit l cs [] = true ∧
      allFit l cs (s :: ss) = ((if decide (s.lane = l) then decide (costSum l s.coord cs ≤ s.budget)
        else true) && allFit l cs ss) ∧
      someFit l cs [] = false ∧
      someFit l cs (s :: ss) = ((decide (s.lane = l) && decide (costSum l s.coord cs ≤ s.budget))
        || someFit l cs ss) :=
  ⟨rfl, rfl, rfl, rfl, rfl, rfl⟩

/-- The cited concurrent composition theorem, as the constructor of `SessionTheorems`: whatever
interactive mechanisms `IM`, "(ε, δ)-DP" `IsDP` and concurrent composition `concurrent` are, the
hypothesis is **Haney et al. 2023, Thm. 1.8** with basic composition — interactive mechanisms,
each `(ε_j, δ_j)`-DP, composed concurrently are `(Σε_j, Σδ_j)`-DP. -/
def sessionTheorems_is : ∀ {R : Type} [ExpField R] {IM : Type} {D : Nat}
    (IsDP : IM → R → R → Prop) (concurrent : List IM → IM),
    (∀ ls : List (IM × Share), (∀ p ∈ ls, IsDP p.1 (amt D p.2.eps) (amt D p.2.delta)) →
      IsDP (concurrent (ls.map Prod.fst)) (amt D (sharesEps (ls.map Prod.snd)))
        (amt D (sharesDelta (ls.map Prod.snd)))) →
    Odp.Core.Lanes.SessionTheorems R IM D :=
  @Odp.Core.Lanes.SessionTheorems.mk

/-- The lanes' filter theorems, as the constructor of `LaneTheorems` (lane `j` is `lane j`, with
the share `shareAt j hs`): the ODP lane, first, whose steps replay from its share, is
`(ε_0, δ_0)`-DP (**Theorem 7**); a zCDP lane whose charges fit its `ρ` (**Haney et al. 2023,
Thm. 4.10**, and its budget's conversion, checked numerically by `odp verify`), a Rényi lane some
order of which holds its charges (**Thm. 4.6 = 1.22** at each order and a union bound over the
orders), an advanced-composition lane whose `Σε²` and `Σδ` fit (**Thm. 3.7 / Cor. 3.5**) are
`(ε_j, δ_j)`-DP. -/
theorem laneTheorems_is : ∀ {R : Type} [ExpField R] {IM : Type} {D : Nat}
    (T : Odp.Core.Lanes.SessionTheorems R IM D) (lane : Nat → IM) (hs : List Share)
    (steps : List CertStep) (ss : List Slot) (cs : List Cost),
    (∀ (h : Share) (t : State), Odp.Core.Lanes.shareAt 0 hs = some h → h.kind = laneOdp →
      checkCert ⟨h.eps, h.delta⟩ steps = some t → T.IsDP (lane 0) (amt D h.eps) (amt D h.delta)) →
    (∀ (j : Nat) (h : Share), Odp.Core.Lanes.shareAt j hs = some h → h.kind = laneZcdp →
      allFit j cs ss = true → T.IsDP (lane j) (amt D h.eps) (amt D h.delta)) →
    (∀ (j : Nat) (h : Share), Odp.Core.Lanes.shareAt j hs = some h → h.kind = laneRenyi →
      (laneCharged j cs = false ∨ someFit j cs ss = true) →
        T.IsDP (lane j) (amt D h.eps) (amt D h.delta)) →
    (∀ (j : Nat) (h : Share), Odp.Core.Lanes.shareAt j hs = some h → h.kind = laneAdvanced →
      allFit j cs ss = true → T.IsDP (lane j) (amt D h.eps) (amt D h.delta)) →
    Odp.Core.Lanes.LaneTheorems T lane hs steps ss cs :=
  @Odp.Core.Lanes.LaneTheorems.mk

/-- **A laned session is (ε_t, δ_t)-DP.** If the kernel accepted a laned certificate —
`lanesOk total hs ss cs` and `checkCert` of the ODP lane's steps from its share — then, from the
lanes' filter theorems and Haney et al. 2023, Thm. 1.8 (the hypotheses above), the concurrent
composition of the session's lanes is `(total.eps / D, total.delta / D)`-DP. -/
theorem session_dp : ∀ {R : Type} [ExpField R] {IM : Type} {D : Nat}
    (T : Odp.Core.Lanes.SessionTheorems R IM D) (lane : Nat → IM) (total : State)
    (hs : List Share) (ss : List Slot) (cs : List Cost) (steps : List CertStep) (t : State),
    Odp.Core.Lanes.LaneTheorems T lane hs steps ss cs → lanesOk total hs ss cs = true →
      checkCert (odpShare hs) steps = some t →
        T.IsDP (T.concurrent ((Odp.Core.Lanes.lanePairs lane 0 hs).map Prod.fst))
          (amt D total.eps) (amt D total.delta) :=
  @Odp.Core.Lanes.session_dp

end OdpSpec
