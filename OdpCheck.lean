/-
Copyright (c) 2025 The odp authors. Released under Apache 2.0.

# `odpcheck LEDGER`

Replays an exported ledger (the certificate text of `python/odp/certs/format.py`) with the rules of `Odp.LedgerCore`:

    # comment                      (blank lines and lines starting with `#` are ignored)
    D <n>                          (all amounts below are integers in units of 1/n, n > 0)
    budget <eps_t·D> <delta_t·D>
    step <supEps> <charged> <delta>            (one row per round of Alg. 1)
    blocks <E_1> … <E_m> ; realized <k>        (optional, after a step: Lemma 4 row)
    deltas <Δ_1> … <Δ_m>                       (optional, after a step: Lemma 6 row)
    mech <name> <p_1> … [; <n ε δ> …]          (optional, after a step: the mechanism and its
                                                parameters, checked by `mechOk`; none: declared)

Output and exit code:
* `OK eps=<n> delta=<n>` (remaining budget, from `replay`), exit 0;
* `FAIL at row i: <reason>` (i = 1-based index of the `step` row), exit 1;
* usage, unreadable file or malformed ledger: message on stderr, exit 2.

`odpcheck --stream` serves many ledgers through one process (the protocol the Python bridge
`odp.certs.lean` drives with pexpect): it reads ledger lines from standard input; a line `END`
ends one ledger, and the answer is one line — `OK eps=<n> delta=<n>`, `FAIL at row i: <reason>`
or `ERROR <message>` (malformed ledger) — flushed immediately.  End of input exits with 0.

For each step the checks run in this order: its `blocks` row (`blocksOk`), its `deltas` row
(`deltasOk`), its `mech` row (`mechOk`: the round's classes, costs and δ are the named
mechanism's for its parameters), `refundJustified` (a charge below the declared sup needs a
`blocks` row), then `admits` against the remaining budget; the first failing step is reported.
The mechanism names and their parameter shapes are those of `python/odp/certs/mechanisms.py`
(`mech lemma11 ; <k_i ε^{k_i} δ^{k_i}> …` has no parameter before the `;`).
The `OK` verdict is printed only when `replay` (whose soundness is `replay_sound`) accepts.

This file imports no Mathlib and uses only the long-standing core API `String.toList`,
`IO.FS.readFile`, `IO.println`, `IO.eprintln`, and for `--stream` `IO.getStdin`,
`IO.getStdout`, `IO.FS.Stream.getLine` / `putStrLn` / `flush`; all parsing is done on
`List Char`.
-/
import Odp.LedgerCore

set_option autoImplicit false

open Odp.LedgerCore

namespace OdpCheck

/-! ### Lexing on `List Char` -/

def isBlank (c : Char) : Bool := c == ' ' || c == '\t' || c == '\r'

/-- Split a line into tokens at blanks; `;` is always a token of its own. -/
def tokensAux : List Char → List Char → List (List Char) → List (List Char)
  | [], cur, acc => (if cur.isEmpty then acc else cur.reverse :: acc).reverse
  | c :: cs, cur, acc =>
    if isBlank c then
      tokensAux cs [] (if cur.isEmpty then acc else cur.reverse :: acc)
    else if c == ';' then
      tokensAux cs [] ([';'] :: (if cur.isEmpty then acc else cur.reverse :: acc))
    else
      tokensAux cs (c :: cur) acc

def tokens (line : List Char) : List (List Char) := tokensAux line [] []

/-- Split a text into lines at `\n`. -/
def linesAux : List Char → List Char → List (List Char) → List (List Char)
  | [], cur, acc => (cur.reverse :: acc).reverse
  | c :: cs, cur, acc =>
    if c == '\n' then linesAux cs [] (cur.reverse :: acc) else linesAux cs (c :: cur) acc

def digitsAux : List Char → Nat → Option Nat
  | [], acc => some acc
  | c :: cs, acc => if c.isDigit then digitsAux cs (acc * 10 + (c.toNat - 48)) else none

/-- A decimal natural number (digits only). -/
def parseNat (cs : List Char) : Option Nat :=
  if cs.isEmpty then none else digitsAux cs 0

def parseNats : List (List Char) → Option (List Nat)
  | [] => some []
  | t :: ts =>
    match parseNat t, parseNats ts with
    | some n, some ns => some (n :: ns)
    | _, _ => none

