"""The ledger's hash chain: one canonical encoding of every row, SHA-256 links, optional HMAC.

This module is backend-independent on purpose: every ledger backend (the in-memory ledger,
SQLite, and a later server backend) computes its hashes *only* through these functions, from
the exact values it stores, so two backends holding the same rows hold the same chain, byte for
byte.  Nothing here knows about SQL.

Encoding (version 1)
--------------------
A value is encoded as a type tag, its payload's length in bytes (ASCII decimal), ``:`` and the
payload; ``None`` is the single byte ``N``:

========================  ====  ===============================================================
value                     tag   payload
========================  ====  ===============================================================
``None``                  N     (none: the encoding is just ``N``)
int                       i     decimal digits, ``-`` for negatives
str                       s     UTF-8 bytes
Fraction                  q     ``numerator/denominator`` in lowest terms, denominator ≥ 1
float (a timestamp)       f     16 lower-case hex digits of the IEEE-754 binary64, big-endian
========================  ====  ===============================================================

JSON-valued columns (params, guarantee, label, owner) are ``str``: the canonical JSON text the
ledger stores (:func:`odp.ledger.records.dumps`: sorted keys, no spaces, ASCII escapes).

* ``genesis_hash = SHA-256(b"odp-ledger-genesis-v1\\0" + enc(ledger_id) + enc(ε_t) + enc(δ_t)
  + enc(key_id))`` binds the ledger's identity, its budget and (if any) its HMAC key id.
* ``row_hash_n = SHA-256(b"odp-ledger-row-v1\\0" + prev + enc(seq) + enc(kind) + enc(round_id)
  + enc(mechanism) + enc(params) + enc(guarantee) + enc(sup_epsilon) + enc(delta)
  + enc(interactive) + enc(label) + enc(charged) + enc(reason) + enc(owner) + enc(created))``
  where ``prev`` is the 32 raw bytes of ``row_hash_{n−1}`` (of the genesis hash for row 1) and
  ``seq`` runs 1, 2, 3, … without gaps.
* With an HMAC key, each row also carries ``HMAC-SHA256(key, b"odp-ledger-row-mac-v1\\0" +
  row_hash)`` and the head file ``HMAC-SHA256(key, b"odp-ledger-head-v1\\0" + enc(ledger_id) +
  enc(rows) + enc(rounds) + head_hash)``: without the key nobody can write a chain or a head
  that verifies.

Hashes are written as 64 lower-case hex digits.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import math
import os
import struct
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Iterable, NamedTuple, Sequence

from ..errors import LedgerCorrupted, LedgerError

CHAIN_VERSION = 1
_GENESIS_TAG = b"odp-ledger-genesis-v1\0"
_ROW_TAG = b"odp-ledger-row-v1\0"
_ROW_MAC_TAG = b"odp-ledger-row-mac-v1\0"
_HEAD_MAC_TAG = b"odp-ledger-head-v1\0"
_KEY_ID_TAG = b"odp-ledger-key-id-v1\0"
MIN_KEY_BYTES = 32
KINDS = ("reserve", "settle")


def _field(tag: bytes, payload: bytes) -> bytes:
    return tag + str(len(payload)).encode("ascii") + b":" + payload


def _enc_int(value: int) -> bytes:
    text = str(value).encode("ascii")
    return b"i" + str(len(text)).encode("ascii") + b":" + text


def _enc_str(value: str) -> bytes:
    data = value.encode("utf-8")
    return b"s" + str(len(data)).encode("ascii") + b":" + data


def _enc_fraction(value: Fraction) -> bytes:
    text = f"{value.numerator}/{value.denominator}".encode("ascii")
    return b"q" + str(len(text)).encode("ascii") + b":" + text


def _enc_float(value: float) -> bytes:
    if not math.isfinite(value):
        raise TypeError(f"a timestamp must be finite, got {value!r}")
    return b"f16:" + struct.pack(">d", value).hex().encode("ascii")


#: Exact types → encoders (a dict look-up: the row hash is on every charge's path).
#: Any: each encoder takes a value of its key's type, which a dict type cannot pair up.
_ENCODERS: dict[type, Callable[[Any], bytes]] = {
    type(None): lambda _: b"N", int: _enc_int, str: _enc_str, Fraction: _enc_fraction,
    float: _enc_float}


def encode_value(value: Any) -> bytes:
    """The canonical encoding of one value (see the module docstring).  ``bool`` is refused
    (store 0/1), as is every type outside the table, so a row can never hash ambiguously."""
    enc = _ENCODERS.get(type(value))
    if enc is not None:
        return enc(value)
    if isinstance(value, bool):
        raise TypeError("booleans are not encoded; store 0 or 1")
    for kind in (int, str, Fraction, float):  # subclasses encode as their base type
        if isinstance(value, kind):
            return _ENCODERS[kind](kind(value) if kind is not Fraction else value)
    raise TypeError(f"cannot encode {type(value).__name__} in a ledger row")


_PACK_DOUBLE = struct.Struct(">d").pack
_sha256 = hashlib.sha256
#: Types no Fraction can have (a set look-up is cheaper than ``isinstance(v, Fraction)``).
_NOT_FRACTIONS = frozenset({str, int, float, type(None)})
_isfinite = math.isfinite


#: Encodings of recently seen strings (by value) and exact Fractions (by identity: hashing a
#: Fraction costs more than formatting it).  A charge's rows repeat most of their values (the
#: owner, the guarantee, the amounts, the round id in its settle row).  Bounded: cleared when
#: full.  Both map an immutable value to its encoding, so a hit is the bytes it would give.
_CACHE_SIZE = 512
_CACHED_STR_MAX = 4096  # longer strings are encoded each time (their copies would add up)
_STR_TEXTS: dict[str, str] = {}
_FRACTION_TEXTS: dict[int, tuple[Fraction, str]] = {}


def encode_values(values: Sequence[Any]) -> bytes:
    """``b"".join(encode_value(v) for v in values)``, faster (it runs twice per charge).

    One loop over the values of exact types ``str``, ``None``, ``Fraction``, ``int`` and finite
    ``float`` builds the encoding as text (every tag, length and digit is ASCII, and the UTF-8
    encoding of a concatenation is the concatenation of the encodings, so encoding once at the
    end gives the same bytes); the payload length of a string is its UTF-8 length
    (``len(v)`` when ``v`` is ASCII).  Any other value — a subclass, a bool, a non-finite float,
    an unknown type — sends the whole row to :func:`encode_value`, which encodes or refuses it.
    ``tests/test_ledger_integrity.py`` checks both against each other."""
    parts: list[str] = []
    append = parts.append
    str_texts, fraction_texts = _STR_TEXTS, _FRACTION_TEXTS
    for v in values:
        t = type(v)
        if t is str:
            text = str_texts.get(v)
            if text is None:
                text = f"s{len(v) if v.isascii() else len(v.encode('utf-8'))}:{v}"
                if len(v) <= _CACHED_STR_MAX:
                    if len(str_texts) >= _CACHE_SIZE:
                        str_texts.clear()
                    str_texts[v] = text
            append(text)
        elif v is None:
            append("N")
        elif t is Fraction:
            hit = fraction_texts.get(id(v))
            if hit is not None and hit[0] is v:
                append(hit[1])
            else:
                text = f"{v.numerator}/{v.denominator}"
                text = f"q{len(text)}:{text}"
                if len(fraction_texts) >= _CACHE_SIZE:
                    fraction_texts.clear()
                fraction_texts[id(v)] = (v, text)
                append(text)
        elif t is int:
            text = str(v)
            append(f"i{len(text)}:{text}")
        elif t is float and _isfinite(v):
            append("f16:" + _PACK_DOUBLE(v).hex())
        else:
            return b"".join([encode_value(x) for x in values])
    return "".join(parts).encode("utf-8")


@dataclass(frozen=True)
class Genesis:
    """What the chain starts from: the ledger's identity, its budget, its HMAC key id, for a
    laned ledger (:mod:`odp.ledger.lanes`) the canonical JSON text of its lanes, and the
    neighbouring relation its rounds hold for (:mod:`odp.neighbours`: ``"replace-one"`` or
    ``"add-remove"``) — so the division of the budget and the relation are bound by the genesis
    hash like the budget itself.  A ledger made before odp recorded the relation has none
    (``None``: replace-one)."""

    ledger_id: str
    epsilon: Fraction
    delta: Fraction
    key_id: str | None = None
    lanes: str | None = None
    neighbours: str | None = None

    def encode(self) -> bytes:
        """``tag + enc(ledger_id) + enc(ε_t) + enc(δ_t) + enc(key_id)``, then ``enc(lanes)``
        for a laned ledger, then — when a relation is recorded — ``enc(lanes)`` (``N`` without
        lanes) and ``enc(neighbours)``.  A ledger without lanes or relation keeps the hash it
        always had; every value is self-delimiting, so no two geneses share an encoding."""
        values: tuple[Any, ...] = (self.ledger_id, Fraction(self.epsilon), Fraction(self.delta),
                                   self.key_id)
        if self.neighbours is not None:
            values += (self.lanes, self.neighbours)
        elif self.lanes is not None:
            values += (self.lanes,)
        return _GENESIS_TAG + b"".join(encode_value(v) for v in values)

    @property
    def hash(self) -> str:
        return hashlib.sha256(self.encode()).hexdigest()

    def to_json(self) -> dict[str, Any]:
        out = {"ledger_id": self.ledger_id, "epsilon": str(self.epsilon),
               "delta": str(self.delta), "key_id": self.key_id, "hash": self.hash}
        if self.lanes is not None:
            out["lanes"] = self.lanes
        if self.neighbours is not None:
            out["neighbours"] = self.neighbours
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Genesis":
        lanes = data.get("lanes")
        if lanes is not None and not isinstance(lanes, str):
            raise ValueError("the genesis records its lanes as JSON text")
        neighbours = data.get("neighbours")
        if neighbours is not None and not isinstance(neighbours, str):
            raise ValueError("the genesis records its neighbouring relation as text")
        return cls(str(data["ledger_id"]), Fraction(data["epsilon"]), Fraction(data["delta"]),
                   data.get("key_id"), lanes, neighbours)


#: The hashed columns of a row, in encoding order (``seq`` first).
ROW_FIELDS = ("seq", "kind", "round_id", "mechanism", "params", "guarantee", "sup_epsilon",
              "delta", "interactive", "label", "charged", "reason", "owner", "created")


class EventRow(NamedTuple):
    """One ledger row as its exact values (the hashed columns, in :data:`ROW_FIELDS` order).
    Immutable (a named tuple: rows are parsed on every refresh, so creating one is cheap)."""

    seq: int
    kind: str
    round_id: str
    mechanism: str | None
    params: str | None
    guarantee: str | None
    sup_epsilon: Fraction | None
    delta: Fraction | None
    interactive: int | None
    label: str | None
    charged: Fraction | None
    reason: str | None
    owner: str | None
    created: float

    def values(self) -> tuple[Any, ...]:  # Any: the row's column values, in ROW_FIELDS order
        return tuple(self)

    def encode(self) -> bytes:
        return encode_values(self)

    def stored_values(self) -> list[Any]:
        """The values as a backend stores them: amounts (Fractions) as their ``"p/q"`` text,
        everything else as is (what the SQL ledgers insert before the chain columns)."""
        return [v if type(v) in _NOT_FRACTIONS else str(v) if isinstance(v, Fraction) else v
                for v in self]

    def to_json(self) -> list[Any]:
        """The row as a JSON list (Fractions as ``"p/q"`` text, the timestamp as its float)."""
        return [str(v) if isinstance(v, Fraction) else v for v in self.values()]

    @classmethod
    def from_stored(cls, values: Iterable[Any]) -> "EventRow":
        """Parse a row as a backend stores it (amounts as text, ``created`` a number); raise
        ``ValueError``/``TypeError`` on anything malformed."""
        v = list(values)
        if len(v) != len(ROW_FIELDS):
            raise ValueError(f"a row has {len(ROW_FIELDS)} columns, got {len(v)}")
        (seq, kind, round_id, mechanism, params, guarantee, sup_eps, delta, interactive, label,
         charged, reason, owner, created) = v
        if type(seq) is not int or seq < 1:
            if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
                raise ValueError(f"bad sequence number {seq!r}")
            seq = int(seq)
        if kind not in KINDS:
            raise ValueError(f"bad row kind {kind!r}")
        for i, text in enumerate((round_id, mechanism, params, guarantee, label, reason, owner)):
            if text is not None and type(text) is not str and not isinstance(text, str):
                name = ("round_id", "mechanism", "params", "guarantee", "label", "reason",
                        "owner")[i]
                raise TypeError(f"{name} is {type(text).__name__}, not text")
        if not isinstance(round_id, str):
            raise TypeError("round_id is missing")
        if interactive is not None and (type(interactive) is not int or interactive not in (0, 1)):
            raise ValueError(f"bad interactive flag {interactive!r}")
        if type(created) is not float:
            if isinstance(created, bool) or not isinstance(created, (int, float)):
                raise TypeError(f"created is {type(created).__name__}, not a number")
            created = float(created)
        return cls(seq, kind, round_id, mechanism, params, guarantee, _amount(sup_eps),
                   _amount(delta), interactive, label, _amount(charged), reason, owner, created)

    @classmethod
    def from_json(cls, data: list[Any]) -> "EventRow":
        return cls.from_stored(data)


def _amount(text: Any) -> Fraction | None:
    if text is None:
        return None
    if type(text) is not str:
        raise TypeError(f"an amount is stored as text, got {type(text).__name__}")
    return _parse_amount(text)


@functools.lru_cache(maxsize=4096)
def _parse_amount(text: str) -> Fraction:
    """Exact amount text → Fraction (cached: the same few amounts recur; Fractions are
    immutable)."""
    value = Fraction(text)
    if value < 0:
        raise ValueError(f"negative amount {text!r}")
    return value


def row_hash(prev_hash: str, row: EventRow) -> str:
    """``SHA-256(tag + prev + enc(row))`` as hex (see the module docstring)."""
    return _sha256(_ROW_TAG + bytes.fromhex(prev_hash) + row.encode()).hexdigest()


# ---------------------------------------------------------------------------- keys and MACs
def key_id(key: bytes) -> str:
    """A public identifier of an HMAC key (reveals nothing usable about the key)."""
    return hashlib.sha256(_KEY_ID_TAG + key).hexdigest()[:32]


def row_mac(key: bytes, row_hash_hex: str) -> str:
    return hmac.new(key, _ROW_MAC_TAG + bytes.fromhex(row_hash_hex), hashlib.sha256).hexdigest()


def head_mac(key: bytes, ledger_id: str, *, rows: int, rounds: int, head: str) -> str:
    message = (_HEAD_MAC_TAG + encode_value(ledger_id) + encode_value(rows)
               + encode_value(rounds) + bytes.fromhex(head))
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def load_key(path: str | os.PathLike[str]) -> bytes:
    """Read an HMAC key file: 64 or more hex digits (as ``odp ledger keygen`` writes), or at
    least 32 raw bytes."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise LedgerError(f"cannot read the ledger key file {path}: {exc}") from None
    text = raw.strip()
    try:
        key = bytes.fromhex(text.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        key = raw
    if len(key) < MIN_KEY_BYTES:
        raise LedgerError(f"the ledger key in {path} has {len(key)} bytes; at least "
                          f"{MIN_KEY_BYTES} are needed (make one with `odp ledger keygen`)")
    return key


def write_key(path: str | os.PathLike[str]) -> str:
    """Write a new random 32-byte HMAC key (hex) to ``path`` with mode 0600; refuse to
    overwrite.  Returns the key id."""
    key = os.urandom(MIN_KEY_BYTES)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise LedgerError(f"{path} already exists; not overwriting a key") from None
    except OSError as exc:
        raise LedgerError(f"cannot write {path}: {exc}") from None
    with os.fdopen(fd, "w") as fh:
        fh.write(key.hex() + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    return key_id(key)


# ---------------------------------------------------------------------------- verification
@dataclass
class ChainHead:
    """The verified end of a chain: how many rows, how many of them reserve a round, and the
    hash of the last row (the genesis hash for an empty ledger)."""

    rows: int
    rounds: int
    head: str

    def to_json(self) -> dict[str, Any]:
        return {"rows": self.rows, "rounds": self.rounds, "head": self.head}


class ChainVerifier:
    """Checks rows one at a time against the chain (incrementally: it remembers the last
    verified row).  Any break raises :class:`LedgerCorrupted` naming the row."""

    def __init__(self, genesis: Genesis, key: bytes | None = None, where: str = "ledger"):
        self.genesis = genesis
        self.key = key
        self.where = where
        self.state = ChainHead(0, 0, genesis.hash)

    def corrupted(self, seq: int | None, message: str) -> LedgerCorrupted:
        at = f" row {seq}" if seq is not None else ""
        return LedgerCorrupted(f"{self.where}{at}: {message}; the ledger refuses to charge "
                               "(the spent budget cannot be trusted)", row=seq)

    def next_hash(self, row: EventRow) -> str:
        """The hash the next row must carry (no state change)."""
        return row_hash(self.state.head, row)

    def append(self, row: EventRow) -> str:
        """Chain a row this process writes (no stored values to compare): advance and return
        its hash.  The caller computes the row's MAC, if any, from the hash."""
        state, seq = self.state, row.seq
        if seq != state.rows + 1:
            raise self.corrupted(seq, f"out of order (expected row {state.rows + 1})")
        digest = row_hash(state.head, row)
        self.state = ChainHead(seq, state.rounds + (row.kind == "reserve"), digest)
        return digest

    def check(self, row: EventRow, prev: str | None, stored: str | None,
              mac: str | None = None) -> str:
        """Verify one row (its stored ``prev`` link, ``stored`` hash and, with a key, its MAC);
        advance and return its hash."""
        expected_seq = self.state.rows + 1
        if row.seq != expected_seq:
            if row.seq > expected_seq:
                missing = (f"row {expected_seq} is missing" if row.seq == expected_seq + 1
                           else f"rows {expected_seq}..{row.seq - 1} are missing")
                raise self.corrupted(row.seq, f"{missing} (deleted?)")
            raise self.corrupted(row.seq, f"out of order (expected row {expected_seq})")
        if prev is not None and prev != self.state.head:
            raise self.corrupted(row.seq, "its link to the previous row does not match the "
                                          "previous row's hash (a row was deleted, inserted "
                                          "or edited before it)")
        digest = row_hash(self.state.head, row)
        if stored is not None and stored != digest:
            raise self.corrupted(row.seq, "its values do not match its hash (edited?)")
        if self.key is not None and (mac is None or not hmac.compare_digest(
                mac, row_mac(self.key, digest))):
            raise self.corrupted(row.seq, "its HMAC tag does not verify with the ledger key")
        self.state = ChainHead(row.seq, self.state.rounds + (row.kind == "reserve"), digest)
        return digest


def chain_of(genesis: Genesis, rows: Iterable[EventRow]) -> list[str]:
    """The hash of every row in order (no stored values to compare against)."""
    verifier = ChainVerifier(genesis)
    return [verifier.check(row, None, None) for row in rows]
