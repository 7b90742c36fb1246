"""Signing a certificate with a key the data owner holds: Ed25519 or HMAC-SHA256.

What is signed is the certificate's *statement* — the ledger it comes from (its id and the
hash of its head row), how many rows and rounds it covers, the SHA-256 of the certificate
text (what ``odp verify`` replays), the budget and the final state — as canonical JSON (sorted
keys, no spaces)::

    {"budget": {...}, "expected_final": {...}, "format": "odp-certificate-statement",
     "head": "<hash>", "ledger_id": "…", "rounds": 6, "rows": 12, "text_sha256": "…",
     "version": 1}

Because the head hash commits to every row before it (the chain of :mod:`odp.ledger.chain`),
the signature covers every transition.  ``odp verify`` recomputes the statement from the
certificate itself, never from a copy stored next to the signature.

* Ed25519 (``pip install -e ".[sign]"``, the ``cryptography`` package): sign with a private key
  (PEM, PKCS#8), check with the public key (PEM).  ``odp ledger keygen --ed25519 KEY`` writes
  both.  Only a check against a public key *the auditor obtained from the data owner* means
  anything: a certificate can carry any public key.
* HMAC-SHA256 with a key file (as ``odp ledger keygen`` writes): the auditor needs the same
  secret key; it shows that someone holding the key made the certificate.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

from ..errors import CertificateError, LedgerError
from ..ledger.chain import key_id, load_key

STATEMENT_FORMAT = "odp-certificate-statement"
SCHEMES = ("ed25519", "hmac-sha256")


def statement(sidecar: dict[str, Any]) -> dict[str, Any]:
    """The statement a signature covers, recomputed from a (v2) sidecar."""
    ledger = sidecar["ledger"]
    head = ledger["head"]
    return {"format": STATEMENT_FORMAT, "version": 1,
            "ledger_id": ledger["genesis"]["ledger_id"], "rows": head["rows"],
            "rounds": head["rounds"], "head": head["head"],
            "text_sha256": sidecar["text_sha256"], "budget": sidecar["budget"],
            "expected_final": sidecar["expected_final"]}


def statement_bytes(sidecar: dict[str, Any]) -> bytes:
    return json.dumps(statement(sidecar), sort_keys=True, separators=(",", ":")).encode("utf-8")


def _crypto() -> tuple[ModuleType, ModuleType]:
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:
        raise CertificateError('Ed25519 signatures need the cryptography package: pip install '
                               '-e ".[sign]" (or pip install cryptography)') from None
    return serialization, ed25519


def public_fingerprint(raw_public_key: bytes) -> str:
    """SHA-256 of the raw 32-byte Ed25519 public key, first 32 hex digits."""
    return hashlib.sha256(raw_public_key).hexdigest()[:32]


def _raw_public(public_key: Any) -> bytes:  # Any: a cryptography Ed25519 public key
    serialization, _ = _crypto()
    raw: bytes = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return raw


def write_ed25519_keypair(path: str | os.PathLike[str]) -> tuple[Path, Path, str]:
    """Write a new Ed25519 private key (PEM, mode 0600) to ``path`` and its public key to
    ``path.pub``; refuse to overwrite.  Returns (private, public, fingerprint)."""
    serialization, ed25519 = _crypto()
    path = Path(path)
    pub = Path(str(path) + ".pub")
    if path.exists() or pub.exists():
        raise CertificateError(f"{path} or {pub} already exists; not overwriting a key")
    key = ed25519.Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(private_pem)
    pub.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                  serialization.PublicFormat.SubjectPublicKeyInfo))
    return path, pub, public_fingerprint(_raw_public(key.public_key()))


def _read(path: str | os.PathLike[str], what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise CertificateError(f"cannot read the {what} {path}: {exc}") from None


def load_public_key(path: str | os.PathLike[str]) -> bytes:
    """The raw 32-byte Ed25519 public key in a PEM file (``KEY.pub``)."""
    serialization, ed25519 = _crypto()
    try:
        key = serialization.load_pem_public_key(_read(path, "public key"))
    except ValueError as exc:
        raise CertificateError(f"{path} is not a PEM public key ({exc})") from None
    if not isinstance(key, ed25519.Ed25519PublicKey):
        raise CertificateError(f"{path} is not an Ed25519 public key")
    return _raw_public(key)


def sign(sidecar: dict[str, Any], *, ed25519_key: str | os.PathLike[str] | None = None,
         hmac_key: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The ``signature`` entry for a v2 sidecar, with exactly one of the two keys."""
    if (ed25519_key is None) == (hmac_key is None):
        raise CertificateError("sign with exactly one key: an Ed25519 private key or an HMAC "
                               "key file")
    message = statement_bytes(sidecar)
    if hmac_key is not None:
        try:
            key = load_key(hmac_key)
        except LedgerError as exc:
            raise CertificateError(str(exc)) from None
        return {"scheme": "hmac-sha256", "key_id": key_id(key),
                "value": hmac.new(key, message, hashlib.sha256).hexdigest()}
    serialization, ed25519 = _crypto()
    assert ed25519_key is not None  # exactly one of the two keys (checked above)
    try:
        private = serialization.load_pem_private_key(_read(ed25519_key, "private key"),
                                                     password=None)
    except (ValueError, TypeError) as exc:
        raise CertificateError(f"{ed25519_key} is not an unencrypted PEM private key "
                               f"({exc})") from None
    if not isinstance(private, ed25519.Ed25519PrivateKey):
        raise CertificateError(f"{ed25519_key} is not an Ed25519 private key")
    raw = _raw_public(private.public_key())
    return {"scheme": "ed25519", "key_id": public_fingerprint(raw), "public_key": raw.hex(),
            "value": private.sign(message).hex()}


