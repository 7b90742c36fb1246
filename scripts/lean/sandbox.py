"""Run a command so that it can write nothing but one directory of its own.

Part of the checker's trusted base (docs/lean.md, "The trusted base"); standard library only.

Lean runs code while it compiles a file (``#eval``, elaborators, ``initialize``, and, through the
interpreter's foreign-function lookup, any function the WebAssembly module exports, JavaScript
included). ``scripts/lean_check.py`` therefore compiles every checked module inside a sandbox
from this module, so that nothing a module does while it is compiled can reach the checker's
files, the toolchain, the other modules' compiled files or the audit:

* **as root** (CI): each compile runs under a *fresh numeric user id* of its own (a random block
  of 64 ids above 3·10⁹, none of them in the password database, none running a process when the
  block is taken), with no supplementary groups, no capabilities (bounding and inheritable sets
  emptied) and ``no_new_privs``, through util-linux's ``setpriv``. It can write only what that
  user owns — its own output directory, which the checker creates for it — and world-writable
  scratch places (``/tmp``), which the check never reads. When the compile has ended, every
  process left with that id is killed (``kill(-1, SIGKILL)`` sent *as* that id, then a scan of
  ``/proc``) before the checker takes the outputs over.
* **not root**: an unprivileged user and mount namespace (``unshare``) in which every mount is
  remounted read-only except a bind mount of the output directory; the command then runs with
  the ``noroot`` secure bits locked, no capabilities and ``no_new_privs``, so it cannot undo the
  read-only mounts. Where unprivileged namespaces are not allowed the check refuses to run
  (exit 2), naming the reason.

Resource limits (processes, file size, core dumps) are set for every sandboxed command.
"""

from __future__ import annotations

import os
import random
import resource
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

#: The first id of the range the blocks are drawn from, and the size of one block.
UID_BASE = 3_000_000_000
BLOCK = 64
#: At most this many processes (threads count: Node and its WebAssembly workers use about 20).
MAX_PROCESSES = 512
#: Largest file a sandboxed command may write (an ``.olean`` is well below 100 MB).
MAX_FILE_BYTES = 1 << 30


class SandboxError(Exception):
    """No sandbox could be set up here (the message says why)."""


def _tool(name: str) -> str:
    for d in ("/usr/bin", "/bin", "/usr/sbin", "/sbin"):
        p = Path(d) / name
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    raise SandboxError(f"`{name}` (util-linux) is not installed: the Lean check needs it to "
                       "compile each module in a sandbox")


def _passwd_uids() -> set[int]:
    uids = set()
    try:
        for line in Path("/etc/passwd").read_text(encoding="utf-8", errors="replace").splitlines():
            parts = line.split(":")
            if len(parts) > 2 and parts[2].isdigit():
                uids.add(int(parts[2]))
    except OSError:
        pass
    return uids


def processes_of(uid: int) -> list[int]:
    """The ids of the processes whose real, effective or saved user id is ``uid``."""
    return running_uids().get(uid, [])


def running_uids() -> dict[int, list[int]]:
    """For every user id that a process runs as (real, effective or saved), its processes."""
    out: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            status = Path(entry.path, "status").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("Uid:"):
                for u in set(line.split()[1:4]):
                    out.setdefault(int(u), []).append(int(entry.name))
                break
    return out


def _limits() -> None:
    """Run in the child before it execs (as the parent's user, before setpriv changes it)."""
    resource.setrlimit(resource.RLIMIT_NPROC, (MAX_PROCESSES, MAX_PROCESSES))
    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_FILE_BYTES, MAX_FILE_BYTES))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.setsid()  # its own session: no signals to or from the checker's terminal


