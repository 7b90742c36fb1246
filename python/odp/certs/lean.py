"""Run the Lean checker: the compiled ``odpcheck`` and kernel-checked run certificates.

The executable ``odpcheck`` (``OdpCheck.lean``) is built by ``lake build odpcheck``.  This
module drives it with :mod:`pexpect` through its line protocol (``odpcheck --stream``):

    client → one certificate, line by line, then a line ``END``
    server → one line: ``OK eps=<n> delta=<n>``, ``FAIL at row <i>: <reason>`` or ``ERROR <msg>``

One process serves a whole stream of certificates (:class:`OdpCheckProcess`), with a timeout on
every answer and a clean shutdown (EOF, then wait; kill after a grace period).

``kernel_certificate`` writes ``Odp/Certs/Run_<id>.lean`` — ``theorem … : replay … = some … :=
by decide`` — and :func:`check_kernel` elaborates it with ``lake env lean``.

Where no toolchain exists, :class:`LeanUnavailable` says so: nothing here ever reports a Lean
check that did not happen.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from ..errors import OdpError
from .format import parse

_ANSWER = re.compile(r"^(OK eps=(\d+) delta=(\d+)|FAIL at row (\d+): (.*)|ERROR (.*))\s*$")


class LeanUnavailable(OdpError):
    """No Lean toolchain / ``odpcheck`` executable was found."""


@dataclass
class LeanAnswer:
    ok: bool
    eps: int | None = None
    delta: int | None = None
    row: int | None = None
    message: str = ""


def lean_root() -> Path | None:
    """The directory holding ``lakefile.lean``: ``$ODP_LEAN_ROOT``, the source checkout this
    package lives in, or the current directory."""
    candidates = [os.environ.get("ODP_LEAN_ROOT"), Path(__file__).resolve().parents[3], Path.cwd()]
    for c in candidates:
        if c and (Path(c) / "lakefile.lean").exists():
            return Path(c)
    return None


def find_odpcheck() -> list[str]:
    """The command that runs ``odpcheck``: ``$ODP_ODPCHECK``, a built binary in the checkout,
    or ``lake exe odpcheck``.  Raises :class:`LeanUnavailable` when there is none."""
    explicit = os.environ.get("ODP_ODPCHECK")
    if explicit:
        return explicit.split()
    root = lean_root()
    if root is not None:
        built = root / ".lake" / "build" / "bin" / "odpcheck"
        if built.exists():
            return [str(built)]
        if shutil.which("lake"):
            return ["lake", "exe", "odpcheck"]
    raise LeanUnavailable(
        "no Lean toolchain: neither $ODP_ODPCHECK, a built .lake/build/bin/odpcheck, nor 'lake' "
        "on PATH was found (install elan and run 'lake build odpcheck' in the repository)"
    )


class OdpCheckProcess:
    """A long-lived ``odpcheck --stream`` process (or anything speaking its line protocol)."""

    def __init__(self, command: list[str] | None = None, *, timeout: float = 120.0,
                 cwd: str | Path | None = None):
        import pexpect

        self.command = command or find_odpcheck()
        self.timeout = timeout
        cmd = self.command + ["--stream"]
        self._child = pexpect.spawn(cmd[0], cmd[1:], encoding="utf-8", timeout=timeout,
                                    cwd=str(cwd or lean_root() or Path.cwd()), echo=False)
        self._pexpect = pexpect

    def check(self, text: str) -> LeanAnswer:
        """Send one certificate and read the answer."""
        parse(text)  # never send malformed input: it would desynchronise the stream
        for line in text.splitlines():
            self._child.sendline(line)
        self._child.sendline("END")
        try:
            self._child.expect(r"(OK eps=\d+ delta=\d+|FAIL at row \d+: [^\r\n]*|ERROR [^\r\n]*)\r?\n")
        except self._pexpect.TIMEOUT:
            self.close(force=True)
            raise OdpError(f"odpcheck did not answer within {self.timeout} s") from None
        except self._pexpect.EOF:
            raise OdpError("odpcheck exited before answering") from None
        m = _ANSWER.match(self._child.match.group(1))
        if m.group(2) is not None:
            return LeanAnswer(True, eps=int(m.group(2)), delta=int(m.group(3)))
        if m.group(4) is not None:
            return LeanAnswer(False, row=int(m.group(4)), message=m.group(5))
        return LeanAnswer(False, message=m.group(6))

    def close(self, force: bool = False) -> None:
        child = getattr(self, "_child", None)
        if child is None:
            return
        if child.isalive() and not force:
            child.sendeof()
            try:
                child.expect(self._pexpect.EOF, timeout=10)
            except (self._pexpect.TIMEOUT, self._pexpect.EOF):
                pass
        child.close(force=True)
        self._child = None

    def __enter__(self) -> "OdpCheckProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close(force=True)
        except Exception:
            pass


class LeanTransitionCheck:
    """``Accountant(enforce="lean")``: each transition is checked by ``odpcheck``."""

    def __init__(self, process: OdpCheckProcess | None = None):
        self.process = process or OdpCheckProcess()

    def __call__(self, eps_r: Fraction, delta_r: Fraction, sup: Fraction, charged: Fraction,
                 delta: Fraction, blocks: list[Fraction] | None = None,
                 realized: int | None = None) -> bool:
        from .enforce import transition_text

        text, _, expected = transition_text(eps_r, delta_r, sup, charged, delta, blocks, realized)
        answer = self.process.check(text)
        return answer.ok and (answer.eps, answer.delta) == expected


def kernel_certificate(text: str, run_id: str) -> tuple[str, str]:
    """Lean source proving, by ``decide`` in the kernel, that the certificate replays to its
    final state and that its ``blocks`` / ``deltas`` rows hold.  Returns (module name, source)."""
    from .. import _lean_rules as lean

    cert = parse(text)
    ident = "Run_" + re.sub(r"[^A-Za-z0-9_]", "_", run_id)
    entries = [f"⟨{s.sup_eps}, {s.charged}, {s.delta}⟩" for s in cert.steps]
    final = lean.replay(lean.State(cert.budget_eps, cert.budget_delta),
                        [lean.Entry(s.sup_eps, s.charged, s.delta) for s in cert.steps])
    if final is None:
        raise OdpError("this certificate does not replay; there is nothing to prove")
    lines = [
        "import Odp.LedgerCore",
        "set_option autoImplicit false",
        "open Odp.LedgerCore",
        "",
        f"-- Generated by odp for run {run_id}: checked by the Lean kernel (`decide`).",
        "set_option maxRecDepth 100000 in",
        f"theorem {ident}_replay :",
        f"    replay ⟨{cert.budget_eps}, {cert.budget_delta}⟩",
        "      [" + ",\n       ".join(entries) + "]",
        f"      = some ⟨{final.eps}, {final.delta}⟩ := by decide",
    ]
    for i, s in enumerate(cert.steps, 1):
        entry = f"⟨{s.sup_eps}, {s.charged}, {s.delta}⟩"
        if s.blocks is not None:
            lines += ["", f"theorem {ident}_blocks_{i} :",
                      f"    blocksOk {entry} [{', '.join(map(str, s.blocks))}] {s.realized} = true := by decide"]
        if s.deltas is not None:
            lines += ["", f"theorem {ident}_deltas_{i} :",
                      f"    deltasOk {entry} [{', '.join(map(str, s.deltas))}] = true := by decide"]
    return f"Odp.Certs.{ident}", "\n".join(lines) + "\n"


def check_kernel(text: str, run_id: str, *, timeout: float = 1800.0) -> tuple[Path, str]:
    """Write ``Odp/Certs/Run_<id>.lean`` and elaborate it with ``lake env lean`` (pexpect).
    Returns the file and Lean's output.  Raises :class:`LeanUnavailable` without ``lake``."""
    import pexpect

    root = lean_root()
    if root is None or not shutil.which("lake"):
        raise LeanUnavailable("no Lean toolchain: 'lake' is not on PATH or no lakefile.lean found")
    module, source = kernel_certificate(text, run_id)
    path = root / "Odp" / "Certs" / (module.rsplit(".", 1)[1] + ".lean")
    path.write_text(source, encoding="utf-8")
    child = pexpect.spawn("lake", ["env", "lean", str(path.relative_to(root))], cwd=str(root),
                          encoding="utf-8", timeout=timeout)
    try:
        child.expect(pexpect.EOF)
    except pexpect.TIMEOUT:
        child.close(force=True)
        raise OdpError(f"lean did not finish within {timeout} s") from None
    output = child.before or ""
    child.close()
    if child.exitstatus != 0 or "error" in output:
        raise OdpError(f"the Lean kernel rejected {path}:\n{output.strip()}")
    return path, output