/-- Split tokens at the first `;`. -/
def splitSemi : List (List Char) → List (List Char) → Option (List (List Char) × List (List Char))
  | [], _ => none
  | t :: ts, acc => if t == [';'] then some (acc.reverse, ts) else splitSemi ts (t :: acc)

/-! ### Rows -/

inductive Row where
  | header (d : Nat)
  | budget (eps delta : Nat)
  | step (e : Entry)
  | blocks (bs : List Nat) (k : Nat)
  | deltas (ds : List Nat)
  | mech (m : MechRow)

inductive Parsed where
  | skip
  | row (r : Row)
  | bad (msg : String)

def parseHeader (rest : List (List Char)) : Parsed :=
  match parseNats rest with
  | some [d] => .row (.header d)
  | _ => .bad "expected 'D <n>'"

def parseBudget (rest : List (List Char)) : Parsed :=
  match parseNats rest with
  | some [e, d] => .row (.budget e d)
  | _ => .bad "expected 'budget <eps> <delta>'"

def parseStep (rest : List (List Char)) : Parsed :=
  match parseNats rest with
  | some [a, b, c] => .row (.step ⟨a, b, c⟩)
  | _ => .bad "expected 'step <supEps> <charged> <delta>'"

def parseBlockTail (costs : List (List Char)) (k : List Char) : Parsed :=
  match parseNats costs, parseNat k with
  | some (b :: bs), some kk => .row (.blocks (b :: bs) kk)
  | _, _ => .bad "expected 'blocks <E_1> ... <E_m> ; realized <k>' with m >= 1"

def parseBlocks (rest : List (List Char)) : Parsed :=
  match splitSemi rest [] with
  | some (costs, [kw, k]) =>
    if kw == "realized".toList then parseBlockTail costs k
    else .bad "expected '; realized <k>' after the block costs"
  | _ => .bad "expected 'blocks <E_1> ... <E_m> ; realized <k>'"

def parseDeltas (rest : List (List Char)) : Parsed :=
  match parseNats rest with
  | some ds => .row (.deltas ds)
  | none => .bad "expected 'deltas <D_1> ... <D_m>'"

/-- A `mech` row's name: its kind, its number of numeric parameters (`none`: one or more
stopping points) and whether step groups follow a `;`. -/
def mechKind (name : List Char) : Option (Nat × Option Nat × Bool) :=
  if name == "declared".toList then some (kindDeclared, some 0, false)
  else if name == "dp".toList then some (kindDp, some 0, false)
  else if name == "laplace".toList then some (kindLaplace, some 1, false)
  else if name == "gaussian".toList then some (kindGaussian, some 2, false)
  else if name == "rr".toList then some (kindRr, some 1, false)
  else if name == "median".toList then some (kindMedian, some 1, false)
  else if name == "erm".toList then some (kindErm, some 1, false)
  else if name == "toy".toList then some (kindToy, some 1, false)
  else if name == "svt".toList then some (kindSvt, some 3, false)
  else if name == "ptr".toList then some (kindPtr, some 2, false)
  else if name == "iqr".toList then some (kindIqr, some 2, false)
  else if name == "iter".toList then some (kindIter, none, true)
  else if name == "iter_costs".toList then some (kindIterCosts, none, true)
  else if name == "test_release".toList then some (kindTestRelease, some 5, false)
  else if name == "lemma11".toList then some (kindLemma11, some 0, true)
  else none

/-- Step groups `count ε δ`, in threes. -/
def groupsOf : List Nat → Option (List StepGroup)
  | [] => some []
  | n :: e :: d :: rest =>
    match groupsOf rest with
    | some gs => some (⟨n, e, d⟩ :: gs)
    | none => none
  | _ => none

/-- The numeric parameters have the kind's count (`none`: at least one). -/
def arityOk (arity : Option Nat) (ps : List Nat) : Bool :=
  match arity with
  | some n => ps.length == n
  | none => !ps.isEmpty

def parseMechParams (kind : Nat) (arity : Option Nat) (grouped : Bool)
    (rest : List (List Char)) : Parsed :=
  if grouped then
    match splitSemi rest [] with
    | some (ps, gs) =>
      match parseNats ps, parseNats gs with
      | some ns, some gns =>
        match groupsOf gns with
        | some (g :: more) =>
          if arityOk arity ns then .row (.mech ⟨kind, ns, g :: more⟩)
          else .bad "wrong number of mechanism parameters"
        | _ => .bad "expected step groups 'count eps delta' after ';'"
      | _, _ => .bad "expected natural numbers in the 'mech' row"
    | none => .bad "expected 'mech <name> <k_1> ... ; <count eps delta> ...'"
  else
    match parseNats rest with
    | some ns =>
      if arityOk arity ns then .row (.mech ⟨kind, ns, []⟩)
      else .bad "wrong number of mechanism parameters"
    | none => .bad "expected 'mech <name> <p_1> ...' with natural numbers"

