/-
Copyright (c) 2025 The odp authors. Released under Apache 2.0.

# Ledger rules over natural numbers (core Lean only, no Mathlib)

A run of the accountant is exported as natural numbers in units of `1/D` (`D` is the lcm of all
denominators), so the rules of Alg. 1 become linear facts over `Nat`:

* `admits s e`: line 4 (`charged ≤ supEps`, `supEps ≤ ε_r`, `δ_i ≤ δ_r`);
* `update s e`: lines 7–8 (`ε_r := ε_r − ℰ_i(P_{i,k})`, `δ_r := δ_r − δ_i`);
* `replay`: the whole ledger;
* `blocksOk`: a Lemma 4 row (`supEps` is the maximum of the declared block costs and `charged`
  is the cost of the realised block);
* `deltasOk`: a Lemma 6 row (`δ_i ≥ ∑_k Δ_k`);
* `refundJustified`: a step charged below its declared sup must carry a `blocks` row;
* `mechOk`: a `mech` row — the round's classes, costs and `δ_i` are those of the named built-in
  mechanism for its recorded parameters (the cost functions `Odp/Mech` proves the guarantees
  for, here over `Nat`), or the round is a user's DP charge (one class) or declared;
* `checkCert`: a whole certificate (what `odp verify --kernel` has the kernel decide).

`Odp/Core/Ledger.lean` relates these rules to Theorem 7 (compiled with this file in CI);
`OdpMathlib/Rules.lean` relates them to the real and `ℝ≥0∞` budgets of the Mathlib statement (stated
only: never compiled here).

