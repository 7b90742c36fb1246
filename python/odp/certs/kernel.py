"""Certificates decided by the Lean kernel (``odp verify --kernel``).

The certificate's rows become Lean data — a list of ``Odp.LedgerCore.CertStep`` — and the kernel
is asked to decide ``checkCert budget steps = some final``: every step passes ``admits`` (Alg. 1,
line 4), its ``blocks``/``deltas``/refund rows (Lemmas 4 and 6) and its ``mech`` row (``mechOk``:
the round's classes, costs and δ are the named mechanism's for its parameters; a step without one
is ``MechRow.declared``), and the replay ends at the final budget the certificate records.
A laned certificate's steps replay from the ODP lane's share, and the kernel also decides its
lanes (``lanesOk``, ``gaussiansOk``, ``odpShare``; see :func:`_lanes_part`). ``Odp.LedgerCore.checkCert_sound`` then gives
``replay budget (steps.map entry) = some final``, and ``Odp.Core.checkCert_certificate_sound``
what that means for Theorem 7 (for a run of honest requests: the rows are exactly the
accountant's, they fit the budget, and the run is (ε_t, δ_t)-DP).

Long certificates are cut into chunks of :data:`CHUNK` steps: one kernel decision per chunk,
from the budget where the previous chunk ends, joined by ``Odp.LedgerCore.checkCert_append``.
The chunk boundaries are computed here with the generated rules, but they are claims, not
trusted facts: the kernel decides each chunk's claim.

The Lean source is ``Odp/LedgerCore.lean`` exactly as the generated checker embeds it
(``odp._lean_rules.LEAN_TEXT``, whose SHA-256 is checked); it is compiled once per version into
the toolchain cache. The toolchain is :mod:`odp.lean_toolchain` (Lean 4.28.0-pre, WebAssembly).
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Callable

from .. import _lean_rules as rules
from ..budget import display_named
from .. import lean_toolchain as lt
from ..errors import CertificateError, OdpError
from .format import CertificateText, MechRow, Step, parse
from .mechanisms import KINDS

#: Steps per kernel decision.
CHUNK = 2000
#: Largest certificate accepted (steps); larger ones are refused up front.
MAX_STEPS = 100_000


class KernelUnavailable(OdpError):
    """The Lean toolchain could not be obtained, so nothing was checked."""


@dataclass
class KernelResult:
    ok: bool
    message: str
    steps: int
    chunks: int
    seconds: float
    lean_file: Path | None = None


def _state(eps: int, delta: int) -> str:
    return f"⟨{eps}, {delta}⟩"


def _mech(m: MechRow | None) -> str:
    """A ``mech`` row as an ``Odp.LedgerCore.MechRow`` (none: ``MechRow.declared``)."""
    if m is None:
        return "MechRow.declared"
    groups = ", ".join(f"⟨{n}, {e}, {d}⟩" for n, e, d in m.groups or ())
    return f"⟨{KINDS[m.name].lean_kind}, [{', '.join(map(str, m.params))}], [{groups}]⟩"


def _step(s: Step) -> str:
    entry = f"⟨{s.sup_eps}, {s.charged}, {s.delta}⟩"
    blocks = ("none" if s.blocks is None
              else f"some ([{', '.join(map(str, s.blocks))}], {s.realized})")
    deltas = "none" if s.deltas is None else f"some [{', '.join(map(str, s.deltas))}]"
    return f"⟨{entry}, {blocks}, {deltas}, {_mech(s.mech)}⟩"


def lean_certificate(cert: CertificateText, final: tuple[int, int], *, chunk: int = CHUNK) -> str:
    """The Lean module that states the certificate's claim, chunk by chunk."""
    if chunk < 1:
        raise ValueError("chunk must be positive")
    steps = cert.steps
    pieces = [steps[i:i + chunk] for i in range(0, len(steps), chunk)] or [[]]
    # Chunk boundaries by the generated rules (arithmetic only; the kernel decides each claim).
    # A laned certificate's steps replay from the ODP lane's share (``odpShare``).
    bounds = [cert.odp_budget]
    s = rules.State(*cert.odp_budget)
    for piece in pieces[:-1]:
        for st in piece:
            s = rules.update(s, rules.Entry(st.sup_eps, st.charged, st.delta))
        bounds.append((s.eps, s.delta))
    bounds.append(final)
    out = [
        "module",
        "",
        "public import Odp.LedgerCore",
        "",
        "/-! A run certificate, written by `odp verify --kernel` (odp.certs.kernel). -/",
        "",
        "set_option autoImplicit false",
        "set_option maxRecDepth 1000000",
        "",
        "namespace OdpRun",
        "",
        "open Odp.LedgerCore",
        "",
        "noncomputable section",
        "",
    ]
    for i, piece in enumerate(pieces):
        body = ",\n  ".join(_step(st) for st in piece)
        out += [f"def chunk{i} : List CertStep := [", f"  {body}]" if body else "  ]", ""]
        out += [f"theorem chunk{i}_ok : checkCert {_state(*bounds[i])} chunk{i} = "
                f"some {_state(*bounds[i + 1])} := by",
                "  decide +kernel", ""]
    n = len(pieces)
    joined = " ++ (".join(f"chunk{i}" for i in range(n)) + ")" * (n - 1)
    out += [f"def steps : List CertStep := {joined}", ""]
    proof = f"chunk{n - 1}_ok"
    for i in range(n - 2, -1, -1):
        proof = f"checkCert_append _ _ _ _ _ chunk{i}_ok ({proof})"
    out += [
        "/-- The whole certificate: every step passes `admits` and its rows, ending at the final",
        "budget it records. -/",
        f"theorem certificate_ok : checkCert {_state(*bounds[0])} steps = some {_state(*final)} :=",
        f"  {proof}",
        "",
        "/-- Hence its rows replay under Alg. 1's rules (`Odp.LedgerCore.checkCert_sound`). -/",
        f"theorem certificate_replays : replay {_state(*bounds[0])} (steps.map CertStep.entry) = "
        f"some {_state(*final)} ∧ ∀ c ∈ steps, stepRowsOk c = true :=",
        "  checkCert_sound steps _ _ certificate_ok",
        "",
    ]
    if cert.lanes:
        out += _lanes_part(cert, bounds[0], final)
    out += ["end", "", "end OdpRun", ""]
    return "\n".join(out)