def parseMech (rest : List (List Char)) : Parsed :=
  match rest with
  | name :: ps =>
    match mechKind name with
    | some (kind, arity, grouped) => parseMechParams kind arity grouped ps
    | none => .bad "unknown mechanism in the 'mech' row"
  | [] => .bad "expected 'mech <name> ...'"

def parseLine (toks : List (List Char)) : Parsed :=
  match toks with
  | [] => .skip
  | t :: rest =>
    if t.head? == some '#' then .skip
    else if t == "D".toList then parseHeader rest
    else if t == "budget".toList then parseBudget rest
    else if t == "step".toList then parseStep rest
    else if t == "blocks".toList then parseBlocks rest
    else if t == "deltas".toList then parseDeltas rest
    else if t == "mech".toList then parseMech rest
    else .bad "unknown row (expected D, budget, step, blocks, deltas or mech)"

inductive LinesResult where
  | ok (rows : List (Nat × Row))
  | bad (msg : String)

/-- Parse numbered lines (the first line has number `n`). -/
def parseLines : Nat → List (List Char) → List (Nat × Row) → LinesResult
  | _, [], acc => .ok acc.reverse
  | n, l :: ls, acc =>
    match parseLine (tokens l) with
    | .skip => parseLines (n + 1) ls acc
    | .row r => parseLines (n + 1) ls ((n, r) :: acc)
    | .bad msg => .bad s!"line {n}: {msg}"

/-! ### Assembling steps with their annotation rows -/

structure StepRow where
  entry : Entry
  blocks : Option (List Nat × Nat)
  deltas : Option (List Nat)
  mech : Option MechRow

inductive Assembled where
  | ok (s0 : State) (steps : List StepRow)
  | bad (msg : String)

/-- Attach `blocks` / `deltas` rows to the preceding `step` (steps are kept in reverse order). -/
def attach (s0 : State) : List (Nat × Row) → List StepRow → Assembled
  | [], acc => .ok s0 acc.reverse
  | (n, r) :: rest, acc =>
    match r, acc with
    | .step e, _ => attach s0 rest (⟨e, none, none, none⟩ :: acc)
    | .blocks bs k, st :: more =>
      if st.blocks.isSome then .bad s!"line {n}: second 'blocks' row for one step"
      else attach s0 rest ({ st with blocks := some (bs, k) } :: more)
    | .deltas ds, st :: more =>
      if st.deltas.isSome then .bad s!"line {n}: second 'deltas' row for one step"
      else attach s0 rest ({ st with deltas := some ds } :: more)
    | .mech m, st :: more =>
      if st.mech.isSome then .bad s!"line {n}: second 'mech' row for one step"
      else attach s0 rest ({ st with mech := some m } :: more)
    | .blocks _ _, [] => .bad s!"line {n}: 'blocks' row before any 'step'"
    | .deltas _, [] => .bad s!"line {n}: 'deltas' row before any 'step'"
    | .mech _, [] => .bad s!"line {n}: 'mech' row before any 'step'"
    | .header _, _ => .bad s!"line {n}: misplaced 'D' row"
    | .budget _ _, _ => .bad s!"line {n}: misplaced 'budget' row"

def assembleWith (d eps delta : Nat) (rest : List (Nat × Row)) : Assembled :=
  if d == 0 then .bad "D must be positive" else attach ⟨eps, delta⟩ rest []

/-- The ledger must start with `D <n>` and `budget <eps> <delta>`. -/
def assemble (rows : List (Nat × Row)) : Assembled :=
  match rows with
  | (_, .header d) :: (_, .budget e dl) :: rest => assembleWith d e dl rest
  | _ => .bad "the ledger must start with 'D <n>' and then 'budget <eps> <delta>'"

def parseLedger (txt : String) : Assembled :=
  match parseLines 1 (linesAux txt.toList [] []) [] with
  | .bad msg => .bad msg
  | .ok rows => assemble rows

/-! ### Checking -/