The definitions between the GENERATOR SUBSET markers are read by `scripts/gen_rules.py` and
translated to Python. They use only: `structure` with `Nat` fields; `def` with one expression
built from literals, variables, field access, application of defs of this file, `+`, `-`
(truncated), `*`, `decide (a ≤ b)`, `decide (a < b)`, `decide (a = b)` (on `Nat`), `&&`, `||`, `!`,
`if c then a else b` (with `c : Bool`), anonymous constructors, structure instances, list
literals `[a, b]`, `x :: xs`, `some`, `none`, `true`, `false`; list recursion written as two
lines `| [] => …` and `| x :: xs => …`; and recursion on two lists at once, written as three
lines `| [], [] => …`, `| x :: xs, y :: ys => …` and `| _, _ => …`. (`decide` on lists is avoided:
this toolchain's compiler lacks code for `instDecidableEqList`.)
-/
module

@[expose] public section

set_option autoImplicit false
-- `listLen` names the head of the list without using it (generator grammar: `| x :: xs`).
set_option linter.unusedVariables false

namespace Odp.LedgerCore

-- BEGIN GENERATOR SUBSET

/-- Remaining budget of Alg. 1, in units of `1/D`. -/
structure State where
  eps : Nat    -- remaining ε budget ε_r
  delta : Nat  -- remaining δ budget δ_r
  deriving Repr, DecidableEq

/-- One realised round of Alg. 1, in units of `1/D`. -/
structure Entry where
  supEps : Nat   -- sup over the blocks of ℰ_i (the DP ε of M_i by Lemma 4)
  charged : Nat  -- ℰ_i(P_{i,k}) for the block k that contains the released output
  delta : Nat    -- δ_i, fixed before the output is seen
  deriving Repr, DecidableEq

/-- Alg. 1, line 4. -/
def admits (s : State) (e : Entry) : Bool :=
  decide (e.charged ≤ e.supEps) && decide (e.supEps ≤ s.eps) && decide (e.delta ≤ s.delta)

/-- Alg. 1, lines 7–8. -/
def update (s : State) (e : Entry) : State :=
  { eps := s.eps - e.charged, delta := s.delta - e.delta }

/-- Replay a ledger: `some t` with the final budget if every row is admitted, else `none`. -/
def replay (s : State) : List Entry → Option State
  | [] => some s
  | e :: es => if admits s e then replay (update s e) es else none

/-- Maximum of a list (`0` for the empty list). -/
def listMax : List Nat → Nat
  | [] => 0
  | x :: xs => if decide (listMax xs ≤ x) then x else listMax xs

/-- Length of a list. -/
def listLen : List Nat → Nat
  | [] => 0
  | x :: xs => listLen xs + 1

/-- The `k`-th element of a list (0-based; `0` past the end). -/
def blockAt (k : Nat) : List Nat → Nat
  | [] => 0
  | b :: bs => if decide (k = 0) then b else blockAt (k - 1) bs

/-- Sum of a list. -/
def listSum : List Nat → Nat
  | [] => 0
  | x :: xs => x + listSum xs

/-- Lemma 4 row `blocks E_1 … E_m ; realized k`: the declared DP ε is the maximum block cost,
the realised index is in range, and the charge is the cost of the realised block. -/
def blocksOk (e : Entry) (bs : List Nat) (k : Nat) : Bool :=
  decide (e.supEps = listMax bs) && decide (k < listLen bs) && decide (e.charged = blockAt k bs)

/-- Lemma 6 row `deltas Δ_1 … Δ_m`: the declared `δ_i` covers the sum of the subset-DP deltas. -/
def deltasOk (e : Entry) (ds : List Nat) : Bool :=
  decide (listSum ds ≤ e.delta)

/-- A step charged below its declared `supEps` claims an ODP refund; the refund must be backed by
a `blocks` row (Lemma 4: then the charge is the cost of the realised block). -/
def refundJustified (e : Entry) (hasBlocks : Bool) : Bool :=
  decide (e.supEps ≤ e.charged) || hasBlocks

/-! #### The built-in mechanisms' guarantees as functions of their parameters (`mech` rows)

A certificate's `mech` row names the mechanism that made a round and gives its exact
parameters: amounts (ε's, δ's) in units of `1/D` like every other number of the certificate, and
counts (the SVT cut-off `c`, stopping points, grid sensitivities) as they are. `mechOk`
recomputes from them the round's classes, their costs and `δ_i` — the guarantee that
`Odp/Mech` proves for that mechanism — and compares them with the round's `step` and `blocks`
rows. Classes are listed in the order odp's ledger records them (the declaration order of the
mechanism's guarantee, e.g. (values, ⊥)). Products replace divisions: a cost `a / u` is
compared as `E · u = a`. -/

/-- The mechanism named by a `mech` row (`OdpCheck.lean` and `python/odp/certs/mechanisms.py`
map the row's name to these numbers). -/
def kindDeclared : Nat := 0
def kindDp : Nat := 1
def kindLaplace : Nat := 2
def kindGaussian : Nat := 3
def kindRr : Nat := 4
def kindMedian : Nat := 5
def kindErm : Nat := 6
def kindToy : Nat := 7
def kindSvt : Nat := 8
def kindPtr : Nat := 9
def kindIqr : Nat := 10
def kindIter : Nat := 11
def kindIterCosts : Nat := 12
def kindTestRelease : Nat := 13
def kindLemma11 : Nat := 14

/-- `count` consecutive steps of an iterative mechanism (Alg. 3), each `(eps, delta)`-DP. -/
structure StepGroup where
  count : Nat
  eps : Nat
  delta : Nat
  deriving Repr, DecidableEq

/-- Number of step groups. -/
def groupsLen : List StepGroup → Nat
  | [] => 0
  | g :: gs => groupsLen gs + 1

/-- Number of steps the groups describe. -/
def stepCount : List StepGroup → Nat
  | [] => 0
  | g :: gs => g.count + stepCount gs

/-- `acc + ε_1 + … + ε_k` over the steps the groups describe (all of them if fewer than `k`). -/
def prefixEps (k acc : Nat) : List StepGroup → Nat
  | [] => acc
  | g :: gs => if decide (k ≤ g.count) then acc + k * g.eps else prefixEps (k - g.count) (acc + g.count * g.eps) gs

/-- `acc + δ_1 + … + δ_k` over the steps the groups describe (all of them if fewer than `k`). -/
def prefixDelta (k acc : Nat) : List StepGroup → Nat
  | [] => acc
  | g :: gs => if decide (k ≤ g.count) then acc + k * g.delta else prefixDelta (k - g.count) (acc + g.count * g.delta) gs

/-- Equality of two lists of numbers, element by element. -/
def listEq : List Nat → List Nat → Bool
  | [], [] => true
  | x :: xs, y :: ys => decide (x = y) && listEq xs ys
  | _, _ => false

/-- The larger of two numbers. -/
def natMax (a b : Nat) : Nat := if decide (a ≤ b) then b else a

/-- The smaller of two numbers. -/
def natMin (a b : Nat) : Nat := if decide (a ≤ b) then a else b

/-- An `ε`-DP mechanism with the trivial partition (Lemma 3): one class, costing `ε`. Laplace,
randomized response, the exponential-mechanism median and ERM output perturbation (δ = 0), and
the Gaussian mechanism (its δ). -/
def dpBlocks (eps : Nat) : List Nat := [eps]

/-- M_toy (Hartmann et al. 2022, Sec. 1): classes (values, ⊥) costing `(ε, 0)`; `δ = 0`. -/
def toyBlocks (eps : Nat) : List Nat := [eps, 0]

/-- PTR with an `(ε, δ)`-PTR function (Hartmann et al. 2022, Sec. 4.2, Def. 9): classes (values, ⊥) costing
`(2ε, ε)`; the round's `δ` is the function's `δ`. -/
def ptrBlocks (eps : Nat) : List Nat := [2 * eps, eps]

/-- M_IQR (Hartmann et al. 2022, Lemma 10): classes (values, ⊥) costing `(3ε, 2ε)`; `δ` is the mechanism's. -/
def iqrBlocks (eps : Nat) : List Nat := [3 * eps, 2 * eps]

/-- Lemma 11 with basic composition: the class "stopped after `k_i` steps" costs
`ε_1 + … + ε_{k_i}`, one cost per stopping point `k_1 < … < k_n`. -/
def iterBlocks (gs : List StepGroup) : List Nat → List Nat
  | [] => []
  | k :: ks => prefixEps k 0 gs :: iterBlocks gs ks

/-- Lemma 11 with basic composition: `δ = Σ_i (δ_1 + … + δ_{k_i})`. -/
def iterDelta (gs : List StepGroup) : List Nat → Nat
  | [] => 0
  | k :: ks => prefixDelta k 0 gs + iterDelta gs ks

/-- Stopping points that increase strictly, all above `prev`. -/
def increasingFrom (prev : Nat) : List Nat → Bool
  | [] => true
  | k :: ks => if decide (prev < k) then increasingFrom k ks else false

/-- Stopping points `1 ≤ k_1 < … < k_n` (at least one) whose last is the number of steps. -/
def stopsOk (gs : List StepGroup) (stops : List Nat) : Bool :=
  decide (0 < listLen stops) && increasingFrom 0 stops && decide (listMax stops = stepCount gs)

/-- SVT (Alg. 2, Lemma 8), classes `c' = k, k + 1, …, c` (the number of ⊤ answers):
`ℰ(S_{c'}) = ε1 + (c'/c)·ε2`, compared as `ℰ(S_{c'})·c = ε1·c + c'·ε2`; the list must end at
class `c`. -/
def svtFrom (c e1 e2 k : Nat) : List Nat → Bool
  | [] => decide (k = c + 1)
  | b :: bs => if decide (b * c = e1 * c + k * e2) then svtFrom c e1 e2 (k + 1) bs else false

/-- Lemma 11 with any COMP (`kindLemma11`): the row gives one `StepGroup` per stop,
`(k_i, ε^{k_i}, δ^{k_i})` — the stop, its cost and the `δ` for which the prefix `M^{k_i}` is
`(ε^{k_i}, δ^{k_i})`-DP (the `count` field holds `k_i`). The classes cost `ε^{k_1}, …, ε^{k_n}`. -/
def stopCosts : List StepGroup → List Nat
  | [] => []
  | g :: gs => g.eps :: stopCosts gs

/-- Lemma 11 with any COMP: `δ^{k_1} + … + δ^{k_n}`. -/
def stopDeltas : List StepGroup → Nat
  | [] => 0
  | g :: gs => g.delta + stopDeltas gs

/-- The stops `k_i` of Lemma 11 rows increase strictly, all above `prev`. -/
def stopsAbove (prev : Nat) : List StepGroup → Bool
  | [] => true
  | g :: gs => if decide (prev < g.count) then stopsAbove g.count gs else false

/-- Lemma 11 with any COMP (Hartmann et al. 2022, Sec. 5): at least one stop, `1 ≤ k_1 < … < k_n`; the
classes cost `ε^{k_i}` (with a `blocks` row exactly these, without one the `supEps` is the
largest); the round's `δ` covers `Σ_i δ^{k_i}`. -/
def lemma11Ok (e : Entry) (bs : List Nat) (hasBlocks : Bool) (gs : List StepGroup) : Bool :=
  decide (0 < groupsLen gs) && stopsAbove 0 gs && decide (stopDeltas gs ≤ e.delta) &&
    (if hasBlocks then listEq bs (stopCosts gs) else decide (e.supEps = listMax (stopCosts gs)))

/-- The round's `δ` is `d`; with a `blocks` row the classes cost exactly `expected`, without one
(a round charged its sup) its `supEps` is the largest of them. -/
def costsAre (e : Entry) (bs : List Nat) (hasBlocks : Bool) (expected : List Nat) (d : Nat) : Bool :=
  decide (e.delta = d) && (if hasBlocks then listEq bs expected else decide (e.supEps = listMax expected))

/-- SVT with cut-off `c ≥ 1` and budgets `ε1`, `ε2` (Lemma 8, `δ = 0`): the classes are
`c' = 0 … c`; the sup is `ε1 + ε2`. -/
def svtOk (e : Entry) (bs : List Nat) (hasBlocks : Bool) (c e1 e2 : Nat) : Bool :=
  decide (0 < c) && decide (e.delta = 0) && (if hasBlocks then svtFrom c e1 e2 0 bs else decide (e.supEps = e1 + e2))

/-- Test-and-release (Alg. 5, Thm. 17 on odp's grid): the test noise has scale `u/ε2` grid units
and one test (training) record moves the tested error by at most `ut` (`utr`) units; classes
(values, ⊥) cost `ℰ(values) = max(ε1, (ut/u)·ε2)` and `ℰ(⊥) = min(ℰ(values), (max(utr, ut)/u)·ε2)`,
compared after multiplying by `u`; `δ = 0`. -/
def testReleaseOk (e : Entry) (bs : List Nat) (hasBlocks : Bool) (e1 e2 u ut utr : Nat) : Bool :=
  decide (0 < u) && decide (e.delta = 0) &&
    (if hasBlocks then
      decide (listLen bs = 2) && decide (blockAt 0 bs * u = natMax (e1 * u) (ut * e2)) &&
        decide (blockAt 1 bs * u = natMin (blockAt 0 bs * u) (natMax utr ut * e2))
    else decide (e.supEps * u = natMax (e1 * u) (ut * e2)))

/-- Exactly `n` numeric parameters and no step groups. -/
def arity (ps : List Nat) (gs : List StepGroup) (n : Nat) : Bool :=
  decide (listLen ps = n) && decide (groupsLen gs = 0)

/-- A `mech` row (`kind`, numeric parameters `ps`, step groups `gs`) against the round's `step`
row `e` and its `blocks` row `bs` (`hasBlocks`; `bs = []` without one): the round's classes, costs
and `δ` are the named mechanism's for these parameters. A round of a user's own mechanism
(`kindDeclared`) is taken as declared; a user's DP charge (`kindDp`, Lemma 3) must have one class,
costing its `supEps`. An unknown kind or a wrong number of parameters fails. For `kindIterCosts`
(an iterative mechanism whose `δ` comes from OptDel, Thm. 15, a numerical bound) the
costs are checked and `δ` is not. For `kindLemma11` (Lemma 11 with another COMP: privacy
buckets, the optimal composition, RDP) the row gives the stops with their costs and prefix `δ`'s,
and the round's `δ` must cover their sum (`lemma11Ok`). -/
def mechOk (e : Entry) (bs : List Nat) (hasBlocks : Bool) (kind : Nat) (ps : List Nat) (gs : List StepGroup) : Bool :=
  if decide (kind = kindDeclared) then arity ps gs 0
  else if decide (kind = kindDp) then arity ps gs 0 && (if hasBlocks then listEq bs [e.supEps] else true)
  else if decide (kind = kindLaplace) then arity ps gs 1 && costsAre e bs hasBlocks (dpBlocks (blockAt 0 ps)) 0
  else if decide (kind = kindGaussian) then arity ps gs 2 && costsAre e bs hasBlocks (dpBlocks (blockAt 0 ps)) (blockAt 1 ps)
  else if decide (kind = kindRr) then arity ps gs 1 && costsAre e bs hasBlocks (dpBlocks (blockAt 0 ps)) 0
  else if decide (kind = kindMedian) then arity ps gs 1 && costsAre e bs hasBlocks (dpBlocks (blockAt 0 ps)) 0
  else if decide (kind = kindErm) then arity ps gs 1 && costsAre e bs hasBlocks (dpBlocks (blockAt 0 ps)) 0
  else if decide (kind = kindToy) then arity ps gs 1 && costsAre e bs hasBlocks (toyBlocks (blockAt 0 ps)) 0
  else if decide (kind = kindSvt) then arity ps gs 3 && svtOk e bs hasBlocks (blockAt 0 ps) (blockAt 1 ps) (blockAt 2 ps)
  else if decide (kind = kindPtr) then arity ps gs 2 && costsAre e bs hasBlocks (ptrBlocks (blockAt 0 ps)) (blockAt 1 ps)
  else if decide (kind = kindIqr) then arity ps gs 2 && costsAre e bs hasBlocks (iqrBlocks (blockAt 0 ps)) (blockAt 1 ps)
  else if decide (kind = kindIter) then stopsOk gs ps && costsAre e bs hasBlocks (iterBlocks gs ps) (iterDelta gs ps)
  else if decide (kind = kindIterCosts) then stopsOk gs ps && costsAre e bs hasBlocks (iterBlocks gs ps) e.delta
  else if decide (kind = kindTestRelease) then arity ps gs 5 && testReleaseOk e bs hasBlocks (blockAt 0 ps) (blockAt 1 ps) (blockAt 2 ps) (blockAt 3 ps) (blockAt 4 ps)
  else if decide (kind = kindLemma11) then decide (listLen ps = 0) && lemma11Ok e bs hasBlocks gs
  else false

/-! #### Lanes (`odp.ledger.lanes`)

A laned ledger divides its budget `(ε_t, δ_t)` into lanes, each a privacy filter with a share
`(ε_j, δ_j)`: the ODP lane (Alg. 1: its rows are the certificate's `step`s, replayed by
`checkCert` from `odpShare`), and notion lanes holding their budget in their own coordinates
(`Slot`s: a zCDP lane's `ρ`; a Rényi lane's budget at each of its orders; an advanced-composition
lane's `Σε²` and `Σδ` budgets), charged by the certificate's `charge` rows (`Cost`s, one per
coordinate). The sums only grow, so "the final sums fit" is "every admission fitted". -/

/-- The lane kinds (the order of `odp.ledger.lanes.NOTIONS`). -/
def laneOdp : Nat := 0
def laneZcdp : Nat := 1
def laneRenyi : Nat := 2
def laneAdvanced : Nat := 3

/-- A lane's kind and its share `(ε_j, δ_j)` of the budget, in units of `1/D`. -/
structure Share where
  kind : Nat
  eps : Nat
  delta : Nat
  deriving Repr, DecidableEq

/-- One coordinate of a notion lane's budget: the lane (its position among the shares), the
coordinate, and the budget, in units of `1/D`. -/
structure Slot where
  lane : Nat
  coord : Nat
  budget : Nat
  deriving Repr, DecidableEq

/-- One coordinate of a lane round's cost, in units of `1/D`. -/
structure Cost where
  lane : Nat
  coord : Nat
  amount : Nat
  deriving Repr, DecidableEq

/-- `Σ_j ε_j` over the shares. -/
def sharesEps : List Share → Nat
  | [] => 0
  | h :: hs => h.eps + sharesEps hs

/-- `Σ_j δ_j` over the shares. -/
def sharesDelta : List Share → Nat
  | [] => 0
  | h :: hs => h.delta + sharesDelta hs

/-- The ODP lane's share (the first share of kind `laneOdp`; `⟨0, 0⟩` without one): the budget
the `step` rows replay from. -/
def odpShare : List Share → State
  | [] => ⟨0, 0⟩
  | h :: hs => if decide (h.kind = laneOdp) then ⟨h.eps, h.delta⟩ else odpShare hs

/-- `Σ` of the costs charged to coordinate `k` of lane `l`. -/
def costSum (l k : Nat) : List Cost → Nat
  | [] => 0
  | c :: cs => (if decide (c.lane = l) && decide (c.coord = k) then c.amount else 0) + costSum l k cs

/-- Every coordinate of lane `l` holds the sum charged to it (zCDP and advanced lanes). -/
def allFit (l : Nat) (cs : List Cost) : List Slot → Bool
  | [] => true
  | s :: ss => (if decide (s.lane = l) then decide (costSum l s.coord cs ≤ s.budget) else true) && allFit l cs ss

/-- Some coordinate of lane `l` holds the sum charged to it (a Rényi lane: some order fits). -/
def someFit (l : Nat) (cs : List Cost) : List Slot → Bool
  | [] => false
  | s :: ss => (decide (s.lane = l) && decide (costSum l s.coord cs ≤ s.budget)) || someFit l cs ss

/-- Lane `l` was charged something. -/
def laneCharged (l : Nat) : List Cost → Bool
  | [] => false
  | c :: cs => decide (c.lane = l) || laneCharged l cs

/-- Lane `l`, of kind `kind`, holds its charges: the ODP lane comes first (`l = 0`) and has no
charges (its rows are `step`s), a zCDP or advanced lane fits in every coordinate, a Rényi lane in
some order (or was never charged); an unknown kind fails. -/
def laneFits (l kind : Nat) (cs : List Cost) (ss : List Slot) : Bool :=
  if decide (kind = laneOdp) then decide (l = 0) && !(laneCharged l cs)
  else if decide (kind = laneZcdp) then allFit l cs ss
  else if decide (kind = laneRenyi) then !(laneCharged l cs) || someFit l cs ss
  else if decide (kind = laneAdvanced) then allFit l cs ss
  else false

/-- Every lane, numbered from `l`, holds its charges. -/
def lanesFit (l : Nat) (cs : List Cost) (ss : List Slot) : List Share → Bool
  | [] => true
  | h :: hs => if laneFits l h.kind cs ss then lanesFit (l + 1) cs ss hs else false

/-- A coordinate of some lane's budget takes the cost `c`. -/
def slotOf (c : Cost) : List Slot → Bool
  | [] => false
  | s :: ss => (decide (s.lane = c.lane) && decide (s.coord = c.coord)) || slotOf c ss

/-- Every cost goes to a coordinate of some lane's budget. -/
def costsKnown (ss : List Slot) : List Cost → Bool
  | [] => true
  | c :: cs => slotOf c ss && costsKnown ss cs

/-- **A laned ledger's lanes**: the shares add up to the total budget exactly, every cost goes to
a coordinate of a lane's budget, and every lane holds its charges (`lanesFit`). With
`checkCert (odpShare hs)` accepting the `step` rows, this is what `odp verify --kernel` decides
for a laned certificate. -/
def lanesOk (total : State) (hs : List Share) (ss : List Slot) (cs : List Cost) : Bool :=
  decide (sharesEps hs = total.eps) && decide (sharesDelta hs = total.delta) &&
    costsKnown ss cs && lanesFit 0 cs ss hs

/-- A zCDP-lane charge of the discrete Gaussian with integer sensitivity `m` (grid units) and
variance `s2/D` (grid units²): its cost is `ρ = m²/(2σ²)` (Canonne–Kamath–Steinke 2020, Thm. 4),
in units of `1/D` compared as `2·ρ·s2 = m²·D²`. -/
def gaussianRhoOk (d rho m s2 : Nat) : Bool :=
  decide (2 * rho * s2 = m * m * (d * d))

/-- A `charge … ; gaussian m s2` row: its cost `rho` and the noise it names. -/
structure GaussRow where
  rho : Nat
  m : Nat
  s2 : Nat
  deriving Repr, DecidableEq

/-- Every Gaussian row's cost is the discrete Gaussian's `ρ` (`gaussianRhoOk`). -/
def gaussiansOk (d : Nat) : List GaussRow → Bool
  | [] => true
  | g :: gs => gaussianRhoOk d g.rho g.m g.s2 && gaussiansOk d gs

-- END GENERATOR SUBSET

/-- Total charge of a ledger. -/
def totalCharged : List Entry → Nat
  | [] => 0
  | e :: es => e.charged + totalCharged es

/-- Total `δ` of a ledger. -/
def totalDelta : List Entry → Nat
  | [] => 0
  | e :: es => e.delta + totalDelta es

/-! ### Equations (all by `rfl`) -/

theorem replay_nil (s : State) : replay s [] = some s := rfl

theorem replay_cons (s : State) (e : Entry) (es : List Entry) :
    replay s (e :: es) = if admits s e then replay (update s e) es else none := rfl

theorem update_eps (s : State) (e : Entry) : (update s e).eps = s.eps - e.charged := rfl

theorem update_delta (s : State) (e : Entry) : (update s e).delta = s.delta - e.delta := rfl

theorem totalCharged_nil : totalCharged [] = 0 := rfl

theorem totalCharged_cons (e : Entry) (es : List Entry) :
    totalCharged (e :: es) = e.charged + totalCharged es := rfl

theorem totalDelta_nil : totalDelta [] = 0 := rfl

theorem totalDelta_cons (e : Entry) (es : List Entry) :
    totalDelta (e :: es) = e.delta + totalDelta es := rfl

theorem listMax_cons (x : Nat) (xs : List Nat) :
    listMax (x :: xs) = if decide (listMax xs ≤ x) then x else listMax xs := rfl

theorem blockAt_cons (k b : Nat) (bs : List Nat) :
    blockAt k (b :: bs) = if decide (k = 0) then b else blockAt (k - 1) bs := rfl

/-! ### Booleans -/

theorem band_left {a b : Bool} (h : (a && b) = true) : a = true := by
  revert h
  cases a <;> cases b <;> decide

theorem band_right {a b : Bool} (h : (a && b) = true) : b = true := by
  revert h
  cases a <;> cases b <;> decide

theorem band_intro {a b : Bool} (ha : a = true) (hb : b = true) : (a && b) = true := by
  revert ha hb
  cases a <;> cases b <;> decide

/-! ### Soundness -/

/-- An accepted row is exactly the three inequalities of Alg. 1, line 4. -/
theorem admits_iff (s : State) (e : Entry) :
    admits s e = true ↔ (e.charged ≤ e.supEps ∧ e.supEps ≤ s.eps ∧ e.delta ≤ s.delta) := by
  constructor
  · intro h
    have h' : (decide (e.charged ≤ e.supEps) && decide (e.supEps ≤ s.eps)
        && decide (e.delta ≤ s.delta)) = true := h
    exact ⟨of_decide_eq_true (band_left (band_left h')),
      of_decide_eq_true (band_right (band_left h')), of_decide_eq_true (band_right h')⟩
  · intro h
    exact band_intro (band_intro (decide_eq_true h.1) (decide_eq_true h.2.1))
      (decide_eq_true h.2.2)

/-- **Replay soundness.** If the ledger replays to `t`, the total charge and the total `δ` fit in
the starting budget, and the final budget is the starting budget minus the totals. -/
theorem replay_sound (es : List Entry) :
    ∀ (s t : State), replay s es = some t →
      totalCharged es ≤ s.eps ∧ totalDelta es ≤ s.delta ∧
        t.eps = s.eps - totalCharged es ∧ t.delta = s.delta - totalDelta es := by
  induction es with
  | nil =>
    intro s t h
    rw [replay_nil] at h
    have hst : s = t := Option.some.inj h
    subst hst
    rw [totalCharged_nil, totalDelta_nil]
    refine ⟨Nat.zero_le _, Nat.zero_le _, ?_, ?_⟩ <;> omega
  | cons e es ih =>
    intro s t h
    rw [replay_cons] at h
    by_cases ha : admits s e = true
    · rw [if_pos ha] at h
      obtain ⟨a1, a2, a3⟩ := (admits_iff s e).mp ha
      have ih' := ih (update s e) t h
      rw [update_eps, update_delta] at ih'
      obtain ⟨i1, i2, i3, i4⟩ := ih'
      rw [totalCharged_cons, totalDelta_cons]
      refine ⟨?_, ?_, ?_, ?_⟩ <;> omega
    · rw [if_neg ha] at h
      cases h

/-- The head of a list and the maximum of its tail are at most the maximum of the list. -/
theorem listMax_cons_ge (x : Nat) (xs : List Nat) :
    x ≤ listMax (x :: xs) ∧ listMax xs ≤ listMax (x :: xs) := by
  rw [listMax_cons]
  by_cases h : listMax xs ≤ x
  · rw [if_pos (decide_eq_true h)]
    exact ⟨Nat.le_refl x, h⟩
  · rw [if_neg (fun h' : decide (listMax xs ≤ x) = true => h (of_decide_eq_true h'))]
    exact ⟨by omega, Nat.le_refl _⟩

/-- Every block is at most the maximum (Lemma 4: `ℰ(P_j) ≤ sup_k ℰ(P_k)`). -/
theorem blockAt_le_listMax (bs : List Nat) : ∀ (k : Nat), blockAt k bs ≤ listMax bs := by
  induction bs with
  | nil =>
    intro k
    exact Nat.zero_le _
  | cons b bs ih =>
    intro k
    have hm := listMax_cons_ge b bs
    rw [blockAt_cons]
    by_cases hk : k = 0
    · rw [if_pos (decide_eq_true hk)]
      exact hm.1
    · rw [if_neg (fun h' : decide (k = 0) = true => hk (of_decide_eq_true h'))]
      exact Nat.le_trans (ih (k - 1)) hm.2

/-- What an accepted `blocks` row certifies. -/
theorem blocksOk_sound {e : Entry} {bs : List Nat} {k : Nat} (h : blocksOk e bs k = true) :
    e.supEps = listMax bs ∧ k < listLen bs ∧ e.charged = blockAt k bs := by
  have h' : (decide (e.supEps = listMax bs) && decide (k < listLen bs)
      && decide (e.charged = blockAt k bs)) = true := h
  exact ⟨of_decide_eq_true (band_left (band_left h')),
    of_decide_eq_true (band_right (band_left h')), of_decide_eq_true (band_right h')⟩

/-- An accepted `blocks` row bounds every block by `supEps`, and in particular the charge. -/
theorem blocksOk_bound {e : Entry} {bs : List Nat} {k : Nat} (h : blocksOk e bs k = true) :
    (∀ j, blockAt j bs ≤ e.supEps) ∧ e.charged ≤ e.supEps := by
  obtain ⟨h1, _, h3⟩ := blocksOk_sound h
  refine ⟨fun j => ?_, ?_⟩
  · have hj := blockAt_le_listMax bs j
    omega
  · have hk := blockAt_le_listMax bs k
    omega

theorem bor_false {a : Bool} (h : (a || false) = true) : a = true := by
  revert h
  cases a <;> decide

/-- A step without a `blocks` row that passes `refundJustified` is charged at least its declared
`supEps` (so, with `admits`, exactly its sup): no refund without a realised block. -/
theorem refundJustified_no_blocks {e : Entry} (h : refundJustified e false = true) :
    e.supEps ≤ e.charged := by
  have h' : (decide (e.supEps ≤ e.charged) || false) = true := h
  exact of_decide_eq_true (bor_false h')

/-- What an accepted `deltas` row certifies. -/
theorem deltasOk_sound {e : Entry} {ds : List Nat} (h : deltasOk e ds = true) :
    listSum ds ≤ e.delta := by
  have h' : decide (listSum ds ≤ e.delta) = true := h
  exact of_decide_eq_true h'

/-! ### Whole certificates (what `odp verify --kernel` asks the kernel to decide) -/

/-- A certificate's `mech` row: which mechanism made the round (`kind`), its numeric parameters
and, for an iterative mechanism, its step groups. -/
structure MechRow where
  kind : Nat
  params : List Nat
  groups : List StepGroup

/-- The `mech` row of a round taken as declared (what a step without a `mech` row means). -/
def MechRow.declared : MechRow := ⟨kindDeclared, [], []⟩

/-- One step of a certificate: its row, its optional `blocks E… ; realized k` (Lemma 4) and
`deltas Δ…` (Lemma 6) rows, and its `mech` row (the mechanism and its parameters). -/
structure CertStep where
  entry : Entry
  blocks : Option (List Nat × Nat)
  deltas : Option (List Nat)
  mech : MechRow

/-- The step's `mech` row passes `mechOk` against its `step` and `blocks` rows. -/
def stepMechOk (c : CertStep) : Bool :=
  match c.blocks with
  | some (bs, _) => mechOk c.entry bs true c.mech.kind c.mech.params c.mech.groups
  | none => mechOk c.entry [] false c.mech.kind c.mech.params c.mech.groups

/-- The rules of a step besides `admits`: its Lemma 4 row, its Lemma 6 row, its `mech` row (the
classes, costs and `δ` are those of the named mechanism with its parameters), and no refund
without a `blocks` row (`refundJustified`). The generated Python checker applies the same five
rules, in this order. -/
def stepRowsOk (c : CertStep) : Bool :=
  (match c.blocks with
    | some (bs, k) => blocksOk c.entry bs k
    | none => true) &&
  (match c.deltas with
    | some ds => deltasOk c.entry ds
    | none => true) &&
  stepMechOk c &&
  refundJustified c.entry c.blocks.isSome

/-- Replay a whole certificate: every step passes `admits` and `stepRowsOk`. -/
def checkCert (s : State) : List CertStep → Option State
  | [] => some s
  | c :: cs => if admits s c.entry && stepRowsOk c then checkCert (update s c.entry) cs else none

theorem checkCert_nil (s : State) : checkCert s [] = some s := rfl

theorem checkCert_cons (s : State) (c : CertStep) (cs : List CertStep) :
    checkCert s (c :: cs)
      = if admits s c.entry && stepRowsOk c then checkCert (update s c.entry) cs else none := rfl

/-- A certificate read in chunks: the first chunk ends where the second starts. -/
theorem checkCert_append (l₁ : List CertStep) :
    ∀ (l₂ : List CertStep) (s t u : State), checkCert s l₁ = some t → checkCert t l₂ = some u →
      checkCert s (l₁ ++ l₂) = some u := by
  induction l₁ with
  | nil =>
    intro l₂ s t u h1 h2
    rw [checkCert_nil] at h1
    have hst : s = t := Option.some.inj h1
    subst hst
    exact h2
  | cons c cs ih =>
    intro l₂ s t u h1 h2
    rw [checkCert_cons] at h1
    rw [List.cons_append, checkCert_cons]
    by_cases h : (admits s c.entry && stepRowsOk c) = true
    · rw [if_pos h] at h1
      rw [if_pos h]
      exact ih l₂ (update s c.entry) t u h1 h2
    · rw [if_neg h] at h1
      cases h1

/-- **What an accepted certificate means**: its rows replay under Alg. 1's rules to the final
budget `t`, and every step's Lemma 4, Lemma 6 and refund rows hold. -/
theorem checkCert_sound (cs : List CertStep) :
    ∀ (s t : State), checkCert s cs = some t →
      replay s (cs.map CertStep.entry) = some t ∧ ∀ c ∈ cs, stepRowsOk c = true := by
  induction cs with
  | nil =>
    intro s t h
    rw [checkCert_nil] at h
    refine ⟨h, ?_⟩
    intro c hc
    cases hc
  | cons c cs ih =>
    intro s t h
    rw [checkCert_cons] at h
    by_cases hc : (admits s c.entry && stepRowsOk c) = true
    · rw [if_pos hc] at h
      have ha : admits s c.entry = true := band_left hc
      have hr : stepRowsOk c = true := band_right hc
      obtain ⟨h1, h2⟩ := ih (update s c.entry) t h
      refine ⟨?_, ?_⟩
      · rw [List.map_cons, replay_cons, if_pos ha]
        exact h1
      · intro d hd
        cases hd with
        | head => exact hr
        | tail _ hmem => exact h2 d hmem
    · rw [if_neg hc] at h
      cases h

/-! ### What an accepted `mech` row certifies -/

/-- An accepted step passes its `mech` row. -/
theorem stepRowsOk_mech {c : CertStep} (h : stepRowsOk c = true) : stepMechOk c = true :=
  band_right (band_left h)

/-- Every step of a certificate the kernel accepted passes its `mech` row. -/
theorem checkCert_mech (cs : List CertStep) (s t : State) (h : checkCert s cs = some t) :
    ∀ c ∈ cs, stepMechOk c = true :=
  fun c hc => stepRowsOk_mech ((checkCert_sound cs s t h).2 c hc)

/-- `listEq` is equality. -/
theorem listEq_eq : ∀ (xs ys : List Nat), listEq xs ys = true → xs = ys
  | [], [], _ => rfl
  | x :: xs, y :: ys, h => by
    have h' : (decide (x = y) && listEq xs ys) = true := h
    rw [of_decide_eq_true (band_left h'), listEq_eq xs ys (band_right h')]
  | [], _ :: _, h => by cases h
  | _ :: _, [], h => by cases h

/-- With a `blocks` row, `costsAre` fixes the classes' costs and `δ`. -/
theorem costsAre_blocks {e : Entry} {bs expected : List Nat} {d : Nat}
    (h : costsAre e bs true expected d = true) : bs = expected ∧ e.delta = d := by
  have h' : (decide (e.delta = d) && listEq bs expected) = true := h
  exact ⟨listEq_eq bs expected (band_right h'), of_decide_eq_true (band_left h')⟩

/-- Without a `blocks` row (a round charged its sup), `costsAre` fixes `supEps` and `δ`. -/
theorem costsAre_sup {e : Entry} {bs expected : List Nat} {d : Nat}
    (h : costsAre e bs false expected d = true) : e.supEps = listMax expected ∧ e.delta = d := by
  have h' : (decide (e.delta = d) && decide (e.supEps = listMax expected)) = true := h
  exact ⟨of_decide_eq_true (band_right h'), of_decide_eq_true (band_left h')⟩

/-- A user's DP charge (Lemma 3) has exactly one class, costing its `supEps`. -/
theorem mechOk_dp {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindDp ps gs = true) : bs = [e.supEps] := by
  have h' : (arity ps gs 0 && listEq bs [e.supEps]) = true := h
  exact listEq_eq bs [e.supEps] (band_right h')

/-- An M_toy round lists the classes (values, ⊥) at costs `(ε, 0)` for its parameter `ε`,
with `δ = 0`. -/
theorem mechOk_toy {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindToy ps gs = true) :
    bs = toyBlocks (blockAt 0 ps) ∧ e.delta = 0 := by
  have h' : (arity ps gs 1 && costsAre e bs true (toyBlocks (blockAt 0 ps)) 0) = true := h
  exact costsAre_blocks (band_right h')

/-- An SVT round with a `blocks` row: `c ≥ 1`, `δ = 0`, and its classes `0 … c` cost
`ε1 + (c'/c)·ε2` (as `svtFrom` compares them). -/
theorem mechOk_svt {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindSvt ps gs = true) :
    0 < blockAt 0 ps ∧ e.delta = 0 ∧
      svtFrom (blockAt 0 ps) (blockAt 1 ps) (blockAt 2 ps) 0 bs = true := by
  have h' : (arity ps gs 3 && svtOk e bs true (blockAt 0 ps) (blockAt 1 ps) (blockAt 2 ps))
      = true := h
  have h2 : (decide (0 < blockAt 0 ps) && decide (e.delta = 0)
      && svtFrom (blockAt 0 ps) (blockAt 1 ps) (blockAt 2 ps) 0 bs) = true := band_right h'
  exact ⟨of_decide_eq_true (band_left (band_left h2)), of_decide_eq_true (band_right (band_left h2)),
    band_right h2⟩

/-- A Lemma 11 round (any COMP) with a `blocks` row: its classes cost `ε^{k_1}, …, ε^{k_n}` as the
row gives them, and its `δ` covers `Σ_i δ^{k_i}`. (`Odp.Mech.lemma11` gives the guarantee with
`δ = Σ_i δ^{k_i}` from the hypothesis that each prefix `M^{k_i}` is `(ε^{k_i}, δ^{k_i})`-DP;
`Odp.Certs.Lemma11.lemma11_le` with a larger `δ`.) -/
theorem mechOk_lemma11 {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindLemma11 ps gs = true) :
    bs = stopCosts gs ∧ stopDeltas gs ≤ e.delta := by
  have h' : (decide (listLen ps = 0) && lemma11Ok e bs true gs) = true := h
  have h2 : (decide (0 < groupsLen gs) && stopsAbove 0 gs && decide (stopDeltas gs ≤ e.delta)
      && listEq bs (stopCosts gs)) = true := band_right h'
  exact ⟨listEq_eq bs (stopCosts gs) (band_right h2),
    of_decide_eq_true (band_right (band_left h2))⟩

/-- Each class of an accepted SVT list costs `ε1 + (c'/c)·ε2` (times `c`), for `c' = k + j`. -/
theorem svtFrom_at (c e1 e2 : Nat) (bs : List Nat) :
    ∀ (k j : Nat), svtFrom c e1 e2 k bs = true → j < listLen bs →
      blockAt j bs * c = e1 * c + (k + j) * e2 := by
  induction bs with
  | nil => intro k j _ hj; exact absurd hj (Nat.not_lt_zero j)
  | cons b bs ih =>
    intro k j h hj
    have h' : (if decide (b * c = e1 * c + k * e2) then svtFrom c e1 e2 (k + 1) bs else false)
        = true := h
    by_cases hb : b * c = e1 * c + k * e2
    · rw [if_pos (decide_eq_true hb)] at h'
      rw [blockAt_cons]
      by_cases hj0 : j = 0
      · rw [if_pos (decide_eq_true hj0), hj0, Nat.add_zero]
        exact hb
      · rw [if_neg (fun h0 : decide (j = 0) = true => hj0 (of_decide_eq_true h0))]
        have hlen : listLen (b :: bs) = listLen bs + 1 := rfl
        have hj' : j - 1 < listLen bs := by omega
        have := ih (k + 1) (j - 1) h' hj'
        rw [this]
        have e3 : k + 1 + (j - 1) = k + j := by omega
        rw [e3]
    · rw [if_neg (fun h0 : decide (b * c = e1 * c + k * e2) = true => hb (of_decide_eq_true h0))]
        at h'
      cases h'

end Odp.LedgerCore
