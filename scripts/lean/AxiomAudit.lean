/-
Axiom audit of the Lean modules that `scripts/check_lean.sh` compiles (no Mathlib).

`#print axioms` is refused by this Lean build ("cannot use `#print axioms` in a `module`"), and
the imported core library is loaded without its proofs. So this file loads our compiled modules
itself with `importModules`, which by default reads every part of each `.olean` (proofs
included), and walks the constants that each declaration uses:

* every declaration of an `Odp` module is checked: it must not be a new `axiom`, and it must not
  use `sorryAx` (an unfinished proof), `Lean.ofReduceBool`/`Lean.ofReduceNat` (native evaluation)
  or `Lean.trustCompiler`. Since every `Odp` declaration is checked, no chain of `Odp`
  declarations can reach them either;
* for the main theorems, the walk goes through our declarations and the core library's
  definitions and reports the axioms reached (`propext`, `Classical.choice`, `Quot.sound` are the
  expected ones). A theorem of the core library (`Init`, `Std`, `Lean`) ends the walk: this build
  ships the core library without its proofs, so those theorems are trusted with the toolchain;
  their number is printed.

The code avoids library functions whose compiled code this build cannot run (it is interpreted
here), hence the hand-written list helpers.

For each main theorem it prints `AXIOMS <name>: <axioms>`; for every problem a line starting with
`AUDIT-FAIL`. The modules and theorems are listed below; `scripts/lean_check.py` checks that the
list of modules is complete and fails on any `AUDIT-FAIL` line or a missing `AXIOMS` line.
-/
import Lean

open Lean

namespace OdpAudit

/-- The theorems whose axioms are printed. -/
def mainTheorems : List Name :=
  [`Odp.Core.odp_composition, `Odp.Core.odp_composition_randomized,
   `Odp.Core.odp_composition_partition, `Odp.Core.odp_composition_alg1, `Odp.Core.lemma20,
   `Odp.Core.odp_of_dp, `Odp.Core.dp_of_odp_sup, `Odp.Core.odp_of_subsetDP,
   `Odp.Core.ODP_iff_ODPcost, `Odp.Core.ODPcost_iff_ODPsum, `Odp.Core.enforce_valid,
   `Odp.Core.accountant_composition, `Odp.Core.certificate_sound,
   `Odp.Core.checkCert_certificate_sound,
   `Odp.LedgerCore.replay_sound, `Odp.Certs.Example.run_ok]