def blocksFailure (st : StepRow) : Option String :=
  match st.blocks with
  | none => none
  | some (bs, k) =>
    if blocksOk st.entry bs k then none
    else if !decide (st.entry.supEps = listMax bs) then some "blocks: supEps != max(blocks)"
    else if !decide (k < listLen bs) then some "blocks: realized index out of range"
    else some "blocks: charged != blocks[realized]"

def deltasFailure (st : StepRow) : Option String :=
  match st.deltas with
  | none => none
  | some ds => if deltasOk st.entry ds then none else some "deltas: sum(deltas) > delta"

def mechFailure (st : StepRow) : Option String :=
  if stepMechOk ⟨st.entry, st.blocks, st.deltas, st.mech.getD MechRow.declared⟩ then none
  else some "mech: the classes, costs or delta are not those of the named mechanism"

def refundFailure (st : StepRow) : Option String :=
  if refundJustified st.entry st.blocks.isSome then none
  else some "refund: charged < supEps without a blocks row"

def admitsReason (s : State) (e : Entry) : String :=
  if !decide (e.charged ≤ e.supEps) then "admits: charged > supEps"
  else if !decide (e.supEps ≤ s.eps) then "admits: supEps > eps"
  else "admits: delta > delta"

/-- First failing step (1-based index `i` for the first element) and its reason. -/
def firstFailure : State → Nat → List StepRow → Option (Nat × String)
  | _, _, [] => none
  | s, i, st :: rest =>
    match blocksFailure st, deltasFailure st, mechFailure st, refundFailure st with
    | some msg, _, _, _ => some (i, msg)
    | none, some msg, _, _ => some (i, msg)
    | none, none, some msg, _ => some (i, msg)
    | none, none, none, some msg => some (i, msg)
    | none, none, none, none =>
      if admits s st.entry then firstFailure (update s st.entry) (i + 1) rest
      else some (i, admitsReason s st.entry)

/-- The one-line verdict on a ledger text (used by `--stream`). -/
def answer (txt : String) : String :=
  match parseLedger txt with
  | .bad msg => s!"ERROR {msg}"
  | .ok s0 steps =>
    match firstFailure s0 1 steps with
    | some (i, msg) => s!"FAIL at row {i}: {msg}"
    | none =>
      match replay s0 (steps.map StepRow.entry) with
      | some t => s!"OK eps={t.eps} delta={t.delta}"
      | none => "FAIL at row 0: replay rejected the ledger"

/-- Is this input line the `END` marker (ignoring the line break)? -/
def isEndLine (line : String) : Bool :=
  line.toList.filter (fun c => c != '\n' && c != '\r') == "END".toList

/-- `odpcheck --stream`: answer each ledger terminated by an `END` line; stop at end of input
(`getLine` returns the empty string only at end of input). -/
partial def streamLoop (stdin stdout : IO.FS.Stream) (buf : String) : IO Unit := do
  let line ← stdin.getLine
  if line == "" then
    return ()
  else if isEndLine line then
    stdout.putStrLn (answer buf)
    stdout.flush
    streamLoop stdin stdout ""
  else
    streamLoop stdin stdout (buf ++ line)

def readInput (path : String) : IO (Option String) := do
  try
    let txt ← IO.FS.readFile (System.FilePath.mk path)
    return some txt
  catch _ =>
    return none

end OdpCheck

open OdpCheck in
def main (args : List String) : IO UInt32 := do
  match args with
  | ["--stream"] =>
    let stdin ← IO.getStdin
    let stdout ← IO.getStdout
    streamLoop stdin stdout ""
    return 0
  | [path] =>
    match ← readInput path with
    | none =>
      IO.eprintln s!"error: cannot read {path}"
      return 2
    | some txt =>
      match parseLedger txt with
      | .bad msg =>
        IO.eprintln s!"parse error: {msg}"
        return 2
      | .ok s0 steps =>
        match firstFailure s0 1 steps with
        | some (i, msg) =>
          IO.println s!"FAIL at row {i}: {msg}"
          return 1
        | none =>
          match replay s0 (steps.map StepRow.entry) with
          | some t =>
            IO.println s!"OK eps={t.eps} delta={t.delta}"
            return 0
          | none =>
            IO.println "FAIL at row 0: replay rejected the ledger"
            return 1
  | _ =>
    IO.eprintln "usage: odpcheck LEDGER | odpcheck --stream"
    return 2