@dataclass
class Sandbox:
    """How commands are confined here: ``"uid"`` (root: a fresh user id per command) or
    ``"userns"`` (anyone: a read-only mount namespace)."""

    kind: str
    _block: int = 0
    _next: int = 0
    _used: list[int] = field(default_factory=list)

    @classmethod
    def detect(cls) -> Sandbox:
        if os.geteuid() == 0:
            _tool("setpriv")
            return cls("uid")._take_block()
        _tool("unshare")
        _tool("setpriv")
        sb = cls("userns")
        probe = subprocess.run(sb._userns_prefix(None) + ["/bin/true"], capture_output=True,
                               text=True, timeout=60, preexec_fn=_limits)
        if probe.returncode != 0:
            raise SandboxError("this machine refuses unprivileged user and mount namespaces "
                               f"({(probe.stderr or probe.stdout).strip()[:200] or 'unshare failed'}); "
                               "run the check as root (each module is then compiled under a "
                               "user id of its own) or allow them (sysctl "
                               "kernel.unprivileged_userns_clone=1)")
        return sb

    # --- root: a fresh user id per command ------------------------------------------------------

    def _take_block(self) -> Sandbox:
        taken = _passwd_uids() | set(running_uids())
        rng = random.SystemRandom()
        for _ in range(100):
            block = UID_BASE + BLOCK * rng.randrange(0, (4_000_000_000 - UID_BASE) // BLOCK)
            if any(u in taken for u in range(block, block + BLOCK)):
                continue
            self._block, self._next = block, 0
            return self
        raise SandboxError("found no free block of user ids for the sandbox")

    def identity(self) -> int:
        """A user id not used by any earlier command of this sandbox (``uid`` kind)."""
        if self.kind != "uid":
            return os.getuid()
        if self._next >= BLOCK:
            self._take_block()
        uid = self._block + self._next
        self._next += 1
        if processes_of(uid):
            raise SandboxError(f"user id {uid} is already running processes")
        self._used.append(uid)
        return uid

    def make_writable_dir(self, path: Path, uid: int) -> Path:
        """Create ``path`` (a new directory) for a command run as ``uid``: owned by it, mode 0700;
        its parent must let it be reached (0755)."""
        path.mkdir(mode=0o700)
        if self.kind == "uid":
            os.chown(path, uid, uid)
        return path

    def command(self, argv: list[str], *, uid: int, writable: Path | None) -> list[str]:
        """``argv`` wrapped so that it runs confined (see the module docstring)."""
        if self.kind == "uid":
            return [_tool("setpriv"), f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                    "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--", *argv]
        return self._userns_prefix(writable) + argv

    def run(self, argv: list[str], *, uid: int, writable: Path | None, env: dict[str, str],
            cwd: str, timeout: float) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` confined and wait for it; whatever it leaves running is killed before
        this returns. Its output goes to files of the caller (not pipes), so a process it left
        behind holding them open cannot make the wait last."""
        import tempfile
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(self.command(argv, uid=uid, writable=writable), cwd=cwd,
                                    env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    preexec_fn=_limits)
            try:
                code = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                raise
            finally:
                self.reap(uid)
            out.seek(0)
            err.seek(0)
            return subprocess.CompletedProcess(
                argv, code, out.read().decode("utf-8", "replace"),
                err.read().decode("utf-8", "replace"))

    def reap(self, uid: int) -> None:
        """Kill every process left running as ``uid`` (``uid`` kind; in a namespace, the
        namespace's processes die with it: ``unshare --kill-child``)."""
        if self.kind != "uid":
            return
        for _ in range(50):
            if not processes_of(uid):
                return
            # kill(-1, SIGKILL) as that user reaches every process of it (but the sender)
            subprocess.run([_tool("setpriv"), f"--reuid={uid}", f"--regid={uid}",
                            "--clear-groups", "--", shutil.which("kill") or "/bin/kill",
                            "-KILL", "-1"], capture_output=True, timeout=30)
            for pid in processes_of(uid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.05)
        raise SandboxError(f"processes of the sandbox user {uid} could not be killed")

    def reap_all(self) -> None:
        for uid in self._used:
            self.reap(uid)

    # --- not root: a read-only mount namespace --------------------------------------------------

    def _userns_prefix(self, writable: Path | None) -> list[str]:
        """``unshare`` into a new user and mount namespace, then this file's own ``--inside``
        step: every mount read-only except ``writable``, capabilities dropped for good."""
        inside = [_tool("unshare"), "--user", "--map-root-user", "--mount", "--fork",
                  "--kill-child", "--", _python(), "-I", "-S", str(Path(__file__).resolve()),
                  "--inside", str(writable.resolve()) if writable else "-", "--"]
        return inside


def _python() -> str:
    import sys
    return sys.executable or "/usr/bin/python3"


def _mount_points() -> list[str]:
    points = []
    for line in Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if len(fields) > 4:
            points.append(fields[4].encode().decode("unicode_escape"))
    return points


def _inside(writable: str, argv: list[str]) -> int:
    """In the new namespace: bind ``writable`` to itself, remount everything else read-only,
    then exec ``argv`` with no capabilities, ``no_new_privs`` and the ``noroot`` secure bits
    locked (so neither it nor its children regain the namespace's capabilities)."""
    mount = _tool("mount")
    if writable != "-":
        subprocess.run([mount, "--bind", writable, writable], check=True)
    for point in sorted(set(_mount_points()), key=len):
        if writable != "-" and point == writable:
            continue
        res = subprocess.run([mount, "-o", "remount,bind,ro", point], capture_output=True)
        if res.returncode != 0 and not point.startswith(("/proc", "/sys", "/dev")):
            # a mount that cannot be made read-only could be written: refuse
            print(f"sandbox: cannot make {point} read-only", flush=True)
            return 97
    if writable != "-":
        subprocess.run([mount, "-o", "remount,bind,rw", writable, writable], check=True)
    os.execv(_tool("setpriv"), [
        "setpriv", "--securebits=+noroot,+noroot_locked,+no_setuid_fixup,"
        "+no_setuid_fixup_locked,+keep_caps_locked", "--inh-caps=-all", "--bounding-set=-all",
        "--no-new-privs", "--", *argv])
    return 1  # not reached


if __name__ == "__main__":
    import sys
    args = sys.argv[1:]
    if len(args) >= 3 and args[0] == "--inside" and args[2] == "--":
        raise SystemExit(_inside(args[1], args[3:]))
    raise SystemExit("usage: sandbox.py --inside WRITABLE|- -- COMMAND…  (used by lean_check.py)")