def _lanes_part(cert: CertificateText, start: tuple[int, int], final: tuple[int, int]
                ) -> list[str]:
    """A laned certificate's lanes as Lean data, and the kernel's claims about them: `lanesOk`
    (the shares add up to the budget, every lane holds its charges), `gaussiansOk` (each
    Gaussian charge is its noise's ρ), and that the steps replay from the ODP lane's share —
    together the hypothesis `Odp.Core.Lanes.session_dp` takes from a certificate."""
    from .export import lean_lanes

    total, shares, slots, costs, gauss = lean_lanes(cert)
    share_text = ", ".join(f"⟨{h.kind}, {h.eps}, {h.delta}⟩" for h in shares)
    slot_text = ", ".join(f"⟨{x.lane}, {x.coord}, {x.budget}⟩" for x in slots)
    cost_text = ",\n  ".join(f"⟨{c.lane}, {c.coord}, {c.amount}⟩" for c in costs)
    gauss_text = ",\n  ".join(f"⟨{g.rho}, {g.m}, {g.s2}⟩" for g in gauss)
    total_text = _state(total.eps, total.delta)
    return [
        f"def shares : List Share := [{share_text}]",
        "",
        f"def slots : List Slot := [{slot_text}]",
        "",
        f"def costs : List Cost := [\n  {cost_text}]" if costs else "def costs : List Cost := []",
        "",
        f"def gaussians : List GaussRow := [\n  {gauss_text}]" if gauss
        else "def gaussians : List GaussRow := []",
        "",
        "/-- The lanes: their shares add up to the budget, every charge goes to a coordinate of",
        "a lane's budget and every lane holds its charges. -/",
        f"theorem lanes_ok : lanesOk {total_text} shares slots costs = true := by",
        "  decide +kernel",
        "",
        "/-- Every Gaussian charge is the ρ of the discrete Gaussian it names. -/",
        f"theorem gaussians_ok : gaussiansOk {cert.D} gaussians = true := by",
        "  decide +kernel",
        "",
        "/-- The steps replay from the ODP lane's share. -/",
        f"theorem odp_share_is : odpShare shares = {_state(*start)} := by",
        "  decide +kernel",
        "",
        "/-- The laned certificate as `Odp.Core.Lanes.session_dp` takes it. -/",
        f"theorem laned_certificate_ok : lanesOk {total_text} shares slots costs = true ∧",
        f"    checkCert (odpShare shares) steps = some {_state(*final)} := by",
        "  rw [odp_share_is]",
        "  exact ⟨lanes_ok, certificate_ok⟩",
        "",
    ]