def check_signature(sidecar: dict[str, Any], *, public_key: str | os.PathLike[str] | None = None,
                    hmac_key: str | os.PathLike[str] | None = None) -> tuple[bool | None, str]:
    """(verdict, sentence).  ``True``: signed by the key the auditor gave; ``False``: a
    signature or a trusted key that does not verify, or a key given that cannot be applied to
    this certificate (no signature, or one of the other scheme: the check asked for cannot be
    done, and is never passed over in silence); ``None``: nothing was established about the
    signer (no signature, or no trusted key to check it against)."""
    sig = sidecar.get("signature")
    asked = ([f"--public-key {public_key}"] if public_key is not None else []) + (
        [f"--hmac-key {hmac_key}"] if hmac_key is not None else [])
    if sig is None:
        if asked:
            return False, (f"you asked for a signature check ({' and '.join(asked)}), but the "
                           "certificate is not signed: the check cannot be done")
        return None, "not signed"
    if not isinstance(sig, dict) or sig.get("scheme") not in SCHEMES:
        return False, f"unknown signature entry {sig!r}"
    try:
        message = statement_bytes(sidecar)
        value = bytes.fromhex(sig["value"])
    except (KeyError, TypeError, ValueError) as exc:
        return False, f"malformed signature entry ({exc})"
    if sig["scheme"] == "hmac-sha256" and public_key is not None:
        return False, (f"--public-key {public_key} cannot be applied: the certificate carries an "
                       f"HMAC-SHA256 tag (key id {sig.get('key_id')}), not an Ed25519 "
                       "signature, so the check you asked for cannot be done")
    if sig["scheme"] == "ed25519" and hmac_key is not None:
        return False, (f"--hmac-key {hmac_key} cannot be applied: the certificate is signed with "
                       f"Ed25519 (key {sig.get('key_id')}), not tagged with HMAC-SHA256, so the "
                       "check you asked for cannot be done")
    if sig["scheme"] == "hmac-sha256":
        if hmac_key is None:
            return None, (f"HMAC tag by key id {sig.get('key_id')} NOT checked (give the key "
                          "with --hmac-key)")
        try:
            key = load_key(hmac_key)
        except LedgerError as exc:
            return False, str(exc)
        good = hmac.compare_digest(value, hmac.new(key, message, hashlib.sha256).digest())
        return (True, f"HMAC-SHA256 tag by key id {key_id(key)} (the key you gave)") if good \
            else (False, f"the HMAC tag does not verify with the key {key_id(key)} you gave")
    _, ed25519 = _crypto()
    try:
        embedded = bytes.fromhex(sig["public_key"])
        ed25519.Ed25519PublicKey.from_public_bytes(embedded).verify(value, message)
        valid = True
    except Exception:  # noqa: BLE001 - InvalidSignature, ValueError on a bad key
        valid = False
    if public_key is None:
        if not valid:
            return False, "the Ed25519 signature does not verify with the key it names"
        return None, (f"signed with Ed25519 key {public_fingerprint(embedded)} carried in the "
                      "certificate itself — that proves nothing about who signed; check it "
                      "with --public-key KEY.pub obtained from the data owner")
    trusted = load_public_key(public_key)
    if trusted != embedded:
        return False, (f"signed by key {public_fingerprint(embedded)}, not by the key "
                       f"{public_fingerprint(trusted)} you trust")
    if not valid:
        return False, f"the Ed25519 signature does not verify with key {public_fingerprint(trusted)}"
    return True, f"signed by Ed25519 key {public_fingerprint(trusted)} (the key you gave)"