/-- The axioms of the core library. -/
def knownAxioms : List Name :=
  [`propext, `Classical.choice, `Quot.sound, `sorryAx, `Lean.ofReduceBool, `Lean.ofReduceNat,
   `Lean.trustCompiler]

/-- Axioms that no declaration of ours may use. -/
def forbidden : List Name := [`sorryAx, `Lean.ofReduceBool, `Lean.ofReduceNat, `Lean.trustCompiler]

def nameStr : Name → String
  | .anonymous => ""
  | .str p s => (if p.isAnonymous then "" else nameStr p ++ ".") ++ s
  | .num p k => nameStr p ++ "." ++ Nat.repr k

def joinNames : List Name → String
  | [] => "(none)"
  | [a] => nameStr a
  | a :: l => nameStr a ++ ", " ++ joinNames l

def memName (n : Name) : List Name → Bool
  | [] => false
  | a :: l => a == n || memName n l

def appendL : List Name → List Name → List Name
  | [], l => l
  | a :: r, l => a :: appendL r l

def insertName (n : Name) (l : List Name) : List Name := if memName n l then l else n :: l

def concatL : List (List Name) → List Name
  | [] => []
  | l :: r => appendL l (concatL r)

/-- Whether `c` was declared in one of our modules (its module's name starts with `Odp`). -/
def isOurs (env : Environment) (c : Name) : Bool :=
  match env.getModuleIdxFor? c with
  | some idx =>
    match env.header.moduleNames[idx.toNat]? with
    | some m => m.getRoot == `Odp
    | none => false
  | none => false

/-- The constants a declaration mentions (type, value, constructors). -/
def usedBy (ci : ConstantInfo) : List Name :=
  match ci with
  | .defnInfo v => appendL v.type.getUsedConstants.toList v.value.getUsedConstants.toList
  | .thmInfo v => appendL v.type.getUsedConstants.toList v.value.getUsedConstants.toList
  | .opaqueInfo v => appendL v.type.getUsedConstants.toList v.value.getUsedConstants.toList
  | .inductInfo v => appendL v.type.getUsedConstants.toList v.ctors
  | .ctorInfo v => v.type.getUsedConstants.toList
  | .recInfo v => v.type.getUsedConstants.toList
  | .axiomInfo v => v.type.getUsedConstants.toList
  | .quotInfo v => v.type.getUsedConstants.toList

/-- Depth-first walk from a stack of constants through every declaration whose body is loaded
(ours, and the core library's definitions). Returns the axioms reached and the number of core
theorems reached whose proofs this build does not ship (they are trusted with the toolchain). -/
partial def walk (env : Environment) : List Name → NameSet → List Name → Nat → List Name × Nat
  | [], _, axs, n => (axs, n)
  | c :: rest, visited, axs, n =>
    if visited.contains c then walk env rest visited axs n
    else
      let visited := visited.insert c
      if memName c knownAxioms then walk env rest visited (insertName c axs) n
      else
        match env.find? c with
        | none => walk env rest visited axs n
        | some (.axiomInfo _) =>
          if isOurs env c then walk env rest visited (insertName c axs) n
          else walk env rest visited axs (n + 1)
        | some ci => walk env (appendL (usedBy ci) rest) visited axs n

/-- Problems of one declaration of ours: a new axiom, or a direct use of a forbidden axiom. -/
def problemsOf (env : Environment) (c : Name) : List String :=
  match env.find? c with
  | none => []
  | some (.axiomInfo _) => ["AUDIT-FAIL " ++ nameStr c ++ " is a new axiom"]
  | some ci => go (usedBy ci)
where
  go : List Name → List String
    | [] => []
    | d :: r =>
      if memName d forbidden then ("AUDIT-FAIL " ++ nameStr c ++ " uses " ++ nameStr d) :: go r
      else go r

/-- Every declaration of our modules. -/
def ourDecls (env : Environment) : List Name :=
  let rec go : List Name → List ModuleData → List Name
    | m :: ms, d :: ds =>
      if m.getRoot == `Odp then appendL d.constNames.toList (go ms ds) else go ms ds
    | _, _ => []
  go env.header.moduleNames.toList env.header.moduleData.toList

def appendS : List String → List String → List String
  | [], l => l
  | a :: r, l => a :: appendS r l

def allProblems (env : Environment) : List Name → List String
  | [] => []
  | c :: r => appendS (problemsOf env c) (allProblems env r)

def axiomLines (env : Environment) : List Name → List String
  | [] => []
  | t :: r =>
    (match env.find? t with
      | none => "AUDIT-FAIL main theorem " ++ nameStr t ++ " not found"
      | some _ =>
        let (axs, n) := walk env [t] {} [] 0
        "AXIOMS " ++ nameStr t ++ ": " ++ joinNames axs ++ " (and " ++ Nat.repr n
          ++ " core-library theorems)")
    :: axiomLines env r

def lengthN : List Name → Nat
  | [] => 0
  | _ :: r => lengthN r + 1

def okLine : List String → List String
  | [] => ["AUDIT-OK"]
  | _ :: _ => []

def report (env : Environment) : List String :=
  let decls := ourDecls env
  let problems := allProblems env decls
  let summary := "AUDIT checked " ++ Nat.repr (lengthN decls) ++ " declarations"
  appendS problems (summary :: appendS (axiomLines env mainTheorems) (okLine problems))

def printLines : List String → IO Unit
  | [] => pure ()
  | l :: r => do IO.println l; printLines r

end OdpAudit

run_cmd do
  let env ← importModules #[{ module := `Odp.LedgerCore }, { module := `Odp.Core.Field },
    { module := `Odp.Core.Sum }, { module := `Odp.Core.Prob }, { module := `Odp.Core.Defs },
    { module := `Odp.Core.Lemmas }, { module := `Odp.Core.Lemma20 },
    { module := `Odp.Core.Composition }, { module := `Odp.Core.Ledger },
    { module := `Odp.Certs.Example }] {}
  OdpAudit.printLines (OdpAudit.report env)