def _ledger_core(tc: lt.Toolchain, say: Callable[[str], None]) -> Path:
    """The build directory holding ``Odp/LedgerCore.olean`` for the embedded source.

    It is kept in the toolchain cache (:func:`odp.lean_toolchain.cache_root`: owned by the user,
    writable by no one else, else refused) with a record of the SHA-256 of the source bytes it
    was compiled from and of every file it holds (:func:`odp.lean_toolchain.write_stamp`). A
    cached build is used only when that record matches the embedded source and the files;
    otherwise it is compiled again."""
    text = rules.LEAN_TEXT
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if digest != rules.SOURCE_SHA256:
        raise CertificateError("the embedded Lean source does not match its recorded SHA-256")
    try:
        build = lt.cache_root() / "ledgercore" / digest[:16]
        lt.secure_dir(build.parent)
    except lt.ToolchainError as exc:
        raise KernelUnavailable(str(exc)) from exc
    if lt.stamp_problem(build, digest) is None:
        return build
    with lt.file_lock(build.parent / (build.name + ".lock")):
        problem = lt.stamp_problem(build, digest)
        if problem is None:
            return build
        if build.exists():
            say(f"not reusing the cached {build / 'Odp' / 'LedgerCore.olean'}: {problem}")
        src = Path(tempfile.mkdtemp(prefix="odp-ledgercore.", dir="/tmp"))
        try:
            path = src / "Odp" / "LedgerCore.lean"
            path.parent.mkdir(parents=True)
            path.write_bytes(text.encode("utf-8"))
            say("compiling Odp/LedgerCore.lean (once per version)")
            staging = Path(tempfile.mkdtemp(prefix=build.name + ".", dir=build.parent))
            res = tc.compile(path, root=src, out=staging / "Odp" / "LedgerCore.olean")
            if not res.ok:
                shutil.rmtree(staging, ignore_errors=True)
                raise CertificateError("Odp/LedgerCore.lean did not compile: "
                                       + (res.output.strip().splitlines() or ["?"])[0])
            lt.write_stamp(staging, digest, module="Odp.LedgerCore")
            if build.exists():
                shutil.rmtree(build)
            staging.rename(build)
        finally:
            shutil.rmtree(src, ignore_errors=True)
    return build


def check_kernel(text: str, final: tuple[int, int], *, chunk: int | None = None,
                 keep: Path | None = None, say: Callable[[str], None] | None = None,
                 timeout: float = 3600) -> KernelResult:
    """Ask the Lean kernel to decide the certificate ``text`` with final budget ``final``
    (units of 1/D), :data:`CHUNK` steps per decision unless ``chunk`` is given. ``keep``: also
    write the Lean file there."""
    say = say or (lambda message: None)
    chunk = chunk or CHUNK
    cert = parse(text)
    if len(cert.steps) > MAX_STEPS:
        raise CertificateError(f"{len(cert.steps)} steps exceed the kernel check's limit of "
                               f"{MAX_STEPS} (odp.certs.kernel.MAX_STEPS)")
    try:
        tc = lt.ensure_toolchain(say=say)
    except lt.ToolchainError as exc:
        raise KernelUnavailable(str(exc)) from exc
    build = _ledger_core(tc, say)
    source = lean_certificate(cert, final, chunk=chunk)
    work = Path(tempfile.mkdtemp(prefix="odp-cert.", dir="/tmp"))
    try:
        path = work / "OdpRun.lean"
        path.write_text(source, encoding="utf-8")
        if keep is not None:
            try:
                Path(keep).write_text(source, encoding="utf-8")
            except OSError as exc:
                raise CertificateError(f"cannot write the Lean file {keep}: {exc}") from exc
        t0 = time.monotonic()
        res = tc.compile(path, lean_path=[build], timeout=timeout)
        seconds = time.monotonic() - t0
    finally:
        shutil.rmtree(work, ignore_errors=True)
    chunks = max(1, -(-len(cert.steps) // chunk))
    if res.ok:
        left = (display_named("ε", Fraction(final[0], cert.D), "down") + ", "
                + display_named("δ", Fraction(final[1], cert.D), "down"))
        lanes = (f" and lanesOk, gaussiansOk for {len(cert.lanes)} lane(s) with "
                 f"{len(cert.charges)} lane charge(s)" if cert.lanes else "")
        return KernelResult(True, f"the Lean kernel decided checkCert for {len(cert.steps)} steps"
                                  f"{lanes} "
                                  f"({chunks} chunk(s)) in {seconds:.0f} s: accepted, ending at "
                                  f"the certificate's final budget, remaining {left}",
                            len(cert.steps), chunks, seconds, keep)
    first = next((d.text.splitlines()[0].split(": error", 1)[-1].lstrip(":( ").strip()
                  for d in res.diagnostics if d.severity == "error"),
                 (res.output.strip().splitlines() or [res.stderr.strip() or "no output"])[0])
    failing = [d for d in res.diagnostics if d.severity == "error"]
    where = ""
    if failing:
        line = failing[0].line
        names = [ln for ln in source.splitlines()[:line] if ln.startswith("theorem ")]
        if names:
            where = " in " + names[-1].split()[1]
    return KernelResult(False, f"the Lean kernel rejected the certificate{where}: {first}",
                        len(cert.steps), chunks, seconds, keep)
