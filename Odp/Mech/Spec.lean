/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# The mechanism results of `Odp/Mech`, stated in full, in the paper's words and numbering

Hartmann, Bindschaedler, Bentkamp, West 2022 (*Privacy accounting εconomics*, PoPETs).
Each `example` below writes out in full one claimed mechanism result — every hypothesis and the whole conclusion — and proves it by
the theorem of `Odp/Mech` that carries it, applied to exactly those hypotheses. A theorem that
is weakened (a hypothesis added or strengthened, a conclusion narrowed, a cost or a `δ`
enlarged) no longer proves its example, and this file fails to compile. The cost functions and
the mechanisms' laws that the statements name are pinned to the paper's formulas by `rfl`
examples next to them.

**The hypotheses** these results rest on — the noise primitives (`LapNoise`, `LapTail`,
`TailNoise`, `IntLaw.ShiftWithin`, `Iter.ShiftDominated`), the numerical bounds computed by
tested Python code (`GaussNoise`'s δ, `Iter.PrefixDP`, the declared `Iter.StepsDP`), the stated
data facts (`IQRDataFacts`, `ERMRelease`, `TestSensitivity`, `UtilitySensitivity`,
`Iter.L1Sensitive`) and the interface `MedianDP` — are defined in
`Odp/Mech/Common/Noise.lean`, **the trust boundary**, which says for each which real distribution, computation or data fact
satisfies it and why. The last section below states a genuine witness of each (a law of the
named kind that depends on the data; `Odp/Mech/Common/Witnesses.lean`), except `LapNoise`,
`GaussNoise` and `IntLaw.ShiftBound`: no finitely supported law is one, and the real discrete Laplace and
Gaussian need infinite sums (the trust boundary's "Which hypotheses have genuine witnesses").
M_toy, the grid Laplace mechanism, randomized response, the exponential median and odp's `M_IQR`
take no noise hypothesis: their laws are written out (§0 and "The clamped discrete Laplace
law"). Each example's doc comment names the hypotheses it uses. **§0 writes out every definition
the statements depend on** (hypothesis structures by the types of their constructor and fields,
predicates by `Iff.rfl`, laws by their masses), so a changed definition — a field added to a
hypothesis, a changed law — fails this file. Definition 9 (`PTRAt`) is the paper's definition
and is written out below. The grid sensitivity `|n(x) − n(x')| ≤ m` of the Laplace, Gaussian and SVT queries is
written out in the statements (`hn`, `hA`, `hqs`).

Where a statement is narrower than the paper (finite outputs: clamped windows and finite grids;
discrete noise on the grid; `δ₁ + δ₂` in Lemma 10; deterministic analysts and stopping rules;
stops nondecreasing), the file that proves it says so in its header; the doc comments below
repeat it.
-/
module

public import Odp.Mech.Laplace.Law
public import Odp.Mech.Laplace.Privacy
public import Odp.Mech.Gaussian.Privacy
public import Odp.Mech.Toy.Privacy
public import Odp.Mech.RandomizedResponse.Privacy
public import Odp.Mech.SVT.Privacy
public import Odp.Mech.Common.NoiseSat
public import Odp.Mech.PTR.Median
public import Odp.Mech.TestRelease.Privacy
public import Odp.Mech.Iterative.Privacy
public import Odp.Mech.Common.Witnesses

@[expose] public section

set_option autoImplicit false

namespace OdpSpec.Mech

open Odp.Core Odp.Core.ExpField Odp.Mech Odp.Mech.Iter

/-! ## §0 What the hypotheses and the laws are, written out

Every definition that a statement below depends on, outside `Odp/Core` (whose definitions
`Odp/Core/Spec.lean` writes out), is written out here: each **hypothesis structure** by the type
of its only constructor (so a field added, removed or changed fails to compile here) and the
types of its fields; each **predicate** by `Iff.rfl` against its defining formula; each **law**
and mechanism by its masses (`rfl`). A finite type's `Enum` instance is not written out: `Enum`'s
own fields (`Odp/Core/Spec.lean`) make its list of elements a duplicate-free listing of the
whole type, so a sum over it is the same, up to the order of its terms, for every instance. -/

/-! ### The hypotheses of the trust boundary (`Odp/Mech/Common/Noise.lean`) -/

/-- `Bdd f`: `f` is nonnegative and bounded; `ind S` is the indicator of `S ⊆ ℤ`. -/
example {R : Type} [ExpField R] (f : Int → R) (S : Int → Bool) (z : Int) :
    (Bdd f ↔ ∃ B : R, ∀ z, 0 ≤ f z ∧ f z ≤ B) ∧ (ind S z : R) = (if S z then 1 else 0) :=
  ⟨Iff.rfl, rfl⟩

/-- **`Expect`**: an expectation on bounded nonnegative functions — nonnegative, additive,
nonnegatively homogeneous, `E 1 = 1` — and nothing else. -/
example : ∀ {R : Type} [ExpField R] (E : (Int → R) → R), (∀ f, Bdd f → 0 ≤ E f) →
    (∀ f g, Bdd f → Bdd g → E (fun z => f z + g z) = E f + E g) →
    (∀ (a : R) (f : Int → R), 0 ≤ a → Bdd f → E (fun z => a * f z) = a * E f) →
    E (fun _ => 1) = 1 → Expect R :=
  @Expect.mk

example : ∀ {R : Type} [ExpField R] (N : Expect R) (f : Int → R), Bdd f → 0 ≤ N.E f :=
  @Expect.nonneg

example : ∀ {R : Type} [ExpField R] (N : Expect R) (f g : Int → R), Bdd f → Bdd g →
    N.E (fun z => f z + g z) = N.E f + N.E g :=
  @Expect.add

example : ∀ {R : Type} [ExpField R] (N : Expect R) (a : R) (f : Int → R), 0 ≤ a → Bdd f →
    N.E (fun z => a * f z) = a * N.E f :=
  @Expect.smul

example : ∀ {R : Type} [ExpField R] (N : Expect R), N.E (fun _ => 1) = 1 :=
  @Expect.one

/-- **`LapNoise α`** (a unit shift of the noise costs `e^α`): an `Expect` and the two shift bounds,
nothing else. -/
example : ∀ {R : Type} [ExpField R] {α : R} (toExpect : Expect R),
    (∀ f, Bdd f → toExpect.E (fun z => f (z + 1)) ≤ exp α * toExpect.E f) →
    (∀ f, Bdd f → toExpect.E (fun z => f (z - 1)) ≤ exp α * toExpect.E f) → LapNoise R α :=
  @LapNoise.mk

example : ∀ {R : Type} [ExpField R] {α : R}, LapNoise R α → Expect R :=
  @LapNoise.toExpect

example : ∀ {R : Type} [ExpField R] {α : R} (L : LapNoise R α) (f : Int → R), Bdd f →
    L.E (fun z => f (z + 1)) ≤ exp α * L.E f :=
  @LapNoise.shift_up

example : ∀ {R : Type} [ExpField R] {α : R} (L : LapNoise R α) (f : Int → R), Bdd f →
    L.E (fun z => f (z - 1)) ≤ exp α * L.E f :=
  @LapNoise.shift_down

/-- **`LapTail β`** (SVT's query-noise tail `G t = Pr[ν ≥ t]`): in `[0, 1]`, antitone,
`G t ≤ e^β G (t + 1)`. -/
example : ∀ {R : Type} [ExpField R] {β : R} (G : Int → R), (∀ t, 0 ≤ G t) → (∀ t, G t ≤ 1) →
    (∀ t, G (t + 1) ≤ G t) → (∀ t, G t ≤ exp β * G (t + 1)) → LapTail R β :=
  @LapTail.mk

example : ∀ {R : Type} [ExpField R] {β : R} (G : Int → R) (h0 : ∀ t, 0 ≤ G t)
    (h1 : ∀ t, G t ≤ 1) (h2 : ∀ t, G (t + 1) ≤ G t) (h3 : ∀ t, G t ≤ exp β * G (t + 1)),
    (LapTail.mk G h0 h1 h2 h3).G = G := by
  intros; rfl

/-- **`TailNoise c`** (an integer noise through its tail `G t = Pr(Z ≥ t)`): in `[0, 1]`,
antitone, one threshold step costs `e^c` on both sides. -/
example : ∀ {R : Type} [ExpField R] {c : R} (G : Int → R), (∀ t, 0 ≤ G t) → (∀ t, G t ≤ 1) →
    (∀ t, G (t + 1) ≤ G t) → (∀ t, G t ≤ exp c * G (t + 1)) →
    (∀ t, 1 - G (t + 1) ≤ exp c * (1 - G t)) → TailNoise R c :=
  @TailNoise.mk

example : ∀ {R : Type} [ExpField R] {c : R} (G : Int → R) (h0 : ∀ t, 0 ≤ G t)
    (h1 : ∀ t, G t ≤ 1) (h2 : ∀ t, G (t + 1) ≤ G t) (h3 : ∀ t, G t ≤ exp c * G (t + 1))
    (h4 : ∀ t, 1 - G (t + 1) ≤ exp c * (1 - G t)), (TailNoise.mk G h0 h1 h2 h3 h4).G = G := by
  intros; rfl

/-- **`IntLaw`** (the law of an integer noise on all subsets of ℤ): a finitely additive
probability. -/
example : ∀ {R : Type} [ExpField R] (P : (Int → Bool) → R), (∀ B, 0 ≤ P B) →
    P (fun _ => true) = 1 →
    (∀ B C : Int → Bool, (∀ z, B z = true → C z = false) → P (fun z => B z || C z) = P B + P C) →
    IntLaw R :=
  @IntLaw.mk

example : ∀ {R : Type} [ExpField R] (P : (Int → Bool) → R) (h0 : ∀ B, 0 ≤ P B)
    (h1 : P (fun _ => true) = 1)
    (h2 : ∀ B C : Int → Bool, (∀ z, B z = true → C z = false) →
      P (fun z => B z || C z) = P B + P C), (IntLaw.mk P h0 h1 h2).P = P := by
  intros; rfl

/-- **`IntLaw.ShiftBound`**, **`IntLaw.ShiftWithin`** and the push-forward `IntLaw.map`. -/
example {R V : Type} [ExpField R] [Enum V] [DecidableEq V] (W : IntLaw R) (c ε : R) (n : Nat)
    (f : Int → V) (v : V) :
    (W.ShiftBound c ↔ ∀ B : Int → Bool, W.P (fun z => B (z + 1)) ≤ exp c * W.P B ∧
      W.P (fun z => B (z - 1)) ≤ exp c * W.P B) ∧
    (W.ShiftWithin n ε ↔ ∀ (B : Int → Bool) (s : Int), s.natAbs ≤ n →
      W.P (fun z => B (z + s)) ≤ exp ε * W.P B) ∧
    (W.map f).mass v = W.P (fun z => decide (f z = v)) :=
  ⟨Iff.rfl, Iff.rfl, rfl⟩

/-- **`Iter.ShiftDominated N r`**: moving the centre by `s` costs `e^{|s| r}` at every output. -/
example {R C : Type} [ExpField R] [Enum C] (N : Int → Dist C R) (r : R) :
    ShiftDominated N r ↔
      ∀ (u u' : Int) (c : C), (N u).mass c ≤ exp (natR (u - u').natAbs * r) * (N u').mass c :=
  Iff.rfl

/-- **`GaussNoise m ε δ`**: an `Expect` whose shifts by `|d| ≤ m` are `(ε, δ)`-bounded on every
event, nothing else. -/
example : ∀ {R : Type} [ExpField R] {m : Nat} {ε δ : R} (toExpect : Expect R),
    (∀ d : Int, -(m : Int) ≤ d → d ≤ (m : Int) → ∀ S : Int → Bool,
      toExpect.E (fun z => ind S (z + d)) ≤ exp ε * toExpect.E (ind S) + δ) →
    GaussNoise R m ε δ :=
  @GaussNoise.mk

example : ∀ {R : Type} [ExpField R] {m : Nat} {ε δ : R}, GaussNoise R m ε δ → Expect R :=
  @GaussNoise.toExpect

example : ∀ {R : Type} [ExpField R] {m : Nat} {ε δ : R} (Z : GaussNoise R m ε δ) (d : Int),
    -(m : Int) ≤ d → d ≤ (m : Int) → ∀ S : Int → Bool,
      Z.E (fun z => ind S (z + d)) ≤ exp ε * Z.E (ind S) + δ :=
  @GaussNoise.shift

/-- **`Iter.PrefixDP`** (Lemma 11's COMP) and **`Iter.StepsDP`** (each step DP). -/
example {R X W : Type} [ExpField R] [Enum W] (Nbr : X → X → Prop) (M : Step X W R)
    (ks : List Nat) (epsK delK : Fin ks.length → R) (eps dl : List R) :
    (PrefixDP Nbr M ks epsK delK ↔ ∀ i, DP Nbr (prefixMech M (ks.get i)) (epsK i) (delK i)) ∧
    (StepsDP Nbr M eps dl ↔ ∀ h : List W, h.length < eps.length →
      DP Nbr (M h) (eps.getD h.length 0) (dl.getD h.length 0)) :=
  ⟨Iff.rfl, Iff.rfl⟩

/-- **The data facts**: `IQRDataFacts` (the stability statistic is 1-Lipschitz; `A x ≥ 2` puts
`x` and every neighbour in one bin), `TestSensitivity`, `UtilitySensitivity`, `Iter.L1Sensitive`
(with `l1` the L1 distance of the first `d` coordinates), and the interface `MedianDP`. -/
example {R X : Type} [ExpField R] (Nbr : X → X → Prop) (A : X → Int) (sub : X → Option Int)
    (L : Nat) :
    IQRDataFacts Nbr A sub L ↔
      (∀ x x', Nbr x x' → A x ≤ A x' + 1 ∧ A x' ≤ A x + 1) ∧
      (∀ x x', Nbr x x' → 2 ≤ A x →
        ∃ k j j' : Int, sub x = some j ∧ sub x' = some j' ∧
          k * L ≤ j ∧ j < k * L + L ∧ k * L ≤ j' ∧ j' < k * L + L) :=
  ⟨fun h => ⟨h.lipschitz, h.same_bin⟩, fun h => ⟨h.1, h.2⟩⟩

example {R X V T Y C : Type} [ExpField R] [Enum Y] (Nbr : X → X → Prop)
    (NbrTe : T → T → Prop) (score : V → T → Int) (m d : Nat) (u : X → Y → Int)
    (med : R → Mechanism X Y R) (g : List (Vec C d) → X → Vec Int d) (a b : List Int) (k : Nat) :
    (TestSensitivity NbrTe score m ↔ ∀ v t t', NbrTe t t' → (score v t - score v t').natAbs ≤ m) ∧
    (UtilitySensitivity Nbr u ↔ ∀ x x' y, Nbr x x' → u x y ≤ u x' y + 1 ∧ u x' y ≤ u x y + 1) ∧
    (MedianDP Nbr med ↔ ∀ e, 0 ≤ e → DP Nbr (med e) e 0) ∧
    (L1Sensitive Nbr d g m ↔ ∀ (h : List (Vec C d)) (x x' : X), Nbr x x' →
      l1 d (g h x).1 (g h x').1 ≤ m) ∧
    l1 0 a b = 0 ∧ l1 (k + 1) a b = (a.headD 0 - b.headD 0).natAbs + l1 k a.tail b.tail ∧
    Vec C d = {l : List C // l.length = d} :=
  ⟨Iff.rfl, Iff.rfl, Iff.rfl, Iff.rfl, rfl, rfl, rfl⟩

/-- **`ERMRelease`** (Alg. 4's DP and App. D's coupling on a finite grid of models). -/
example {R Xtr V T : Type} [ExpField R] [Enum V] (NbrTr : Xtr → Xtr → Prop)
    (rel : Xtr → Dist V R) (score : V → T → Int) (ε₁ : R) (m : Nat) :
    ERMRelease NbrTr rel score ε₁ m ↔
      DP NbrTr rel ε₁ 0 ∧
      ∀ a a', NbrTr a a' → ∃ π : V → V → R, (∀ v v', 0 ≤ π v v') ∧
        (∀ v, fsum (fun v' => π v v') = (rel a).mass v) ∧
        (∀ v', fsum (fun v => π v v') = (rel a').mass v') ∧
        (∀ v v', π v v' ≠ 0 → ∀ t, (score v t - score v' t).natAbs ≤ m) :=
  ⟨fun h => ⟨h.dp, h.coupling⟩, fun h => ⟨h.1, h.2⟩⟩

/-! ### The laws and mechanisms the statements name -/

/-- The law of `out (n + Z)` for a noise `Z` seen through its expectation (the Gaussian's
release), post-processing, and the partition `{values, ⊥}` with its events. -/
example {R X O O' V : Type} [ExpField R] [Enum O] [DecidableEq O] [Enum O'] [DecidableEq O']
    (N : Expect R) (out : Int → O) (n : Int) (o : O) (f : O → O') (M : Mechanism X O R) (x : X)
    (o' : O') (C : Event V) (v : V) :
    (N.lawOf out n).mass o = N.E (fun z => if out (n + z) = o then 1 else 0) ∧
    (postProcess f M x).mass o' = fsum (fun o => if f o = o' then (M x).mass o else 0) ∧
    vob (some v) = .value ∧ vob (none : Option V) = .bottom ∧
    valEvent C (some v) = C v ∧ valEvent C none = false ∧
    botEvent (some v) = false ∧ botEvent (none : Option V) = true ∧
    isValue (some v) = true ∧ isValue (none : Option V) = false :=
  ⟨rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl⟩

/-- The blocks of M_toy and of `{values, ⊥}` are two labels each. -/
example : (∀ b : ToyBlock, b = .value ∨ b = .bottom) ∧
    (∀ b : ValueOrBottom, b = .value ∨ b = .bottom) :=
  ⟨fun b => by cases b <;> simp, fun b => by cases b <;> simp⟩

/-- Release with probability `pass v`, else `⊥` (`gate`): `Pr[⊥] = Σ_v p(v)(1 − pass v)`,
`Pr[v] = p(v)·pass v`. -/
example {R V : Type} [ExpField R] [Enum V] (rel : Dist V R) (pass : V → R)
    (h0 : ∀ v, 0 ≤ pass v) (h1 : ∀ v, pass v ≤ 1) (v : V) :
    (gate rel pass h0 h1).mass none = fsum (fun v => rel.mass v * (1 - pass v)) ∧
      (gate rel pass h0 h1).mass (some v) = rel.mass v * pass v :=
  ⟨rfl, rfl⟩

/-- **SVT (Alg. 2)**: a query is a grid value and a threshold; the analyst picks the next query
from the answers so far (or stops); the answers are lists of length at most `N`; `tops` counts
the ⊤ answers; `svtMech`'s mass of an answer list `a` is the expectation over the threshold
noise `ρ = z` of `svtRun` (below). -/
example {R X : Type} [ExpField R] {α β : R} (ρ : LapNoise R α) (ν : LapTail R β) (A : Analyst X)
    (c N : Nat) (x : X) (a : Answers N) (qs : List (SVTQuery X)) (h : List Bool) (b : Bool)
    (l : List Bool) :
    (svtMech ρ ν A c N x).mass a = ρ.E (fun z => svtRun ν.G A c x z N [] a.val) ∧
    Analyst X = (List Bool → Option (SVTQuery X)) ∧
    Answers N = {a : List Bool // a.length ≤ N} ∧
    batchAnalyst qs h = qs[h.length]? ∧
    tops [] = 0 ∧ tops (b :: l) = (if b then 1 else 0) + tops l :=
  ⟨rfl, rfl, rfl, rfl, rfl, rfl⟩

example : ∀ {X : Type} (q : X → Int) (T : Int), (SVTQuery.mk q T).q = q ∧ (SVTQuery.mk q T).T = T :=
  fun _ _ => ⟨rfl, rfl⟩

/-- `svtRun G A c x z n h a`: the probability, given the threshold noise `z`, that with at most
`n` more queries and the answers `h` so far, Alg. 2 answers exactly `a` and then ends — its five
equations (no query left; cut-off reached; STOP; a query asked but no answer listed; a query
answered ⊤ iff `q x + ν ≥ T + z`, `G t = Pr[ν ≥ t]`). -/
example {R X : Type} [ExpField R] (G : Int → R) (A : Analyst X) (c : Nat) (x : X) (z : Int)
    (n : Nat) (h a : List Bool) (Q : SVTQuery X) (b : Bool) :
    svtRun G A c x z 0 h a = (if a = [] then 1 else 0) ∧
    (c ≤ tops h → svtRun G A c x z (n + 1) h a = if a = [] then 1 else 0) ∧
    (¬ c ≤ tops h → A h = none → svtRun G A c x z (n + 1) h a = if a = [] then 1 else 0) ∧
    (¬ c ≤ tops h → A h = some Q → svtRun G A c x z (n + 1) h [] = 0) ∧
    (¬ c ≤ tops h → A h = some Q → svtRun G A c x z (n + 1) h (b :: a)
      = (if b then G (Q.T + z - Q.q x) else 1 - G (Q.T + z - Q.q x))
        * svtRun G A c x z n (h ++ [b]) a) :=
  ⟨svtRun_zero G A c x z h a, fun hc => svtRun_cut G A c x z hc a,
    fun hc hA => svtRun_stop G A c x z hc hA a, fun hc hA => svtRun_nil G A c x z hc hA,
    fun hc hA => svtRun_cons G A c x z hc hA b a⟩

/-- **`M_IQR`**: run `M₁`; on its `⊥` an independent `M₂`. -/
example {R X V : Type} [ExpField R] [Enum V] (M₁ M₂ : Mechanism X (Option V) R) (x : X) (v : V) :
    (iqrMech M₁ M₂ x).mass none = (M₁ x).mass none * (M₂ x).mass none ∧
      (iqrMech M₁ M₂ x).mass (some v)
        = (M₁ x).mass (some v) + (M₁ x).mass none * (M₂ x).mass (some v) :=
  ⟨rfl, rfl⟩

/-- **odp's log-bin IQR function** at one proposal (`LogBinIQR.apply`): pass iff
`A(x) + Z ≥ K + 1` (probability `G(K + 1 − A(x))`), then release a draw of `rel (sub x)`; with a
noise law `W`, the release is `out(sub(x) + W)`; as a function of the proposal (`⊥` never
passes); and odp's `M_IQR` of two discretisations. -/
example {R X V C : Type} [ExpField R] [Enum V] [DecidableEq V] {c : R} (Z : TailNoise R c)
    (W : IntLaw R) (rel : Option Int → Dist V R) (K : Int) (out out₁ out₂ : Option Int → V)
    (A A₁ A₂ : X → Int) (sub sub₁ sub₂ : X → Option Int) (Ac : C → X → Int)
    (subc : C → X → Option Int) (s : C) (u : Option Int) (x : X) :
    logBinIQRK Z rel K A sub x = gate (rel (sub x)) (fun _ => Z.G (K + 1 - A x))
      (fun _ => Z.nonneg _) (fun _ => Z.le_one _) ∧
    logBinIQR Z W K out A sub = logBinIQRK Z (logBinRelease W out) K A sub ∧
    logBinRelease W out u = W.map (fun w => out (u.map (· + w))) ∧
    logBinPTR Z W K out Ac subc (some s) = logBinIQR Z W K out (Ac s) (subc s) ∧
    logBinPTR Z W K out Ac subc none x
      = gate (logBinRelease W out none) (fun _ => 0) (fun _ => by grind) (fun _ => by grind) ∧
    iqrLogBin Z W K out₁ out₂ A₁ A₂ sub₁ sub₂
      = iqrMech (logBinIQR Z W K out₁ A₁ sub₁) (logBinIQR Z W K out₂ A₂ sub₂) :=
  ⟨rfl, rfl, rfl, rfl, rfl, rfl⟩

/-- The release kernel property of Lemma 10's log-bin proof: indices at most `n` apart give
`e^ε`-close releases on every event. -/
example {R V : Type} [ExpField R] [Enum V] (rel : Option Int → Dist V R) (n : Nat) (ε : R) :
    ReleaseWithin rel n ε ↔ ∀ j j' : Int, (j - j').natAbs ≤ n → ∀ C : Event V,
      Pr (rel (some j)) C ≤ exp ε * Pr (rel (some j')) C :=
  Iff.rfl

/-- **odp's `M_IQR` with its laws written out** (`Odp/Mech/PTR/IQR.lean`): the point mass; the
law of `f(o)`; the released index `clamp(j + W, lo, hi)` (`W` discrete Laplace of scale `(L − 1)/ε`, no
noise for `L = 1`); the release (`out none` for an IQR of 0); the PTR function with the discrete
Laplace test noise of scale `1/ε` (its tail `discreteLaplaceTail ε`); `M_IQR` of two
discretisations. -/
example {R X V O : Type} [ExpField R] [Enum V] [DecidableEq V] [Enum O] (v w : V) (f : O → V)
    (d : Dist O R) (ε : R) (hε : 0 ≤ ε) (L : Nat) (lo hi : Int) (hlh : lo ≤ hi) (j : Int)
    (out : Option (Window lo hi) → V) (K : Int) (A A₂ : X → Int) (sub sub₂ : X → Option Int)
    (lo₂ hi₂ : Int) (h₂ : lo₂ ≤ hi₂) (out₂ : Option (Window lo₂ hi₂) → V) (t : Int) :
    (pointDist v : Dist V R).mass w = (if w = v then 1 else 0) ∧
    pushDist f d = postProcess f (fun (_ : Unit) => d) () ∧
    clampedIndex ε hε L lo hi hlh j = (if L = 1 then pointDist (clamp lo hi hlh j)
      else clampedLaplace (ε / natR (L - 1)) (rate_nonneg hε (L - 1)) lo hi hlh j) ∧
    lapRelease ε hε L lo hi hlh out none = pointDist (out none) ∧
    lapRelease ε hε L lo hi hlh out (some j)
      = pushDist (fun w => out (some w)) (clampedIndex ε hε L lo hi hlh j) ∧
    logBinLapIQR ε hε K L lo hi hlh out A sub
      = logBinIQRK (dlapTailNoise ε hε) (lapRelease ε hε L lo hi hlh out) K A sub ∧
    (dlapTailNoise ε hε).G t = discreteLaplaceTail ε t ∧
    iqrLogBinLap ε hε K L lo hi hlh out lo₂ hi₂ h₂ out₂ A A₂ sub sub₂
      = iqrMech (logBinLapIQR ε hε K L lo hi hlh out A sub)
          (logBinLapIQR ε hε K L lo₂ hi₂ h₂ out₂ A₂ sub₂) :=
  ⟨rfl, rfl, rfl, rfl, rfl, rfl, rfl, rfl⟩

/-- **The IQR-then-median pipeline** as an adversary of Alg. 1: round 1 `M_IQR` (outputs on the
left of `Option V ⊕ Y`) with its Lemma 10 costs and `δ₁`; round 2 the median (on the right) with
`ε₂` after a value, `ε₁ + ε₂` after `⊥`; nothing after. -/
example {R X V Y : Type} [ExpField R] [Enum V] [Enum Y] (x x' : X)
    (Miqr : Mechanism X (Option V) R) (med : R → Mechanism X Y R) (ε₁ ε₂ δ₁ e : R)
    (y : Y) (o : Option V) :
    iqrMedianAdv x x' Miqr med ε₁ ε₂ δ₁ =
      .node ⟨x, x', embL (B := Y) Miqr, Sum.elim (fun o => iqrCosts ε₁ (vob o)) (fun _ => 0), δ₁⟩
        (fun o => match o with
          | .inl (some _) => medianRound x x' med ε₂
          | .inl none => medianRound x x' med (ε₁ + ε₂)
          | .inr _ => .leaf) ∧
    medianRound (V := V) x x' med e
      = .node ⟨x, x', embR (A := Option V) (med e), fun _ => e, 0⟩ (fun _ => .leaf) ∧
    (embL (B := Y) Miqr x).mass (.inl o) = (Miqr x).mass o ∧
    (embL (B := Y) Miqr x).mass (.inr y) = 0 ∧
    (embR (A := Option V) (med e) x).mass (.inr y) = (med e x).mass y ∧
    (embR (A := Option V) (med e) x).mass (.inl o) = 0 :=
  ⟨rfl, rfl, rfl, rfl, rfl, rfl⟩

/-- The exponential median's weights: `exp(e·u(x, y)/2)`, with `intR` the integers in `R`. -/
example {R X Y : Type} [ExpField R] (u : X → Y → Int) (e : R) (x : X) (y : Y) (n : Nat) :
    expWeight u e x y = exp (e / 2 * intR (u x y)) ∧
    (intR (Int.ofNat n) : R) = natR n ∧ (intR (Int.negSucc n) : R) = -(natR n + 1) :=
  ⟨rfl, rfl, rfl⟩

/-- **Alg. 3** (`iterMech`): stops `k_1 ≤ … ≤ k_n` (`Stops`: nonempty, nondecreasing); the output
is a stop index and a history of length `k_i`; its mass is the chain rule of the steps times
"stopped here" (no earlier rule fired, and this rule fired or this is the last stop); the prefix
mechanism releases the first `k` steps. -/
example : ∀ (ks : List Nat), 0 < ks.length →
    (∀ i j : Fin ks.length, i ≤ j → ks.get i ≤ ks.get j) → Stops :=
  @Stops.mk

example {R X W : Type} [ExpField R] [Enum W] (M : Step X W R) (S : Stops)
    (rule : Fin S.ks.length → List W → Bool) (x : X) (o : IterOut W S.ks) (ks : List Nat)
    (i : Fin ks.length) (rule' : Fin ks.length → List W → Bool) (h pre t : List W) (s : W)
    (k : Nat) (v : Vec W k) (x' : X) :
    (iterMech M S rule x).mass o = iterMass M S.ks rule x o ∧
    (Stopped ks rule' i h ↔ (∀ j : Fin ks.length, j < i → rule' j (h.take (ks.get j)) = false) ∧
      (i.val + 1 = ks.length ∨ rule' i h = true)) ∧
    IterOut W S.ks = (Σ i : Fin S.ks.length, Vec W (S.ks.get i)) ∧
    Step X W R = (List W → Mechanism X W R) ∧
    chain M x' pre [] = 1 ∧ chain M x' pre (s :: t) = (M pre x').mass s * chain M x' (pre ++ [s]) t ∧
    (prefixMech M k x').mass v = chain M x' [] v.1 ∧
    (S.last).val = S.ks.length - 1 ∧
    (S.Strict ↔ ∀ i j : Fin S.ks.length, i.val < j.val → S.ks.get i < S.ks.get j) :=
  ⟨rfl, Iff.rfl, rfl, rfl, rfl, rfl, rfl, rfl, Iff.rfl⟩

open Classical in
/-- Alg. 3's mass of an output `(i, h)`: the chain rule of the steps, times "stopped at `i`". -/
example {R X W : Type} [ExpField R] [Enum W] (M : Step X W R) (ks : List Nat)
    (rule : Fin ks.length → List W → Bool) (x : X) (o : IterOut W ks) :
    iterMass M ks rule x o = chain M x [] o.2.1 * (if Stopped ks rule o.1 o.2.1 then 1 else 0) :=
  rfl

/-- A step of `NoisyGradientDescent`: the gridded gradient `g h x ∈ ℤ^d` released with
independent noise `N` on each coordinate (`prodMass`). -/
example {R X C : Type} [ExpField R] [Enum C] (N : Int → Dist C R) (d : Nat)
    (g : List (Vec C d) → X → Vec Int d) (h : List (Vec C d)) (x : X) (v : Vec C d)
    (u : List Int) (c : C) (w : List C) :
    (noisyStep N d g h x).mass v = prodMass N (g h x).1 v.1 ∧
    prodMass N u [] = 1 ∧ prodMass N u (c :: w) = (N (u.headD 0)).mass c * prodMass N u.tail w :=
  ⟨rfl, rfl, rfl⟩

/-- **Test-and-release (Alg. 5)** on the grid: a draw `v` of the training release, released iff
`score(v, test) + Z ≥ thr` (probability `1 − G(thr − score + 1)`), else `⊥`. -/
example {R Xtr Xte V : Type} [ExpField R] [Enum V] {c : R} (Z : TailNoise R c)
    (rel : Xtr → Dist V R) (score : V → Xte → Int) (thr : Int) (p : Xtr × Xte) (v : V) :
    (testRelease Z rel score thr p).mass (some v) = (rel p.1).mass v * (1 - Z.G (thr - score v p.2 + 1)) ∧
    (testRelease Z rel score thr p).mass none
      = fsum (fun v => (rel p.1).mass v * (1 - (1 - Z.G (thr - score v p.2 + 1)))) :=
  ⟨rfl, rfl⟩

open Classical in
/-- `max` and `min` in `R`. -/
example {R : Type} [ExpField R] (a b : R) :
    rmax a b = (if a ≤ b then b else a) ∧ rmin a b = (if a ≤ b then a else b) :=
  ⟨rfl, rfl⟩

/-- The witness sub-bin index (`IQRDataFacts.witness`). -/
example (L : Nat) (x : Int) : witSub L x = some (if 1 ≤ x then (L : Int) else x) := rfl

/-! ## The clamped discrete Laplace law (`Odp/Mech/Laplace/Law.lean`), written out

The grid Laplace mechanism and M_toy release `clamp(n(x) + Z, lo, hi)` with `Z` the discrete
Laplace law `P[Z = z] = (1 − r)/(1 + r) · r^{|z|}`, `r = e^{−α}` (`α = ε/m`). That law is a finite
distribution with closed-form masses, written out here; their results below rest on it, not on a
noise hypothesis. -/

/-- `r^k = e^{−kα}`, and the discrete Laplace mass and tail `Pr[Z ≥ t]` (`r^t/(1 + r)` for
`t ≥ 1`, `1 − r^{1−t}/(1 + r)` for `t ≤ 0`; odp's `discrete_laplace_tail`). -/
example {R : Type} [ExpField R] (α : R) (k : Nat) (z t : Int) :
    lapPow α k = exp (-(natR k * α)) ∧
      dlapMass α z = (1 - lapPow α 1) * (1 + lapPow α 1)⁻¹ * lapPow α z.natAbs ∧
      discreteLaplaceTail α t =
        (if 1 ≤ t then lapPow α t.toNat * (1 + lapPow α 1)⁻¹
         else 1 - lapPow α (1 - t).toNat * (1 + lapPow α 1)⁻¹) :=
  ⟨rfl, rfl, rfl⟩

/-- **The law of `clamp(n + Z, lo, hi)`** (odp's `clamped_laplace_law`): at `lo` the tail
`Pr[Z ≥ n − lo]`, at `hi` the tail `Pr[Z ≥ hi − n]`, in between `(1 − r)/(1 + r) · r^{|c − n|}`,
and 1 on a one-point window. The window is the type `{v ∈ ℤ | lo ≤ v ≤ hi}` (its `Enum` lists each
element once, by `Enum`'s own fields, so sums over it are the sums over `lo, …, hi`). -/
example {R : Type} [ExpField R] (α : R) (hα : 0 ≤ α) (lo hi : Int) (hlh : lo ≤ hi) (n : Int)
    (c : Window lo hi) :
    (clampedLaplace α hα lo hi hlh n).mass c = clampedLapMass α lo hi n c.val ∧
      clampedLapMass α lo hi n c.val =
        (if c.val = lo then (if c.val = hi then 1 else discreteLaplaceTail α (n - lo))
         else if c.val = hi then discreteLaplaceTail α (hi - n)
         else dlapMass α (c.val - n)) ∧
      Window lo hi = {v : Int // lo ≤ v ∧ v ≤ hi} :=
  ⟨rfl, rfl, rfl⟩

/-- **The clamped discrete Laplace law is a probability distribution** (nonnegative masses of
total 1 over the window), for every `α ≥ 0`, every window and every centre `n`, inside the window
or not. -/
example {R : Type} [ExpField R] (α : R) (hα : 0 ≤ α) (lo hi : Int) (hlh : lo ≤ hi) (n : Int) :
    (∀ c : Window lo hi, 0 ≤ clampedLapMass α lo hi n c.val) ∧
      fsum (fun c : Window lo hi => clampedLapMass α lo hi n c.val) = 1 :=
  ⟨fun c => clampedLapMass_nonneg hα lo hi n c.val, clampedLapMass_total α lo hi hlh n⟩

/-- **Moving the centre by at most `k` costs at most `e^{kα}` at every output.** -/
example {R : Type} [ExpField R] (α : R) (hα : 0 ≤ α) (lo hi : Int) (hlh : lo ≤ hi)
    (n n' : Int) (k : Nat) (hk : (n - n').natAbs ≤ k) (c : Window lo hi) :
    (clampedLaplace α hα lo hi hlh n).mass c
      ≤ exp (natR k * α) * (clampedLaplace α hα lo hi hlh n').mass c :=
  clampedLaplace_shift hα lo hi hlh n n' k hk c

/-! ## M_toy (Sec. 1; the example after Definition 2 in Sec. 3) -/

/-- **M_toy is `({values, {⊥}}, ℰ, 0)`-ODP** with `ℰ(values) = ε`, `ℰ({⊥}) = 0`: a fair coin;
heads → the grid Laplace release `clamp(n(x) + Z, lo, hi)`, tails → `⊥`.
Rests on: the grid sensitivity `hn` only — **no noise hypothesis**: the release's law is the
clamped discrete Laplace law written out above (that odp's sampler draws it is tested in Python).
Narrower: discrete noise on the grid, release clamped to a window (what odp runs). -/
example {R X : Type} [ExpField R] (Nbr : X → X → Prop) (m : Nat) (hm : 0 < m) (ε : R)
    (hε : 0 ≤ ε) (n : X → Int)
    (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi) :
    ODP Nbr (toyMech m ε hε n lo hi hlh) toyBlock (toyCosts ε) 0 :=
  toy_odp Nbr m hm ε hε n hn lo hi hlh

/-- M_toy's costs: `ℰ(values) = ε`, `ℰ({⊥}) = 0`; its blocks; M_toy is the fair coin in front
of the grid Laplace mechanism; the coin: `Pr[⊥] = 1/2`, `Pr[v] = p(v)/2`. -/
example {R X O : Type} [ExpField R] [Enum O] (m : Nat) (ε : R) (hε : 0 ≤ ε) (n : X → Int)
    (lo hi : Int) (hlh : lo ≤ hi) (v : Window lo hi) (M : Mechanism X O R) (x : X) (o : O) :
    toyCosts ε .value = ε ∧ toyCosts ε .bottom = 0 ∧
      toyBlock (some v) = .value ∧ toyBlock (none : Option (Window lo hi)) = .bottom ∧
      toyMech m ε hε n lo hi hlh = coinOrBottom (laplaceMech m ε hε n lo hi hlh) ∧
      (coinOrBottom M x).mass none = (2 : R)⁻¹ ∧
      (coinOrBottom M x).mass (some o) = (2 : R)⁻¹ * (M x).mass o :=
  ⟨rfl, rfl, rfl, rfl, rfl, rfl, rfl⟩

/-- **The coin in front of any `(ε, δ)`-DP mechanism** is `({values, {⊥}}, ℰ, δ/2)`-ODP with
`ℰ(values) = ε`, `ℰ({⊥}) = 0` (the general form of M_toy). No hypothesis beyond DP. -/
example {R X O : Type} [ExpField R] [Enum O] (Nbr : X → X → Prop) (M : Mechanism X O R)
    (ε δ : R) (h : DP Nbr M ε δ) :
    ODP Nbr (coinOrBottom M) toyBlock (toyCosts ε) ((2 : R)⁻¹ * δ) :=
  coinOrBottom_odp Nbr M ε δ h

/-! ## Lemma 3 for the grid Laplace and Gaussian mechanisms -/

/-- The grid Laplace mechanism's law is the clamped discrete Laplace law with `α = ε/m` centred at
`n(x)`; the Gaussian's is `clamp(n(x) + Z, lo, hi)` for the noise `Z` of `GaussNoise`, with
`clamp(z) = min(max(z, lo), hi)`. -/
example {R X : Type} [ExpField R] (m : Nat) (ε δ : R) (hε : 0 ≤ ε)
    (Z' : GaussNoise R m ε δ) (n : X → Int) (lo hi : Int) (hlh : lo ≤ hi) (x : X) (z : Int) :
    laplaceMech m ε hε n lo hi hlh x = clampedLaplace (ε / natR m) (rate_nonneg hε m) lo hi hlh (n x) ∧
      gaussianMech m ε δ Z' n lo hi hlh x = Z'.toExpect.lawOf (clamp lo hi hlh) (n x) ∧
      (clamp lo hi hlh z).val = (if z < lo then lo else if hi < z then hi else z) :=
  ⟨rfl, rfl, rfl⟩

/-- **The grid Laplace mechanism is ε-DP** (Definition 1, `δ = 0`), `ε ≥ 0`.
Rests on: the grid sensitivity `hn` only (no noise hypothesis). -/
example {R X : Type} [ExpField R] (Nbr : X → X → Prop) (m : Nat) (hm : 0 < m) (ε : R)
    (hε : 0 ≤ ε) (n : X → Int)
    (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi) :
    DP Nbr (laplaceMech m ε hε n lo hi hlh) ε 0 :=
  laplace_dp Nbr m hm ε hε n hn lo hi hlh

/-- **Lemma 3 for the grid Laplace mechanism**: `(𝒫, ℰ ≡ ε, 0)`-ODP for every partition `κ`.
Rests on: the grid sensitivity `hn` only (no noise hypothesis). -/
example {R X K : Type} [ExpField R] [Enum K] [DecidableEq K] (Nbr : X → X → Prop) (m : Nat)
    (hm : 0 < m) (ε : R) (hε : 0 ≤ ε) (n : X → Int)
    (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi)
    (κ : Window lo hi → K) :
    ODP Nbr (laplaceMech m ε hε n lo hi hlh) κ (fun _ => ε) 0 :=
  laplace_odp Nbr m hm ε hε n hn lo hi hlh κ

/-- **The grid Gaussian mechanism is (ε, δ)-DP.**
Rests on: `GaussNoise m ε δ` (δ from Canonne–Kamath–Steinke, Thm. 7, computed by tested Python
code) and the grid sensitivity `hn`. -/
example {R X : Type} [ExpField R] (Nbr : X → X → Prop) (m : Nat) (ε δ : R)
    (Z : GaussNoise R m ε δ) (n : X → Int)
    (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi) :
    DP Nbr (gaussianMech m ε δ Z n lo hi hlh) ε δ :=
  gaussian_dp Nbr m ε δ Z n hn lo hi hlh

/-- **Lemma 3 for the grid Gaussian mechanism**: `(𝒫, ℰ ≡ ε, δ)`-ODP for every partition `κ`.
Rests on: `GaussNoise m ε δ` and the grid sensitivity `hn`. -/
example {R X K : Type} [ExpField R] [Enum K] [DecidableEq K] (Nbr : X → X → Prop) (m : Nat)
    (ε δ : R) (Z : GaussNoise R m ε δ) (n : X → Int)
    (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi)
    (κ : Window lo hi → K) :
    ODP Nbr (gaussianMech m ε δ Z n lo hi hlh) κ (fun _ => ε) δ :=
  gaussian_odp Nbr m ε δ Z n hn lo hi hlh κ

/-! ## Randomized response and post-processing -/

/-- Randomized response's law: the true category with probability `e^ε/(e^ε + k − 1)`, each other
one with `1/(e^ε + k − 1)`, `k` the number of categories. -/
example {R X O : Type} [ExpField R] [Enum O] [DecidableEq O] (ε : R) (truth : X → O) (x : X)
    (o : O) :
    (rrMech ε truth x).mass o
        = (if o = truth x then exp ε * (rrDen O ε)⁻¹ else (rrDen O ε)⁻¹) ∧
      rrDen O ε = exp ε + natR (Enum.elems : List O).length - 1 :=
  ⟨rfl, rfl⟩

/-- **Randomized response is ε-DP** (any two inputs, `ε ≥ 0`). No hypothesis about a sampler:
the theorem is about the law above (that odp's sampler draws it is the trust boundary). -/
example {R X O : Type} [ExpField R] [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (ε : R)
    (hε : 0 ≤ ε) (truth : X → O) :
    DP Nbr (rrMech ε truth) ε 0 :=
  rr_dp Nbr ε hε truth

/-- **Randomized response as ODP** (Lemma 3): `ℰ ≡ ε` for every partition, `δ = 0`. -/
example {R X O K : Type} [ExpField R] [Enum O] [DecidableEq O] [Enum K] [DecidableEq K]
    (Nbr : X → X → Prop) (ε : R) (hε : 0 ≤ ε) (truth : X → O) (κ : O → K) :
    ODP Nbr (rrMech ε truth) κ (fun _ => ε) 0 :=
  rr_odp Nbr ε hε truth κ

/-- **Post-processing preserves (ε, δ)-DP.** -/
example {R X O O' : Type} [ExpField R] [Enum O] [Enum O'] [DecidableEq O']
    (Nbr : X → X → Prop) (f : O → O') (M : Mechanism X O R) (ε δ : R) (h : DP Nbr M ε δ) :
    DP Nbr (postProcess f M) ε δ :=
  dp_postProcess Nbr f M ε δ h

/-- **Post-processing preserves `(𝒫, ℰ, δ)`-ODP** when the map keeps each output's block label. -/
example {R X O O' K : Type} [ExpField R] [Enum O] [Enum O'] [DecidableEq O'] [Enum K]
    [DecidableEq K] (Nbr : X → X → Prop) (f : O → O') (M : Mechanism X O R) (κ : O → K)
    (κ' : O' → K) (hκ : ∀ o, κ' (f o) = κ o) (E : K → R) (δ : R) (h : ODP Nbr M κ E δ) :
    ODP Nbr (postProcess f M) κ' E δ :=
  odp_postProcess Nbr f M κ κ' hκ E δ h

/-! ## Lemma 8: the Sparse Vector Technique (Alg. 2) -/

/-- Lemma 8's partition and costs: the class `S_{c'}` of an output is its number `c'` of ⊤
answers (capped at `c`), and `ℰ(S_{c'}) = ε1 + (c'/c)·ε2`. -/
example {R : Type} [ExpField R] (c N : Nat) (ε1 ε2 : R) (a : Answers N) (k : Fin (c + 1)) :
    (svtBlock c N a).val = min (tops a.val) c ∧
      svtCosts c ε1 ε2 k = ε1 + natR k.val / natR c * ε2 :=
  ⟨rfl, rfl⟩

/-- **Lemma 8 (interactive form, odp's `SVTSession`)**: Alg. 2 with threshold noise of scale
`m/ε1`, query noise of scale `2cm/ε2`, cut-off `c`, at most `N` queries chosen adaptively by
the analyst `A` among queries of sensitivity `m`, is `(𝒫, ℰ, 0)`-ODP with
`𝒫 = {S_{c'}}`, `ℰ(S_{c'}) = ε1 + (c'/c)·ε2`.
Rests on: `LapNoise (ε1/m)` (threshold noise ρ), `LapTail (ε2/(2cm))` (query noise ν) and the
query sensitivity `hA`. Narrower: deterministic analyst (a randomised one is a data-independent
mixture, covered by Theorem 7's randomised adversary), at most `N` queries, grid queries. -/
example {R X : Type} [ExpField R] (Nbr : X → X → Prop) (m c N : Nat) (hm : 0 < m) (hc : 0 < c)
    (ε1 ε2 : R) (ρ : LapNoise R (ε1 / natR m)) (ν : LapTail R (ε2 / natR (2 * c * m)))
    (A : Analyst X)
    (hA : ∀ h Q, A h = some Q → ∀ x x', Nbr x x' → Q.q x ≤ Q.q x' + m ∧ Q.q x' ≤ Q.q x + m) :
    ODP Nbr (svtMech ρ ν A c N) (svtBlock c N) (svtCosts c ε1 ε2) 0 :=
  svt_odp Nbr m c N hm hc ε1 ε2 ρ ν A hA

/-- **Lemma 8 (batch form, odp's `SparseVectorMechanism`)**: the queries of a list, in order,
`N` = its length. Rests on: `LapNoise (ε1/m)`, `LapTail (ε2/(2cm))`, the query sensitivity
`hqs`. -/
example {R X : Type} [ExpField R] (Nbr : X → X → Prop) (m c : Nat) (hm : 0 < m) (hc : 0 < c)
    (ε1 ε2 : R) (ρ : LapNoise R (ε1 / natR m)) (ν : LapTail R (ε2 / natR (2 * c * m)))
    (qs : List (SVTQuery X))
    (hqs : ∀ Q ∈ qs, ∀ x x', Nbr x x' → Q.q x ≤ Q.q x' + m ∧ Q.q x' ≤ Q.q x + m) :
    ODP Nbr (svtMech ρ ν (batchAnalyst qs) c qs.length) (svtBlock c qs.length)
      (svtCosts c ε1 ε2) 0 :=
  svt_batch_odp Nbr m c hm hc ε1 ε2 ρ ν qs hqs

/-- **Lyu et al.'s DP bound** from Lemma 8 and Lemma 4: with `ε2 ≥ 0`, Alg. 2 is
`(ε1 + ε2)`-DP. Rests on: `LapNoise (ε1/m)`, `LapTail (ε2/(2cm))`, the query sensitivity `hA`. -/
example {R X : Type} [ExpField R] (Nbr : X → X → Prop) (m c N : Nat) (hm : 0 < m) (hc : 0 < c)
    (ε1 ε2 : R) (hε2 : 0 ≤ ε2) (ρ : LapNoise R (ε1 / natR m))
    (ν : LapTail R (ε2 / natR (2 * c * m))) (A : Analyst X)
    (hA : ∀ h Q, A h = some Q → ∀ x x', Nbr x x' → Q.q x ≤ Q.q x' + m ∧ Q.q x' ≤ Q.q x + m) :
    DP Nbr (svtMech ρ ν A c N) (ε1 + ε2) 0 :=
  svt_dp Nbr m c N hm hc ε1 ε2 hε2 ρ ν A hA

/-- **The hypothesis `LapTail β` is satisfied** (`β ≥ 0`, any `ExpField`) by the closed-form
discrete Laplace tail `Pr[ν ≥ t]` that odp's exact SVT audit uses
(`odp.samplers.discrete_laplace_tail`, `r = e^{−β}`). -/
example {R : Type} [ExpField R] (β : R) (hβ : 0 ≤ β) :
    ∃ ν : LapTail R β, ν.G = fun t =>
      if 1 ≤ t then lapPow β t.toNat * (1 + lapPow β 1)⁻¹
      else 1 - lapPow β (1 - t).toNat * (1 + lapPow β 1)⁻¹ :=
  ⟨discreteLaplaceTail_isLapTail β hβ, rfl⟩

/-! ## Definition 9 and PTR functions (Sec. 4.2) -/

/-- **Definition 9**, conditions 2–4, at one proposal `s` (`G x` stands for `s ∈ G(T, x)`),
written out: `⊥` and `≠ ⊥` are `e^ε`-close; for a good proposal every set of values is
`e^{2ε}`-close; for a bad one `Pr(T(x, s) ≠ ⊥) ≤ δ`. -/
example {R X V : Type} [ExpField R] [Enum V] (Nbr : X → X → Prop)
    (M : Mechanism X (Option V) R) (G : X → Prop) (ε δ : R) :
    PTRAt Nbr M G ε δ ↔
      ((∀ x x', Nbr x x' → Pr (M x) botEvent ≤ exp ε * Pr (M x') botEvent) ∧
        (∀ x x', Nbr x x' → Pr (M x) isValue ≤ exp ε * Pr (M x') isValue) ∧
        (∀ x, G x → ∀ x', Nbr x x' → ∀ C : Event V,
          Pr (M x) (valEvent C) ≤ exp (2 * ε) * Pr (M x') (valEvent C)) ∧
        (∀ x, ¬ G x → Pr (M x) isValue ≤ δ)) :=
  ⟨fun h => ⟨h.bot_close, h.value_close, h.good, h.bad⟩, fun ⟨a, b, c, d⟩ => ⟨a, b, c, d⟩⟩

/-- Definition 9 with condition 1 (`Pr(T(x, ⊥) = ⊥) = 1`), for a function of the proposal. -/
example {R X V C : Type} [ExpField R] [Enum V] (Nbr : X → X → Prop)
    (T : Option C → Mechanism X (Option V) R) (ε δ : R) :
    IsPTRFunction Nbr T ε δ ↔
      ((∀ x, Pr (T none x) botEvent = 1) ∧
        ∃ G : C → X → Prop, ∀ s : C, PTRAt Nbr (T (some s)) (G s) ε δ) :=
  Iff.rfl

/-- The partition `{values, {⊥}}` and the PTR costs `ℰ(values) = 2ε`, `ℰ({⊥}) = ε`. -/
example {R V : Type} [ExpField R] (ε : R) (v : V) :
    vob (some v) = .value ∧ vob (none : Option V) = .bottom ∧
      ptrCosts ε .value = 2 * ε ∧ ptrCosts ε .bottom = ε :=
  ⟨rfl, rfl, rfl, rfl⟩

/-- **Sec. 4.2 at one proposal**: a mechanism satisfying Definition 9's conditions 2–4 is
`({values, ⊥}, ℰ, δ)`-ODP with `ℰ(values) = 2ε`, `ℰ({⊥}) = ε`. Rests on: Definition 9 only. -/
example {R X V : Type} [ExpField R] [Enum V] (Nbr : X → X → Prop)
    (M : Mechanism X (Option V) R) (G : X → Prop) (ε δ : R) (hδ : 0 ≤ δ)
    (h : PTRAt Nbr M G ε δ) :
    ODP Nbr M vob (ptrCosts ε) δ :=
  ptr_odp_at Nbr M G ε δ hδ h

/-- **Sec. 4.2**: "a PTR function `T` … fulfills `({P₁, P₂}, ℰ, δ)`-ODP" with `P₁ = 𝒞'`,
`P₂ = {⊥}`, `ℰ(P₁) = 2ε`, `ℰ(P₂) = ε` — at every proposal, `⊥` included. Rests on:
Definition 9 only. -/
example {R X V C : Type} [ExpField R] [Enum V] (Nbr : X → X → Prop)
    (T : Option C → Mechanism X (Option V) R) (ε δ : R) (hε : 0 ≤ ε) (hδ : 0 ≤ δ)
    (h : IsPTRFunction Nbr T ε δ) (s : Option C) :
    ODP Nbr (T s) vob (ptrCosts ε) δ :=
  ptr_odp Nbr T ε δ hε hδ h s

/-! ## Lemma 10: `M_IQR`, and odp's log-bin instance -/

/-- Lemma 10's costs: `ℰ(values) = 3ε`, `ℰ({⊥}) = 2ε`. -/
example {R : Type} [ExpField R] (ε : R) : iqrCosts ε .value = 3 * ε ∧ iqrCosts ε .bottom = 2 * ε :=
  ⟨rfl, rfl⟩

/-- **Lemma 10**: `M_IQR` (run `M₁`, and only on its `⊥` an independent `M₂`) of two mechanisms
satisfying Definition 9 with `(ε, δ₁)` and `(ε, δ₂)` is `({values, ⊥}, ℰ, δ₁ + δ₂)`-ODP with
`ℰ(values) = 3ε`, `ℰ({⊥}) = 2ε`. Rests on: Definition 9 for both. Narrower than the paper's `δ`:
the slack is `δ₁ + δ₂`, i.e. `δ` when each PTR function runs with `δ/2`, as odp does. -/
example {R X V : Type} [ExpField R] [Enum V] (Nbr : X → X → Prop)
    (M₁ M₂ : Mechanism X (Option V) R) (G₁ G₂ : X → Prop) (ε δ₁ δ₂ : R) (hε : 0 ≤ ε)
    (hδ₁ : 0 ≤ δ₁) (hδ₂ : 0 ≤ δ₂) (h₁ : PTRAt Nbr M₁ G₁ ε δ₁) (h₂ : PTRAt Nbr M₂ G₂ ε δ₂) :
    ODP Nbr (iqrMech M₁ M₂) vob (iqrCosts ε) (δ₁ + δ₂) :=
  iqr_odp Nbr M₁ M₂ G₁ G₂ ε δ₁ δ₂ hε hδ₁ hδ₂ h₁ h₂

/-- **odp's log-bin IQR PTR function satisfies Definition 9** (conditions 2–4) with
`G(T, x) = {s | A(x) ≥ 2}`. Rests on: `TailNoise ε` (test noise), the pass tail
`Pr(Z ≥ K) ≤ δ'`, `IntLaw.ShiftWithin (L − 1) ε` (release noise) and `IQRDataFacts`. -/
example {R X V : Type} [ExpField R] [Enum V] [DecidableEq V] (Nbr : X → X → Prop) {ε δ' : R}
    (Z : TailNoise R ε) (W : IntLaw R) (K : Int) (L : Nat) (out : Option Int → V)
    (A : X → Int) (sub : X → Option Int) (htail : Z.G K ≤ δ') (hW : W.ShiftWithin (L - 1) ε)
    (hdata : IQRDataFacts Nbr A sub L) :
    PTRAt Nbr (logBinIQR Z W K out A sub) (fun x => 2 ≤ A x) ε δ' :=
  logBinIQR_ptr Nbr Z W K L out A sub htail hW hdata

/-- **Definition 9 holds** for odp's log-bin IQR PTR function as a function of its proposal.
Rests on: `TailNoise ε`, the pass tail, `IntLaw.ShiftWithin (L − 1) ε`, `IQRDataFacts` for
every proposal. -/
example {R X V C : Type} [ExpField R] [Enum V] [DecidableEq V] (Nbr : X → X → Prop) {ε δ' : R}
    (Z : TailNoise R ε) (W : IntLaw R) (K : Int) (L : Nat) (out : Option Int → V)
    (A : C → X → Int) (sub : C → X → Option Int) (htail : Z.G K ≤ δ')
    (hW : W.ShiftWithin (L - 1) ε) (hdata : ∀ s, IQRDataFacts Nbr (A s) (sub s) L) :
    IsPTRFunction Nbr (logBinPTR Z W K out A sub) ε δ' :=
  logBinPTR_isPTR Nbr Z W K L out A sub htail hW hdata

/-- **Lemma 10 for odp's `M_IQR(ε, δ)`** (both discretisations with `δ/2`):
`({values, ⊥}, ℰ, δ)`-ODP with `ℰ(values) = 3ε`, `ℰ({⊥}) = 2ε`. Rests on: `TailNoise ε` with
`Pr(Z ≥ K) ≤ δ/2`, `IntLaw.ShiftWithin (L − 1) ε`, and `IQRDataFacts` of both
discretisations. -/
example {R X V : Type} [ExpField R] [Enum V] [DecidableEq V] (Nbr : X → X → Prop) {ε δ : R}
    (hε : 0 ≤ ε) (hδ : 0 ≤ δ) (Z : TailNoise R ε) (W : IntLaw R) (K : Int) (L : Nat)
    (out₁ out₂ : Option Int → V) (A₁ A₂ : X → Int) (sub₁ sub₂ : X → Option Int)
    (htail : Z.G K ≤ δ / 2) (hW : W.ShiftWithin (L - 1) ε)
    (hd₁ : IQRDataFacts Nbr A₁ sub₁ L) (hd₂ : IQRDataFacts Nbr A₂ sub₂ L) :
    ODP Nbr (iqrLogBin Z W K out₁ out₂ A₁ A₂ sub₁ sub₂) vob (iqrCosts ε) δ :=
  iqr_logBin_odp Nbr hε hδ Z W K L out₁ out₂ A₁ A₂ sub₁ sub₂ htail hW hd₁ hd₂

/-- The hypotheses of Lemma 10 for odp's `M_IQR` are jointly satisfiable with genuine laws (any
`ExpField`; `L = 1`, odp's `resolution=1`): the discrete Laplace test noise (its closed-form
tail), the point mass as release noise, a non-constant statistic. -/
example {R : Type} [ExpField R] {ε δ : R} (hε : 0 ≤ ε) (K : Int)
    (hK : discreteLaplaceTail ε K ≤ δ / 2) :
    ∃ (Z : TailNoise R ε) (W : IntLaw R), Z.G = discreteLaplaceTail ε ∧ Z.G K ≤ δ / 2 ∧
      W.ShiftWithin (1 - 1) ε ∧
      IQRDataFacts (fun x x' : Int => (x - x').natAbs ≤ 1) (fun x => x) (witSub 1) 1 :=
  iqr_logBin_hyps_satisfiable hε K hK

/-- **Definition 9 for odp's log-bin IQR function with its laws written out** (test noise the
discrete Laplace of scale `1/ε`, release `clamp(j + W, lo, hi)` with `W` the discrete Laplace of
scale `(L − 1)/ε`). Rests on: the pass tail `Pr(Z ≥ K) ≤ δ'` (a fact about the number `K` odp's
`pass_threshold` computes) and `IQRDataFacts` — **no noise hypothesis**. -/
example {R X V : Type} [ExpField R] [Enum V] [DecidableEq V] (Nbr : X → X → Prop) {ε δ' : R}
    (hε : 0 ≤ ε) (K : Int) (L : Nat) (lo hi : Int) (hlh : lo ≤ hi)
    (out : Option (Window lo hi) → V) (A : X → Int) (sub : X → Option Int)
    (htail : discreteLaplaceTail ε K ≤ δ') (hdata : IQRDataFacts Nbr A sub L) :
    PTRAt Nbr (logBinLapIQR ε hε K L lo hi hlh out A sub) (fun x => 2 ≤ A x) ε δ' :=
  logBinLapIQR_ptr Nbr hε K L lo hi hlh out A sub htail hdata

/-- **Lemma 10 for odp's `M_IQR(ε, δ)` with its laws written out**: `({values, ⊥}, ℰ, δ)`-ODP with
`ℰ(values) = 3ε`, `ℰ({⊥}) = 2ε`. Rests on: the pass tail `Pr(Z ≥ K) ≤ δ/2` of the discrete
Laplace test noise and `IQRDataFacts` of both discretisations — **no noise hypothesis**. -/
example {R X V : Type} [ExpField R] [Enum V] [DecidableEq V] (Nbr : X → X → Prop) {ε δ : R}
    (hε : 0 ≤ ε) (hδ : 0 ≤ δ) (K : Int) (L : Nat) (lo₁ hi₁ : Int) (h₁ : lo₁ ≤ hi₁)
    (out₁ : Option (Window lo₁ hi₁) → V) (lo₂ hi₂ : Int) (h₂ : lo₂ ≤ hi₂)
    (out₂ : Option (Window lo₂ hi₂) → V) (A₁ A₂ : X → Int) (sub₁ sub₂ : X → Option Int)
    (htail : discreteLaplaceTail ε K ≤ δ / 2)
    (hd₁ : IQRDataFacts Nbr A₁ sub₁ L) (hd₂ : IQRDataFacts Nbr A₂ sub₂ L) :
    ODP Nbr (iqrLogBinLap ε hε K L lo₁ hi₁ h₁ out₁ lo₂ hi₂ h₂ out₂ A₁ A₂ sub₁ sub₂) vob
      (iqrCosts ε) δ :=
  iqr_logBinLap_odp Nbr hε hδ K L lo₁ hi₁ h₁ out₁ lo₂ hi₂ h₂ out₂ A₁ A₂ sub₁ sub₂ htail hd₁ hd₂

/-- Its hypotheses are jointly satisfiable with odp's default `resolution = 4` and a non-constant
statistic (for any `K`, with `δ = 2·Pr(Z ≥ K)`). -/
example {R : Type} [ExpField R] {ε : R} (K : Int) :
    discreteLaplaceTail ε K ≤ (2 * discreteLaplaceTail ε K) / 2 ∧
      IQRDataFacts (fun x x' : Int => (x - x').natAbs ≤ 1) (fun x => x) (witSub 4) 4 :=
  iqr_logBinLap_hyps_satisfiable K

/-! ## The IQR-then-median pipeline (Sec. 4.2, "Application") and the exponential median -/

/-- **The pipeline passes Alg. 1's checks** for the budget `(3ε₁ + ε₂, δ₁)` in every round: `M_IQR`
with its Lemma 10 costs, then the median with `ε₂` after a value and `ε₁ + ε₂` after `⊥`.
Rests on: Lemma 10's guarantee of `M_IQR` and `MedianDP`. -/
example {R X V Y : Type} [ExpField R] [Enum V] [Enum Y] (Nbr : X → X → Prop) (x x' : X)
    (hx : Nbr x x') (Miqr : Mechanism X (Option V) R) (med : R → Mechanism X Y R)
    (ε₁ ε₂ δ₁ : R) (hε₁ : 0 ≤ ε₁) (hε₂ : 0 ≤ ε₂) (hiqr : ODP Nbr Miqr vob (iqrCosts ε₁) δ₁)
    (hmed : MedianDP Nbr med) :
    (iqrMedianAdv x x' Miqr med ε₁ ε₂ δ₁).Valid Nbr (3 * ε₁ + ε₂) δ₁ :=
  iqrMedian_valid Nbr x x' hx Miqr med ε₁ ε₂ δ₁ hε₁ hε₂ hiqr hmed

/-- **The IQR-then-median pipeline, by Theorem 7**: for neighbours `x, x'` and every set `𝒱` of
views, `Pr(view ∈ 𝒱 | x) ≤ e^{3ε₁ + ε₂} Pr(view ∈ 𝒱 | x') + δ₁`, although after a `⊥` of
`M_IQR` the median runs with `ε₁ + ε₂`. Rests on: Lemma 10's guarantee and `MedianDP`. -/
example {R X V Y : Type} [ExpField R] [Enum V] [Enum Y] (Nbr : X → X → Prop) (x x' : X)
    (hx : Nbr x x') (Miqr : Mechanism X (Option V) R) (med : R → Mechanism X Y R)
    (ε₁ ε₂ δ₁ : R) (hε₁ : 0 ≤ ε₁) (hε₂ : 0 ≤ ε₂) (hδ₁ : 0 ≤ δ₁)
    (hiqr : ODP Nbr Miqr vob (iqrCosts ε₁) δ₁) (hmed : MedianDP Nbr med)
    (𝒱 : List (Option V ⊕ Y) → Bool) :
    (iqrMedianAdv x x' Miqr med ε₁ ε₂ δ₁).prob false 𝒱
      ≤ exp (3 * ε₁ + ε₂) * (iqrMedianAdv x x' Miqr med ε₁ ε₂ δ₁).prob true 𝒱 + δ₁ :=
  iqr_median_dp Nbr x x' hx Miqr med ε₁ ε₂ δ₁ hε₁ hε₂ hδ₁ hiqr hmed 𝒱

/-- **The pipeline with odp's `M_IQR(ε₁, δ₁)`**. Rests on: `TailNoise ε₁` with
`Pr(Z ≥ K) ≤ δ₁/2`, `IntLaw.ShiftWithin (L − 1) ε₁`, `IQRDataFacts` of both discretisations, and
`MedianDP`. -/
example {R X V Y : Type} [ExpField R] [Enum V] [DecidableEq V] [Enum Y] (Nbr : X → X → Prop)
    (x x' : X) (hx : Nbr x x') {ε₁ : R} (ε₂ δ₁ : R) (hε₁ : 0 ≤ ε₁) (hε₂ : 0 ≤ ε₂)
    (hδ₁ : 0 ≤ δ₁) (Z : TailNoise R ε₁) (W : IntLaw R) (K : Int) (L : Nat)
    (out₁ out₂ : Option Int → V) (A₁ A₂ : X → Int) (sub₁ sub₂ : X → Option Int)
    (htail : Z.G K ≤ δ₁ / 2) (hW : W.ShiftWithin (L - 1) ε₁)
    (hd₁ : IQRDataFacts Nbr A₁ sub₁ L) (hd₂ : IQRDataFacts Nbr A₂ sub₂ L)
    (med : R → Mechanism X Y R) (hmed : MedianDP Nbr med) (𝒱 : List (Option V ⊕ Y) → Bool) :
    (iqrMedianAdv x x' (iqrLogBin Z W K out₁ out₂ A₁ A₂ sub₁ sub₂) med ε₁ ε₂ δ₁).prob false 𝒱
      ≤ exp (3 * ε₁ + ε₂)
        * (iqrMedianAdv x x' (iqrLogBin Z W K out₁ out₂ A₁ A₂ sub₁ sub₂) med ε₁ ε₂ δ₁).prob
            true 𝒱 + δ₁ :=
  iqr_median_dp_logBin Nbr x x' hx ε₂ δ₁ hε₁ hε₂ hδ₁ Z W K L out₁ out₂ A₁ A₂ sub₁ sub₂ htail hW
    hd₁ hd₂ med hmed 𝒱

/-- The exponential median's law (McSherry–Talwar, odp's `ExponentialMedian`):
`P(y) = exp(e·u(x, y)/2) / ∑_z exp(e·u(x, z)/2)` on the public grid `Y`. -/
example {R X Y : Type} [ExpField R] [Enum Y] (y₀ : Y) (u : X → Y → Int) (e : R) (x : X) (y : Y) :
    (expMech y₀ u e x).mass y
      = exp (e / 2 * intR (u x y)) * (fsum (fun z => exp (e / 2 * intR (u x z))))⁻¹ :=
  rfl

/-- **The exponential median is DP**: with a utility of sensitivity 1, it is `(e, 0)`-DP for every
budget `e ≥ 0` (so it satisfies the interface `MedianDP`). Rests on: `UtilitySensitivity`. -/
example {R X Y : Type} [ExpField R] [Enum Y] (Nbr : X → X → Prop) (y₀ : Y) (u : X → Y → Int)
    (hu : UtilitySensitivity Nbr u) :
    ∀ e : R, 0 ≤ e → DP Nbr (expMech y₀ u e) e 0 :=
  expMedian_dp Nbr y₀ u hu

/-- **The IQR-then-median pipeline with both of odp's mechanisms** (`M_IQR(ε₁, δ₁)`, then the
exponential median with `ε₂` after a value and `ε₁ + ε₂` after `⊥`). Rests on: `TailNoise ε₁`
with `Pr(Z ≥ K) ≤ δ₁/2`, `IntLaw.ShiftWithin (L − 1) ε₁`, `IQRDataFacts` of both
discretisations, `UtilitySensitivity`. -/
example {R X V Y : Type} [ExpField R] [Enum V] [DecidableEq V] [Enum Y] (Nbr : X → X → Prop)
    (x x' : X) (hx : Nbr x x') {ε₁ : R} (ε₂ δ₁ : R) (hε₁ : 0 ≤ ε₁) (hε₂ : 0 ≤ ε₂)
    (hδ₁ : 0 ≤ δ₁) (Z : TailNoise R ε₁) (W : IntLaw R) (K : Int) (L : Nat)
    (out₁ out₂ : Option Int → V) (A₁ A₂ : X → Int) (sub₁ sub₂ : X → Option Int)
    (htail : Z.G K ≤ δ₁ / 2) (hW : W.ShiftWithin (L - 1) ε₁)
    (hd₁ : IQRDataFacts Nbr A₁ sub₁ L) (hd₂ : IQRDataFacts Nbr A₂ sub₂ L)
    (y₀ : Y) (u : X → Y → Int) (hu : UtilitySensitivity Nbr u)
    (𝒱 : List (Option V ⊕ Y) → Bool) :
    (iqrMedianAdv x x' (iqrLogBin Z W K out₁ out₂ A₁ A₂ sub₁ sub₂) (expMech y₀ u) ε₁ ε₂ δ₁).prob
        false 𝒱
      ≤ exp (3 * ε₁ + ε₂)
        * (iqrMedianAdv x x' (iqrLogBin Z W K out₁ out₂ A₁ A₂ sub₁ sub₂) (expMech y₀ u) ε₁ ε₂
            δ₁).prob true 𝒱 + δ₁ :=
  iqr_median_dp_expMedian Nbr x x' hx ε₂ δ₁ hε₁ hε₂ hδ₁ Z W K L out₁ out₂ A₁ A₂ sub₁ sub₂ htail
    hW hd₁ hd₂ y₀ u hu 𝒱

/-! ## Lemma 11 (Sec. 5): iterative mechanisms with early stopping (Alg. 3) -/

/-- The basic-composition costs of Alg. 3: `ℰ(P_i) = Σ_{k ≤ k_i} ε_k`, and Lemma 11's `δ` is
`Σ_i Σ_{k ≤ k_i} δ_k`. -/
example {R : Type} [ExpField R] (ks : List Nat) (eps dl l : List R) (i : Fin ks.length) (k : Nat) :
    iterCosts ks eps i = prefSum eps (ks.get i) ∧ iterDeltaBasic ks dl = lsum ks (prefSum dl) ∧
      prefSum l 0 = 0 ∧ prefSum l (k + 1) = prefSum l k + l.getD k 0 :=
  ⟨rfl, rfl, rfl, rfl⟩

/-- **Lemma 11** (any COMP): if every prefix `M^{k_i} = (M_1, …, M_{k_i})` is
`(ε^{k_i}, δ^{k_i})`-DP, Alg. 3 is `(𝒫, ℰ, Σ_i δ^{k_i})`-ODP with `ℰ(P_i) = ε^{k_i}`, `𝒫` the
partition by the stop index. Rests on: `PrefixDP` (numbers from tested Python code for privacy
buckets, the optimal composition and RDP). Narrower: finite step outputs, deterministic stopping
rules (the paper's w.l.o.g.). -/
example {R X W : Type} [ExpField R] [Enum W] (Nbr : X → X → Prop) (M : Step X W R) (S : Stops)
    (rule : Fin S.ks.length → List W → Bool) (epsK delK : Fin S.ks.length → R)
    (hcomp : PrefixDP Nbr M S.ks epsK delK) :
    ODP Nbr (iterMech M S rule) Sigma.fst epsK (fsum delK) :=
  lemma11 Nbr M S rule epsK delK hcomp

/-- **Basic composition** (adaptive), from Theorem 7: if step `k` is `(ε_k, δ_k)`-DP for every
released history, the first `k` steps are `(Σ_{k' ≤ k} ε_{k'}, Σ_{k' ≤ k} δ_{k'})`-DP. Rests on:
`StepsDP`. -/
example {R X W : Type} [ExpField R] [Enum W] (Nbr : X → X → Prop) (M : Step X W R)
    (eps dl : List R) (heps : ∀ j, 0 ≤ eps.getD j 0) (hdl : ∀ j, 0 ≤ dl.getD j 0)
    (hsteps : StepsDP Nbr M eps dl) (k : Nat) (hk : k ≤ eps.length) :
    DP Nbr (prefixMech M k) (prefSum eps k) (prefSum dl k) :=
  basic_composition Nbr M eps dl heps hdl hsteps k hk

/-- Lemma 11's COMP hypothesis `PrefixDP` discharged by basic composition. Rests on:
`StepsDP`. -/
example {R X W : Type} [ExpField R] [Enum W] (Nbr : X → X → Prop) (M : Step X W R)
    (ks : List Nat) (eps dl : List R) (heps : ∀ j, 0 ≤ eps.getD j 0)
    (hdl : ∀ j, 0 ≤ dl.getD j 0) (hsteps : StepsDP Nbr M eps dl)
    (hks : ∀ i : Fin ks.length, ks.get i ≤ eps.length) :
    PrefixDP Nbr M ks (iterCosts ks eps) (fun i => prefSum dl (ks.get i)) :=
  prefixDP_basic Nbr M ks eps dl heps hdl hsteps hks

/-- **Lemma 11 with basic composition** (odp's default `Lemma11(BasicComposition())`): Alg. 3 is
`(𝒫, ℰ, δ)`-ODP with `ℰ(P_i) = Σ_{k ≤ k_i} ε_k`, `δ = Σ_i Σ_{k ≤ k_i} δ_k`. Rests on:
`StepsDP`. -/
example {R X W : Type} [ExpField R] [Enum W] (Nbr : X → X → Prop) (M : Step X W R) (S : Stops)
    (rule : Fin S.ks.length → List W → Bool) (eps dl : List R)
    (heps : ∀ j, 0 ≤ eps.getD j 0) (hdl : ∀ j, 0 ≤ dl.getD j 0)
    (hK : S.ks.get S.last ≤ eps.length) (hsteps : StepsDP Nbr M eps dl) :
    ODP Nbr (iterMech M S rule) Sigma.fst (iterCosts S.ks eps) (iterDeltaBasic S.ks dl) :=
  iter_odp_basic Nbr M S rule eps dl heps hdl hK hsteps

/-- The same with declared costs `ℰ(P_i) ≥ Σ_{k ≤ k_i} ε_k` (odp's `costs=`). Rests on:
`StepsDP`. -/
example {R X W : Type} [ExpField R] [Enum W] (Nbr : X → X → Prop) (M : Step X W R) (S : Stops)
    (rule : Fin S.ks.length → List W → Bool) (eps dl : List R) (E : Fin S.ks.length → R)
    (hE : ∀ i, iterCosts S.ks eps i ≤ E i)
    (heps : ∀ j, 0 ≤ eps.getD j 0) (hdl : ∀ j, 0 ≤ dl.getD j 0)
    (hK : S.ks.get S.last ≤ eps.length) (hsteps : StepsDP Nbr M eps dl) :
    ODP Nbr (iterMech M S rule) Sigma.fst E (iterDeltaBasic S.ks dl) :=
  iter_odp_basic_costs Nbr M S rule eps dl E hE heps hdl hK hsteps

/-- The same in the output-wise form of a round of Alg. 1, so Theorem 7 applies to runs that
contain Alg. 3. Rests on: `StepsDP`. -/
example {R X W : Type} [ExpField R] [Enum W] (Nbr : X → X → Prop) (M : Step X W R) (S : Stops)
    (rule : Fin S.ks.length → List W → Bool) (eps dl : List R)
    (heps : ∀ j, 0 ≤ eps.getD j 0) (hdl : ∀ j, 0 ≤ dl.getD j 0)
    (hK : S.ks.get S.last ≤ eps.length) (hsteps : StepsDP Nbr M eps dl) :
    ODPcost Nbr (iterMech M S rule) (fun o => iterCosts S.ks eps o.1) (iterDeltaBasic S.ks dl) :=
  iter_odpCost_basic Nbr M S rule eps dl heps hdl hK hsteps

/-- For strictly increasing stops (the paper's `k_1 < … < k_n`), block `i` is exactly the
histories of length `k_i`: the partition is the paper's `P_i = {s | |s| = k_i}`. -/
example {W : Type} (S : Stops) (hS : S.Strict) (o : IterOut W S.ks) (i : Fin S.ks.length) :
    o.1 = i ↔ o.2.1.length = S.ks.get i :=
  block_iff_length S hS o i

/-- **A step of `NoisyGradientDescent` is `(ε, 0)`-DP** for every released history, when
`m·r ≤ ε`. Rests on: `ShiftDominated N r` (the clamped discrete Laplace of scale `1/r` on each
coordinate) and `L1Sensitive … m` (the gridded gradient's L1 sensitivity). -/
example {R X C : Type} [ExpField R] [Enum C] (Nbr : X → X → Prop) (N : Int → Dist C R) (d : Nat)
    (g : List (Vec C d) → X → Vec Int d) (r ε : R) (m : Nat) (hr : 0 ≤ r)
    (hN : ShiftDominated N r) (hg : L1Sensitive Nbr d g m) (hε : natR m * r ≤ ε)
    (h : List (Vec C d)) :
    DP Nbr (noisyStep N d g h) ε 0 :=
  noisyStep_dp Nbr N d g r ε m hr hN hg hε h

/-- **`NoisyGradientDescent`** (the example of Sec. 5): `(𝒫, ℰ(P_i) = k_i·ε, 0)`-ODP. Rests on:
`ShiftDominated N r` and `L1Sensitive … m` with `m·r ≤ ε`. Narrower: each coordinate's release
clamped to a finite window. -/
example {R X C : Type} [ExpField R] [Enum C] (Nbr : X → X → Prop) (N : Int → Dist C R) (d : Nat)
    (g : List (Vec C d) → X → Vec Int d) (r ε : R) (m : Nat) (hr : 0 ≤ r)
    (hN : ShiftDominated N r) (hg : L1Sensitive Nbr d g m) (hε : natR m * r ≤ ε) (hε0 : 0 ≤ ε)
    (S : Stops) (rule : Fin S.ks.length → List (Vec C d) → Bool) :
    ODP Nbr (iterMech (noisyStep N d g) S rule) Sigma.fst (fun i => natR (S.ks.get i) * ε) 0 :=
  noisyGD_odp Nbr N d g r ε m hr hN hg hε hε0 S rule

/-! ## Theorem 17 and Corollary 18 (Sec. 6): test-and-release (Alg. 4, Alg. 5), on the grid -/

/-- Neighbours of Alg. 5 (one training record or one test record replaced), and the costs:
odp's `ℰ(values) = max(ε₁, (units_test/units)·ε₂)`,
`ℰ(⊥) = min(ℰ(values), (max(units_train, units_test)/units)·ε₂)`; Theorem 17's
`ℰ(⊥) = min(ℰ(values), ε₂)`; Corollary 18's `(ε₁, ε₂)`. -/
example {R Xtr Xte : Type} [ExpField R] (NbrTr : Xtr → Xtr → Prop) (NbrTe : Xte → Xte → Prop)
    (p p' : Xtr × Xte) (ε₁ ε₂ : R) (units unitsTest unitsTrain : Nat) :
    (trNbr NbrTr NbrTe p p' ↔ (NbrTr p.1 p'.1 ∧ p.2 = p'.2) ∨ (p.1 = p'.1 ∧ NbrTe p.2 p'.2)) ∧
      testReleaseCosts ε₁ ε₂ units unitsTest unitsTrain .value
        = rmax ε₁ (natR unitsTest / natR units * ε₂) ∧
      testReleaseCosts ε₁ ε₂ units unitsTest unitsTrain .bottom
        = rmin (rmax ε₁ (natR unitsTest / natR units * ε₂))
            (natR (max unitsTrain unitsTest) / natR units * ε₂) ∧
      thm17Costs ε₁ ε₂ units unitsTest .value = rmax ε₁ (natR unitsTest / natR units * ε₂) ∧
      thm17Costs ε₁ ε₂ units unitsTest .bottom
        = rmin (rmax ε₁ (natR unitsTest / natR units * ε₂)) ε₂ ∧
      cor18Costs ε₁ ε₂ .value = ε₁ ∧ cor18Costs ε₁ ε₂ .bottom = ε₂ :=
  ⟨Iff.rfl, rfl, rfl, rfl, rfl, rfl, rfl⟩

/-- **Theorem 17 on the grid, with odp's declared costs**: Alg. 5 is
`({values, ⊥}, ℰ, 0)`-ODP with respect to a change of one training record or one test record.
Rests on: `TailNoise (ε₂/units)` (test noise), `ERMRelease` (Alg. 4's DP, Thm. 16, and App. D's
coupling) and `TestSensitivity` (Lemma 21). Narrower: discrete test noise, grid score, finite
model grid. -/
example {R Xtr Xte V : Type} [ExpField R] [Enum V] (NbrTr : Xtr → Xtr → Prop)
    (NbrTe : Xte → Xte → Prop) (ε₁ ε₂ : R) (units unitsTest unitsTrain : Nat)
    (hunits : 0 < units) (hε₂ : 0 ≤ ε₂) (Z : TailNoise R (ε₂ / natR units))
    (rel : Xtr → Dist V R) (score : V → Xte → Int) (thr : Int)
    (hrel : ERMRelease NbrTr rel score ε₁ unitsTrain)
    (htest : TestSensitivity NbrTe score unitsTest) :
    ODP (trNbr NbrTr NbrTe) (testRelease Z rel score thr) vob
      (testReleaseCosts ε₁ ε₂ units unitsTest unitsTrain) 0 :=
  test_release_odp NbrTr NbrTe ε₁ ε₂ units unitsTest unitsTrain hunits hε₂ Z rel score thr hrel
    htest

/-- **Theorem 17** with the paper's `ℰ(⊥) = min(ℰ(values), ε₂)`, valid when
`units_train, units_test ≤ units` (the grid form of `a = max(2/n_test, 2(e^{2/(n_train Λ)} − 1))`).
Rests on: `TailNoise (ε₂/units)`, `ERMRelease`, `TestSensitivity`. -/
example {R Xtr Xte V : Type} [ExpField R] [Enum V] (NbrTr : Xtr → Xtr → Prop)
    (NbrTe : Xte → Xte → Prop) (ε₁ ε₂ : R) (units unitsTest unitsTrain : Nat)
    (hunits : 0 < units) (hε₂ : 0 ≤ ε₂) (hte : unitsTest ≤ units) (htr : unitsTrain ≤ units)
    (Z : TailNoise R (ε₂ / natR units)) (rel : Xtr → Dist V R) (score : V → Xte → Int)
    (thr : Int) (hrel : ERMRelease NbrTr rel score ε₁ unitsTrain)
    (htest : TestSensitivity NbrTe score unitsTest) :
    ODP (trNbr NbrTr NbrTe) (testRelease Z rel score thr) vob
      (thm17Costs ε₁ ε₂ units unitsTest) 0 :=
  thm17 NbrTr NbrTe ε₁ ε₂ units unitsTest unitsTrain hunits hε₂ hte htr Z rel score thr hrel htest

/-- **Corollary 18**: for `ε₁ ≥ ε₂ ≥ 0`, Alg. 5 is `({values, ⊥}, (ε₁, ε₂), 0)`-ODP. Rests on:
`TailNoise (ε₂/units)`, `ERMRelease`, `TestSensitivity` (and `units_train, units_test ≤ units`). -/
example {R Xtr Xte V : Type} [ExpField R] [Enum V] (NbrTr : Xtr → Xtr → Prop)
    (NbrTe : Xte → Xte → Prop) (ε₁ ε₂ : R) (units unitsTest unitsTrain : Nat)
    (hunits : 0 < units) (hε₂ : 0 ≤ ε₂) (hε : ε₂ ≤ ε₁) (hte : unitsTest ≤ units)
    (htr : unitsTrain ≤ units) (Z : TailNoise R (ε₂ / natR units)) (rel : Xtr → Dist V R)
    (score : V → Xte → Int) (thr : Int) (hrel : ERMRelease NbrTr rel score ε₁ unitsTrain)
    (htest : TestSensitivity NbrTe score unitsTest) :
    ODP (trNbr NbrTr NbrTe) (testRelease Z rel score thr) vob (cor18Costs ε₁ ε₂) 0 :=
  cor18 NbrTr NbrTe ε₁ ε₂ units unitsTest unitsTrain hunits hε₂ hε hte htr Z rel score thr hrel
    htest

/-! ## Which hypotheses have genuine witnesses (`Odp/Mech/Common/Witnesses.lean`)

Each hypothesis of the trust boundary, satisfied by a genuine instance of the kind it names (a
law that depends on the data; the law odp samples where it has no infinite sum). Not witnessed:
`LapNoise` (SVT's threshold noise), `GaussNoise` (the discrete Gaussian's `δ`),
`IntLaw.ShiftBound` — no finitely supported law satisfies them and the real laws are infinite
sums (`Odp/Mech/Common/Noise.lean`, "Which hypotheses have genuine witnesses"). -/

/-- `TailNoise α`: the discrete Laplace tail of scale `1/α` (odp's PTR and test noise). -/
example {R : Type} [ExpField R] (α : R) (hα : 0 ≤ α) :
    ∃ Z : TailNoise R α, Z.G = discreteLaplaceTail α :=
  ⟨dlapTailNoise α hα, rfl⟩

/-- `Iter.ShiftDominated`: the clamped discrete Laplace (odp's noisy-gradient coordinate). -/
example {R : Type} [ExpField R] (r : R) (hr : 0 ≤ r) (lo hi : Int) (hlh : lo ≤ hi) :
    ShiftDominated (fun u => clampedLaplace r hr lo hi hlh u) r :=
  shiftDominated_clampedLaplace hr lo hi hlh

/-- `Iter.StepsDP` and `Iter.PrefixDP`: the clamped-Laplace noisy step of the identity query,
`(r, 0)`-DP at every step, and its prefixes by basic composition. -/
example {R : Type} [ExpField R] (r : R) (hr : 0 ≤ r) (lo hi : Int) (hlh : lo ≤ hi) (K : Nat)
    (ks : List Nat) (hks : ∀ i : Fin ks.length, ks.get i ≤ K) :
    StepsDP (fun x x' : Int => (x - x').natAbs ≤ 1) (witnessStep r hr lo hi hlh)
        (List.replicate K r) [] ∧
      PrefixDP (fun x x' : Int => (x - x').natAbs ≤ 1) (witnessStep r hr lo hi hlh) ks
        (iterCosts ks (List.replicate K r)) (fun i => prefSum ([] : List R) (ks.get i)) ∧
      witnessStep r hr lo hi hlh
        = noisyStep (fun u => clampedLaplace r hr lo hi hlh u) 1 (fun _ x => ⟨[x], rfl⟩) :=
  ⟨stepsDP_noisy r hr lo hi hlh K, prefixDP_noisy r hr lo hi hlh K ks hks, rfl⟩

/-- The hypotheses of `noisyGD_odp` jointly: the clamped discrete Laplace, the identity query. -/
example {R : Type} [ExpField R] (r : R) (hr : 0 ≤ r) (lo hi : Int) (hlh : lo ≤ hi) :
    ShiftDominated (fun u => clampedLaplace r hr lo hi hlh u) r ∧
      L1Sensitive (C := Window lo hi) (fun x x' : Int => (x - x').natAbs ≤ 1) 1
        (fun _ x => ⟨[x], rfl⟩) 1 ∧ natR 1 * r ≤ r :=
  noisyGD_hyps_satisfiable r hr lo hi hlh

/-- `ERMRelease` and `TestSensitivity` jointly with the discrete Laplace test noise: randomized
response on the training bit, the score `[v] + t`. -/
example {R : Type} [ExpField R] {ε₁ ε₂ : R} (hε₁ : 0 ≤ ε₁) (units : Nat)
    (h : 0 ≤ ε₂ / natR units) (mt : Nat) (v : Bool) (t : Int) :
    (∃ Z : TailNoise R (ε₂ / natR units), Z.G = discreteLaplaceTail (ε₂ / natR units) ∧
      ERMRelease (fun _ _ : Bool => True) (rrMech ε₁ (fun a : Bool => a)) witnessScore ε₁ 1 ∧
      TestSensitivity (fun t t' : Int => (t - t').natAbs ≤ mt) witnessScore mt) ∧
    witnessScore v t = (if v then 1 else 0) + t :=
  ⟨testRelease_hyps_satisfiable hε₁ units h mt, rfl⟩

/-- `UtilitySensitivity` and `MedianDP`: the distance utility `−|x − f(y)|` and odp's exponential
median on it. -/
example {R Y : Type} [ExpField R] [Enum Y] (y₀ : Y) (f : Y → Int) (x : Int) (y : Y) :
    UtilitySensitivity (fun x x' : Int => (x - x').natAbs ≤ 1) (distUtility f) ∧
      MedianDP (fun x x' : Int => (x - x').natAbs ≤ 1) (expMech (R := R) y₀ (distUtility f)) ∧
      distUtility f x y = -(((x - f y).natAbs : Nat) : Int) :=
  ⟨utilitySensitivity_dist f, medianDP_dist y₀ f, rfl⟩

end OdpSpec.Mech
