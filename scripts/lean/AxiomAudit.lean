/-
Axiom audit and kernel replay of the Lean modules that `scripts/check_lean.sh` compiles (no
Mathlib). This is the auditor's tool, not theory: it lives in `scripts/`, uses `run_cmd` and
`partial def`, and is never part of the `Odp` library.

`scripts/lean_check.py` writes the lists below (`auditModules`: every module it compiled,
derived from the files; `mainTheorems`: the pinned theorems of `scripts/lean/pinned.txt`;
`statementModules`: the statement files' modules) into a copy of this file and compiles the
copy. As committed, the lists are empty and the audit checks nothing; `lean_check.py` refuses a run whose output does not name every module it compiled.

`#print axioms` is refused by this Lean build ("cannot use `#print axioms` in a `module`"), and
the core library is shipped without its proofs (only the public `.olean` files). So the audit
loads our compiled modules itself with `importModules`, which reads every part of each `.olean`
(proofs included, `OLeanLevel.private`), and then:

1. **Safety.** Every declaration of an `Odp` module must be safe and transparent: an `unsafe`
   or `partial` constant fails (`ConstantInfo.isUnsafe`, `isPartial`), and so does an `opaque`
   one (what a `partial def` becomes for the kernel). The replay below skips unsafe and partial
   constants, so this check comes first.
2. **Axioms.** No declaration of ours may be an `axiom`, or mention an axiom other than
   `propext`, `Classical.choice`, `Quot.sound` (so not `sorryAx`, `Lean.ofReduceBool`,
   `Lean.ofReduceNat`, `Lean.trustCompiler`). Then one walk from all our declarations through
   ours and the core library's definitions collects every axiom they reach; it must be a subset
   of those three. A core-library theorem ends the walk: its proof is not shipped, so it is
   trusted with the toolchain (the count is printed).
3. **Names.** Nothing outside the three statement modules (`Odp.Core.Spec`, `Odp.Mech.Spec`,
   `Odp.Certs.Spec`; not any module whose name ends in `Spec`) is declared in the namespaces a
   statement file looks names up in first (`OdpSpec`, `Odp.Core.Spec`, `Odp.Mech.Spec`,
   `Odp.Certs.Spec`), and nothing in the root namespace: there it could be picked up instead
   of a name a statement file uses to state the results.
4. **Kernel replay** (lean4checker's method; see "Kernel replay" below for why this file does
   not call `Lean.Environment.replay` itself): every constant of our modules is sent to the
   kernel again, in dependency order, into a fresh environment that holds only what our modules
   import from outside `Odp` (the core library). This re-typechecks every definition and proof
   from the `.olean` data, so a declaration that reached the `.olean` without the kernel's check
   (`set_option debug.skipKernelTC`, a metaprogram calling `addDecl` without checking, a
   tampered `.olean`) fails here.
5. For each main theorem it prints `AXIOMS <name>: <axioms>`; `lean_check.py` compares them with
   the sets pinned in `scripts/lean/pinned.txt`.

Every problem is a line starting with `AUDIT-FAIL`; `AUDIT-OK` ends a clean run.

The code avoids library functions whose compiled code this build cannot run (this file is
interpreted), hence the hand-written list helpers.
-/
import Lean

open Lean

namespace OdpAudit

/-- The modules to audit (written by `scripts/lean_check.py`). -/
def auditModules : List Name := [] -- @odp-audit-modules

/-- The theorems whose axioms are printed (written by `scripts/lean_check.py`). -/
def mainTheorems : List Name := [] -- @odp-audit-theorems

/-- The axioms of the core library. A name not listed here whose constant is an `axiomInfo`
in a core-library module is a theorem shipped without its proof. -/
def knownAxioms : List Name :=
  [`propext, `Classical.choice, `Quot.sound, `sorryAx, `Lean.ofReduceBool, `Lean.ofReduceNat,
   `Lean.trustCompiler]

/-- The only axioms our declarations may depend on. -/
def allowedAxioms : List Name := [`propext, `Classical.choice, `Quot.sound]

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

def appendL {α : Type} : List α → List α → List α
  | [], l => l
  | a :: r, l => a :: appendL r l

def insertName (n : Name) (l : List Name) : List Name := if memName n l then l else n :: l

def lengthL {α : Type} : List α → Nat
  | [] => 0
  | _ :: r => lengthL r + 1

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

/-- Whether `c` is an axiom: one of ours declared with `axiom`, or a core-library axiom. -/
def isAxiom (env : Environment) (c : Name) : Bool :=
  memName c knownAxioms ||
    (match env.find? c with
      | some (.axiomInfo _) => isOurs env c
      | _ => false)

/-- Depth-first walk from a stack of constants through every declaration whose body is loaded
(ours, and the core library's definitions). Returns the axioms reached and the number of core
theorems reached whose proofs this build does not ship (they are trusted with the toolchain). -/
partial def walk (env : Environment) : List Name → NameSet → List Name → Nat → List Name × Nat
  | [], _, axs, n => (axs, n)
  | c :: rest, visited, axs, n =>
    if visited.contains c then walk env rest visited axs n
    else
      let visited := visited.insert c
      if isAxiom env c then walk env rest visited (insertName c axs) n
      else
        match env.find? c with
        | none => walk env rest visited axs n
        | some (.axiomInfo _) => walk env rest visited axs (n + 1)
        | some ci => walk env (appendL (usedBy ci) rest) visited axs n

/-- `f._unsafe_rec`, marked partial, is what the compiler generates to run a recursive
definition `f` that the kernel knows by its (structural or well-founded) definition: it is
exempt when `f` is a safe definition of ours. (A `partial def f` makes the same helper, but `f`
is then an `opaque` constant, which fails on its own.) It is not replayed: a kernel declaration
that used it would fail the replay as using an unknown constant. -/
def compilerAux (env : Environment) (c : Name) : Bool :=
  match c with
  | .str f "_unsafe_rec" =>
    isOurs env f &&
      (match env.find? f with
        | some (.defnInfo fv) => fv.safety == .safe
        | _ => false)
  | _ => false

def moduleOf (env : Environment) (c : Name) : Name :=
  match env.getModuleIdxFor? c with
  | some idx =>
    match env.header.moduleNames[idx.toNat]? with
    | some m => m
    | none => .anonymous
  | none => .anonymous

/-- Whether `p` is `c` or one of its namespace prefixes (written out: this interpreted file
keeps to structural recursion). -/
def hasPrefix (p : Name) : Name → Bool
  | .anonymous => p == .anonymous
  | c@(.str q _) => c == p || hasPrefix p q
  | c@(.num q _) => c == p || hasPrefix p q

/-- The statement files' modules, exactly (not any module whose name ends in `Spec`): written by
`scripts/lean_check.py` from its `STATEMENT_FILES`. -/
def statementModules : List Name := [] -- @odp-statement-modules

/-- The namespaces a statement file looks names up in first (`OdpSpec` for `Odp/Core/Spec.lean`,
and each statement file's own namespace): a declaration of another module there would be found
before the one the statement means (Lean resolves `x` as `N.x` for every prefix `N` of the
current namespace before the opened namespaces and the root). -/
def reservedNamespaces : List Name := `OdpSpec :: statementModules

def anyPrefix (c : Name) : List Name → Bool
  | [] => false
  | p :: r => hasPrefix p c || anyPrefix c r

/-- Names that could change what a statement file reads as: a declaration of another module in
a namespace reserved for the statement files, or one in the root namespace (found, like the
core's, from every namespace). -/
def nameProblems (env : Environment) (c : Name) : List String :=
  let m := moduleOf env c
  if anyPrefix c reservedNamespaces && !memName m statementModules then
    ["AUDIT-FAIL " ++ nameStr c ++ " is declared in " ++ nameStr m ++
      ": the namespaces " ++ joinNames reservedNamespaces ++ " are reserved for the " ++
      "statement modules " ++ joinNames statementModules]
  else
    match c with
    | .str .anonymous _ =>
      ["AUDIT-FAIL " ++ nameStr c ++ " (in " ++ nameStr m ++ ") is declared in the root " ++
        "namespace, where it could shadow a name the statement files use"]
    | _ => []

/-- Problems of one declaration of ours: unsafe, partial, a new axiom, or a direct use of an
axiom outside the allowed three. -/
def problemsOf (env : Environment) (c : Name) : List String :=
  match env.find? c with
  | none => ["AUDIT-FAIL " ++ nameStr c ++ " is listed in its module but not loaded"]
  | some ci =>
    let safety :=
      if ci.isUnsafe then ["AUDIT-FAIL " ++ nameStr c ++ " is unsafe (an `unsafe` declaration)"]
      else if ci.isPartial && !compilerAux env c then
        ["AUDIT-FAIL " ++ nameStr c ++ " is partial (a `partial def`, opaque to the kernel)"]
      else
        match ci with
        | .opaqueInfo _ =>
          ["AUDIT-FAIL " ++ nameStr c ++ " is opaque (a `partial def` or `opaque`: the kernel " ++
            "cannot unfold it)"]
        | _ => []
    let safety := appendL (nameProblems env c) safety
    match ci with
    | .axiomInfo _ => appendL safety ["AUDIT-FAIL " ++ nameStr c ++ " is a new axiom"]
    | _ => appendL safety (go (usedBy ci))
where
  go : List Name → List String
    | [] => []
    | d :: r =>
      if isAxiom env d && !memName d allowedAxioms then
        ("AUDIT-FAIL " ++ nameStr c ++ " uses the axiom " ++ nameStr d) :: go r
      else go r

/-- Every declaration of our modules, with the modules' names. -/
def ourDecls (env : Environment) : List Name :=
  let rec go : List Name → List ModuleData → List Name
    | m :: ms, d :: ds =>
      if m.getRoot == `Odp then appendL d.constNames.toList (go ms ds) else go ms ds
    | _, _ => []
  go env.header.moduleNames.toList env.header.moduleData.toList

def filterOdp : List Name → List Name
  | [] => []
  | m :: r => if m.getRoot == `Odp then m :: filterOdp r else filterOdp r

def ourModules (env : Environment) : List Name := filterOdp env.header.moduleNames.toList

def allProblems (env : Environment) : List Name → List String
  | [] => []
  | c :: r => appendL (problemsOf env c) (allProblems env r)

/-- Our declarations whose walk reaches the axiom `a` (only computed when the global walk found
a forbidden axiom, to name the culprits). -/
def reaching (env : Environment) (a : Name) : List Name → List Name
  | [] => []
  | c :: r =>
    let rest := reaching env a r
    if memName a (walk env [c] {} [] 0).1 then c :: rest else rest

def forbiddenReached (env : Environment) (decls : List Name) : List Name → List String
  | [] => []
  | a :: r =>
    let more := forbiddenReached env decls r
    if memName a allowedAxioms then more
    else
      ("AUDIT-FAIL the axiom " ++ nameStr a ++ " is reached from " ++
        joinNames (reaching env a decls)) :: more

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

def isEmptyL {α : Type} : List α → Bool
  | [] => true
  | _ :: _ => false

/-- The static part of the audit (safety, axioms, pinned theorems): the lines to print, and
whether no problem was found. -/
def report (env : Environment) : List String × Bool :=
  let decls := ourDecls env
  let problems := allProblems env decls
  let (reached, trusted) := walk env decls {} [] 0
  let global := forbiddenReached env decls reached
  let summary := "AUDIT checked " ++ Nat.repr (lengthL decls) ++ " declarations of "
    ++ Nat.repr (lengthL (ourModules env)) ++ " modules; axioms reached: " ++ joinNames reached
    ++ " (and " ++ Nat.repr trusted ++ " core-library theorems)"
  let mains := axiomLines env mainTheorems
  (appendL problems (appendL global (summary :: mains)),
    isEmptyL problems && isEmptyL global && missingNone mains)
where
  missingNone : List String → Bool
    | [] => true
    | l :: r => !(l.startsWith "AUDIT-FAIL") && missingNone r

/-- The modules our modules import from outside `Odp` (the core library), for the replay. -/
def outsideImports (env : Environment) : List Name :=
  go env.header.moduleNames.toList env.header.moduleData.toList [`Init]
where
  addAll : List Import → List Name → List Name
    | [], acc => acc
    | i :: r, acc =>
      if i.module.getRoot == `Odp || memName i.module acc then addAll r acc
      else addAll r (i.module :: acc)
  go : List Name → List ModuleData → List Name → List Name
    | m :: ms, d :: ds, acc =>
      if m.getRoot == `Odp then go ms ds (addAll d.imports.toList acc) else go ms ds acc
    | _, _, acc => acc

/-! ### Kernel replay

`Lean.Environment.replay` (Lean/Replay.lean) cannot be called from this interpreted file: its
argument, a `Std.HashMap`, cannot be built here (the hash map's insertion is inlined into this
file's code and needs private library code that the interpreter cannot reach). The functions below
do what it does, with `NameSet`s and lookups in the loaded environment: each constant of ours is
sent to the kernel (`Kernel.Environment.addDecl`, native code) after the constants it uses;
an inductive type is sent with its constructors, and the constructors and recursors that the
kernel generates must equal the ones in our `.olean` files. Unsafe and partial constants are not
sent (`problemsOf` fails them); a safe constant that uses one is then rejected by the kernel as
using an unknown constant. -/

structure ReplayState where
  kenv : Kernel.Environment
  /-- the safe constants of ours (to send) -/
  ours : NameSet
  /-- those already taken up (`NameSet.erase` cannot run here) -/
  done : NameSet
  /-- constructors and recursors to compare at the end -/
  generated : List Name
  sent : Nat

abbrev ReplayM := StateRefT ReplayState (ExceptT String IO)

def kernelAdd (c : Name) (d : Declaration) : ReplayM Unit := do
  let s ← get
  match s.kenv.addDecl {} d with
  | .ok kenv => set { s with kenv := kenv, sent := s.sent + 1 }
  | .error ex =>
    let msg ← (ex.toMessageData {}).toString
    throw ("the kernel rejects " ++ nameStr c ++ ": " ++ msg)

def takeTodo (c : Name) : ReplayM Bool := do
  let s ← get
  if s.ours.contains c && !s.done.contains c then
    set { s with done := s.done.insert c }
    return true
  return false

def findOurs (env : Environment) (c : Name) : ReplayM ConstantInfo :=
  match env.find? c with
  | some ci => pure ci
  | none => throw ("constant " ++ nameStr c ++ " is listed in its module but not loaded")

mutual
partial def replayConst (env : Environment) (c : Name) : ReplayM Unit := do
  if ← takeTodo c then
    let ci ← findOurs env c
    replayAll env (usedBy ci)
    match ci with
    | .defnInfo v => kernelAdd c (.defnDecl v)
    | .thmInfo v => kernelAdd c (.thmDecl v)
    | .opaqueInfo v => kernelAdd c (.opaqueDecl v)
    | .axiomInfo v => kernelAdd c (.axiomDecl v)
    | .quotInfo _ => kernelAdd c .quotDecl
    | .ctorInfo v => do
      modify fun s => { s with generated := c :: s.generated }
      replayConst env v.induct
    | .recInfo v => do
      modify fun s => { s with generated := c :: s.generated }
      replayAll env v.all
    | .inductInfo v => replayInductive env c v

partial def replayAll (env : Environment) : List Name → ReplayM Unit
  | [] => pure ()
  | c :: r => do replayConst env c; replayAll env r

partial def replayInductive (env : Environment) (c : Name) (v : InductiveVal) : ReplayM Unit := do
  -- the whole mutual block at once, after everything its constructors use
  let _ ← takeTodoAll v.all
  let types ← typesOf v.all
  modify fun s => { s with generated := appendL (ctorsAndRecs types) s.generated }
  let _ ← takeTodoAll (ctorsAndRecs types)
  replayAll env (ctorUses types)
  kernelAdd c (.inductDecl v.levelParams v.numParams (toTypes types) v.isUnsafe)
where
  takeTodoAll : List Name → ReplayM Unit
    | [] => pure ()
    | n :: r => do let _ ← takeTodo n; takeTodoAll r
  ctorInfos : List Name → ReplayM (List ConstructorVal)
    | [] => pure []
    | n :: r => do
      match ← findOurs env n with
      | .ctorInfo cv => return cv :: (← ctorInfos r)
      | _ => throw (nameStr n ++ " should be a constructor")
  typesOf : List Name → ReplayM (List (InductiveVal × List ConstructorVal))
    | [] => pure []
    | n :: r => do
      match ← findOurs env n with
      | .inductInfo iv => return (iv, ← ctorInfos iv.ctors) :: (← typesOf r)
      | _ => throw (nameStr n ++ " should be an inductive type")
  recName (iv : InductiveVal) : Name := iv.name ++ `rec
  ctorsAndRecs : List (InductiveVal × List ConstructorVal) → List Name
    | [] => []
    | (iv, _) :: r => recName iv :: appendL iv.ctors (ctorsAndRecs r)
  ctorUses : List (InductiveVal × List ConstructorVal) → List Name
    | [] => []
    | (_, cvs) :: r => appendL (typeUses cvs) (ctorUses r)
  typeUses : List ConstructorVal → List Name
    | [] => []
    | cv :: r => appendL cv.type.getUsedConstants.toList (typeUses r)
  toCtors : List ConstructorVal → List Constructor
    | [] => []
    | cv :: r => { name := cv.name, type := cv.type } :: toCtors r
  toTypes : List (InductiveVal × List ConstructorVal) → List InductiveType
    | [] => []
    | (iv, cvs) :: r => { name := iv.name, type := iv.type, ctors := toCtors cvs } :: toTypes r
end

/-- The constructors and recursors the kernel generated must be the ones in our `.olean`s. -/
def checkGenerated (env : Environment) (kenv : Kernel.Environment) : List Name → List String
  | [] => []
  | n :: r =>
    let rest := checkGenerated env kenv r
    match env.find? n, kenv.find? n with
    | some (.ctorInfo a), some (.ctorInfo b) =>
      if a == b then rest else ("AUDIT-FAIL constructor " ++ nameStr n ++ " differs from the kernel's") :: rest
    | some (.recInfo a), some (.recInfo b) =>
      if a == b then rest else ("AUDIT-FAIL recursor " ++ nameStr n ++ " differs from the kernel's") :: rest
    | none, _ => rest
    | _, _ => ("AUDIT-FAIL " ++ nameStr n ++ " was not generated by the kernel") :: rest

def safeOnes (env : Environment) : List Name → NameSet → NameSet
  | [], acc => acc
  | c :: r, acc =>
    match env.find? c with
    | some ci => if ci.isUnsafe || ci.isPartial then safeOnes env r acc else safeOnes env r (acc.insert c)
    | none => safeOnes env r (acc.insert c)

/-- Replay every safe constant of ours into `base` (the core library alone). -/
def replayOurs (env base : Environment) : IO (Except String Nat) := do
  let decls := ourDecls env
  let start : ReplayState :=
    { kenv := base.toKernelEnv, ours := safeOnes env decls {}, done := {}, generated := [],
      sent := 0 }
  match ← ((replayAll env decls).run start).run with
  | .error e => return .error e
  | .ok (_, s) =>
    match checkGenerated env s.kenv s.generated with
    | [] => return .ok s.sent
    | l :: _ => return .error l

def printLines : List String → IO Unit
  | [] => pure ()
  | l :: r => do IO.println l; printLines r

def toImports : List Name → Array Import → Array Import
  | [], acc => acc
  | m :: r, acc => toImports r (acc.push { module := m })

/-! ### What the compiler read, and what each module registered

For each module of ours: its imports as its `.olean` records them (`lean_check.py` compares them
with what its tokenizer read from the header, and refuses `meta` imports), and the environment
extensions it has entries in (`lean_check.py` allows only the kinds of `ALLOWED_EXTENSIONS`: no
macros, elaborators, parsers, notation, initialisers, aliases, coercions). Then every module
loaded from outside `Odp` (only the core library's `Init` may be), and every instance our
modules declare with its class (an instance of a class from outside `Odp` must be pinned in
`scripts/lean/instances.txt`). All of it is read from the `.olean` data; no code of ours runs
(extensions are not loaded). -/

def strJoin : List String → String
  | [] => "(none)"
  | [a] => a
  | a :: l => a ++ ", " ++ strJoin l

def importStrs : List Import → List String
  | [] => []
  | i :: r =>
    (nameStr i.module ++ (if i.isMeta then " [meta]" else "") ++
      (if i.importAll then " [all]" else "")) :: importStrs r

def entryStrs : List (Name × Array EnvExtensionEntry) → List String
  | [] => []
  | (n, es) :: r =>
    if es.size == 0 then entryStrs r else (nameStr n ++ "=" ++ Nat.repr es.size) :: entryStrs r

def moduleLines : List Name → List ModuleData → List String
  | m :: ms, d :: ds =>
    if m.getRoot == `Odp then
      ("AUDIT imports " ++ nameStr m ++ ": " ++ strJoin (importStrs d.imports.toList)) ::
        ("AUDIT entries " ++ nameStr m ++ ": " ++ strJoin (entryStrs d.entries.toList)) ::
        moduleLines ms ds
    else moduleLines ms ds
  | _, _ => []

def outsideModules : List Name → List Name
  | [] => []
  | m :: r => if m.getRoot == `Odp then outsideModules r else m :: outsideModules r

/-- The head constant of an expression, or `_`. -/
def headStr (e : Expr) : String :=
  match e.getAppFn.constName? with
  | some k => nameStr k
  | none => "_"

/-- A class argument's head, marked `(def)` when it is a constant of ours that is not an
inductive type (a `def` or `abbrev` alias of another type, which instance search sees
through): an instance on such a head is not exempt as "on an Odp type". -/
def argHead (env : Environment) (e : Expr) : String :=
  match e.getAppFn.constName? with
  | some k =>
    match env.find? k with
    | some (.inductInfo _) => nameStr k
    | some _ => nameStr k ++ "(def)"
    | none => nameStr k
  | none => "_"

def argHeads (env : Environment) : List Expr → List String
  | [] => []
  | a :: r => argHead env a :: argHeads env r

def parentProjIn (c : Name) : List StructureParentInfo → Bool
  | [] => false
  | p :: r => p.projFn == c || parentProjIn c r

/-- The structure whose parent projection an instance constant is (`ExpField.toOrderedRing`:
recorded by the `structure` command as the projection to a parent, whether the parent is a
subobject or rebuilt from the fields), or `none` for any other constant. -/
def projectionOf (env : Environment) (c : Name) : String :=
  let s := c.getPrefix
  if parentProjIn c (getStructureParentInfo env s).toList then nameStr s else "none"

/-- The arguments of an application, in order (`Expr.getAppArgs` uses library code this
interpreted file cannot run). -/
def appArgs : Expr → List Expr → List Expr
  | .app f a, acc => appArgs f (a :: acc)
  | _, acc => acc

/-- An instance constant's class (the head of its type's conclusion) and the heads of the
class's arguments (`_` for a variable): `C on A, B`. -/
def instanceOf (env : Environment) (c : Name) : String :=
  match env.find? c with
  | some ci =>
    let body := ci.type.getForallBody
    headStr body ++ " on " ++ strJoin (argHeads env (appArgs body []))
  | none => "? on (none)"

/-- The names of the instances a module declares: the entries of
`Lean.Meta.globalInstanceExtension` (a scoped extension of names) in its `.olean`. -/
unsafe def entryName (e : EnvExtensionEntry) : Name :=
  match (unsafeCast e : ScopedEnvExtension.Entry Name) with
  | .global n => n
  | .scoped _ n => n

unsafe def instanceStrs (env : Environment) : List EnvExtensionEntry → List String
  | [] => []
  | e :: r =>
    let n := entryName e
    ("AUDIT instance " ++ nameStr n ++ " of " ++ instanceOf env n ++ " | proj " ++
      projectionOf env n) :: instanceStrs env r

unsafe def instancesIn (env : Environment) : List (Name × Array EnvExtensionEntry) → List String
  | [] => []
  | (n, es) :: r =>
    if n == `Lean.Meta.globalInstanceExtension then appendL (instanceStrs env es.toList)
      (instancesIn env r)
    else instancesIn env r

unsafe def instanceLines (env : Environment) : List Name → List ModuleData → List String
  | m :: ms, d :: ds =>
    if m.getRoot == `Odp then appendL (instancesIn env d.entries.toList) (instanceLines env ms ds)
    else instanceLines env ms ds
  | _, _ => []

/-- The whole audit; returns whether it found nothing. -/
def run : IO Bool := do
  let env ← importModules (toImports auditModules #[]) {}
  IO.println ("AUDIT modules " ++ joinNames (ourModules env))
  printLines (moduleLines env.header.moduleNames.toList env.header.moduleData.toList)
  IO.println ("AUDIT outside " ++ joinNames (outsideModules env.header.moduleNames.toList))
  printLines (unsafe instanceLines env env.header.moduleNames.toList env.header.moduleData.toList)
  let (lines, staticOk) := report env
  printLines lines
  -- Kernel replay of every constant of ours into the core library alone.
  let base ← importModules (toImports (outsideImports env) #[]) {}
  let t0 ← IO.monoMsNow
  let replayOk ← match ← replayOurs env base with
    | .ok n => do
      let t1 ← IO.monoMsNow
      IO.println ("AUDIT replayed " ++ Nat.repr n ++ " declarations through the kernel in "
        ++ Nat.repr (t1 - t0) ++ " ms (on top of " ++ joinNames (outsideImports env) ++ ")")
      pure true
    | .error e => do
      IO.println ("AUDIT-FAIL kernel replay: " ++ e)
      pure false
  let ok := staticOk && replayOk
  if ok then IO.println "AUDIT-OK"
  return ok

end OdpAudit

run_cmd do
  let _ ← OdpAudit.run
