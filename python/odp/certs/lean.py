"""Run the compiled Lean checker ``odpcheck`` (where a lake/elan toolchain exists).

The executable ``odpcheck`` (``OdpCheck.lean``) is built by ``lake build odpcheck``.  This
module drives it with :mod:`pexpect` through its line protocol (``odpcheck --stream``):

    client → one certificate, line by line, then a line ``END``
    server → one line: ``OK eps=<n> delta=<n>``, ``FAIL at row <i>: <reason>`` or ``ERROR <msg>``

One process serves a whole stream of certificates (:class:`OdpCheckProcess`), with a timeout on
every answer and a clean shutdown (EOF, then wait; kill after a grace period).

Kernel-checked certificates need no lake: see :mod:`odp.certs.kernel` (the WebAssembly Lean).

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
from typing import Any

from ..errors import OdpError
from .format import parse
from .mechanisms import derive
from .transition import transition_text

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
        if m is None:  # the expect pattern above admits only lines that _ANSWER matches
            raise OdpError("odpcheck answered outside its protocol")
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

    def __exit__(self, *exc: object) -> None:
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
                 realized: int | None = None, *, mechanism: str | None = None,
                 params: dict[str, Any] | None = None) -> bool:
        mech = None if mechanism is None else derive(mechanism, params)
        text, _, expected = transition_text(eps_r, delta_r, sup, charged, delta, blocks, realized,
                                            mech=mech)
        answer = self.process.check(text)
        return answer.ok and (answer.eps, answer.delta) == expected
