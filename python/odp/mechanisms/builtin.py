"""Which rounds odp's own mechanisms made: built-in identity read from the object, never from a
name.

A certificate reports a round's guarantee as *proved* (by the Lean theorem of its kind,
:mod:`odp.certs.mechanisms`) only when the round's ledger record carries the key
:data:`BUILTIN_KEY`.  The accountant writes that key, and only in :meth:`odp.Accountant.run`
(and :class:`odp.mechanisms.svt.SVTSession`), when :func:`builtin_key` recognises the
mechanism object as one of odp's built-in mechanisms, constructed by odp with its own
parameters:

* its type is *exactly* a registered class (:func:`register`): a subclass is never built-in,
  whatever it overrides, and a user's :class:`~odp.mechanisms.Mechanism` whose ``name`` is
  ``"laplace"`` is not either;
* no method of the class or of its bases was replaced since odp was imported (the class
  dictionaries are compared, entry by entry, with a copy taken at import);
* the instance's attributes are the very objects its constructor set (:func:`seal` takes a copy
  of them at the end of ``__init__``; only the ``name`` label may change): an instance whose
  ``release``, noise scale, window or guarantee was reassigned afterwards is not built-in;
* its built-in parts (M_toy's Laplace mechanism, ``M_IQR``'s log-bin PTR function, the ERM of
  test-and-release, DP-SGD's model) are themselves exactly registered, untouched objects.  A
  :class:`~odp.mechanisms.ptr.PTRMechanism` is built-in only around odp's
  :class:`~odp.mechanisms.ptr.mechanism.LogBinIQR`; an iterative mechanism only when it is
  :class:`~odp.mechanisms.NoisyGradientDescent` or :class:`~odp.mechanisms.DPSGD` with one of
  odp's own δ rules and composition theorems
  (:func:`odp.mechanisms.iterative.trusted_rule`); a user's
  :class:`~odp.mechanisms.IterativeMechanism` and its ``StepSpec``\\ s, and a user's
  :class:`~odp.mechanisms.ptr.PTRFunction`, are never built-in.

Everything else is recorded as the caller declared it: a DP guarantee (``mech dp``) or an ODP
guarantee (``mech declared``).  ``charge()``, ``reserve()`` and their batch forms refuse
``params`` carrying :data:`BUILTIN_KEY` (:class:`~odp.errors.InvalidParameter`), so a label
passed as ``mechanism="laplace"`` claims nothing.

**Limits (said, not hidden).**  This is as far as Python allows inside one process: code
running in the same interpreter can still replace module-level functions (the samplers), the
accountant itself, or write the ledger file, and a certificate — a record of what the
accountant was told — cannot show which code made a release.  ``odp verify`` says so.
"""

from __future__ import annotations

import itertools
import operator
import types
import weakref
from dataclasses import dataclass
from typing import Any

__all__ = ["BUILTIN_KEY", "register", "trust_class", "seal", "intact", "builtin_key",
           "class_intact"]

#: The ``params`` key under which the accountant records that odp's own mechanism made a round;
#: its value is the key of :data:`odp.certs.mechanisms.RECORDED` that reads the round.
BUILTIN_KEY = "odp_builtin"


@dataclass(frozen=True)
class _Entry:
    key: str | None  #: the RECORDED key of its rounds (None: a part, never run itself)
    parts: tuple[tuple[str, tuple[type, ...]], ...]  #: attribute -> the exact types allowed
    fields: tuple[str, ...] | None  #: the attributes sealed (None: every one but ``name``)


_REGISTRY: dict[type, _Entry] = {}
#: class -> its ``__dict__``'s names and values, copied when it was registered (and each base's)
_CLASSES: dict[type, tuple[list[str], list[Any]]] = {}
#: object -> its attributes' names and values, copied at the end of its constructor (a method of
#: the object itself kept as its function, at the indices listed last)
_SEALS: "weakref.WeakKeyDictionary[Any, tuple[list[str], list[Any], list[int]]]" = (
    weakref.WeakKeyDictionary())
_MISSING = object()


@dataclass(frozen=True)
class _Bound:
    """A method of the sealed object itself (kept as its function: the seal must not hold the
    object alive)."""

    func: Any


#: Class-dictionary entries that Python itself adds later and that change no behaviour: the
#: cache ``copyreg`` writes on the first copy or pickle, the empty annotations dict that reading
#: ``__annotations__`` creates.
_CACHES = frozenset({"__slotnames__", "__annotations__"})


def _entries(c: type) -> tuple[list[str], list[Any]]:
    items = [(k, v) for k, v in c.__dict__.items() if k not in _CACHES]
    return [k for k, _ in items], [v for _, v in items]


def _snapshot_class(cls: type) -> None:
    for c in cls.__mro__[:-1]:  # every base but object
        if c not in _CLASSES:
            _CLASSES[c] = _entries(c)


def class_intact(cls: type) -> bool:
    """No entry of ``cls``'s dictionary, or of a base's, was added, removed or replaced since
    the class was registered (the same names in the same order, each holding the very same
    object; Python's own caches, :data:`_CACHES`, aside)."""
    for c in cls.__mro__[:-1]:
        snap = _CLASSES.get(c)
        if snap is None:
            return False
        names, values = snap
        current = c.__dict__
        if list(current) == names and all(map(operator.is_, current.values(), values)):
            continue  # the usual case, at C speed
        now_names, now_values = _entries(c)
        if now_names != names or not all(map(operator.is_, now_values, values)):
            return False
    return True


def register(cls: type, key: str | None, *, parts: dict[str, type | tuple[type, ...]] | None = None,
             fields: tuple[str, ...] | None = None) -> None:
    """Make ``cls`` (exactly; not its subclasses) one of odp's built-in classes whose rounds
    are recorded under ``key``; ``parts``: attributes that must hold untouched objects of
    exactly these built-in types; ``fields``: the attributes :func:`seal` keeps (default: all
    but the ``name`` label).  Called once, by the module defining ``cls``."""
    wanted = tuple((attr, typ if isinstance(typ, tuple) else (typ,))
                   for attr, typ in (parts or {}).items())
    _REGISTRY[cls] = _Entry(key, wanted, fields)
    _snapshot_class(cls)


def trust_class(cls: type) -> None:
    """Snapshot ``cls`` (and its bases) for :func:`class_intact`: a helper class whose code a
    built-in mechanism's guarantee depends on (a composition theorem, a δ rule)."""
    _snapshot_class(cls)


def _frozen(obj: Any, value: Any) -> Any:
    if isinstance(value, types.MethodType) and value.__self__ is obj:
        return _Bound(value.__func__)
    return value


def seal(obj: Any, cls: type, *, ok: bool = True) -> None:
    """Called at the end of ``cls.__init__``: if ``obj`` is exactly a ``cls`` (not a subclass),
    ``cls`` is registered and untouched, and ``ok`` (the constructor's own check of what it was
    given, e.g. :func:`odp.mechanisms.iterative.trusted_rule`), remember its attributes as the
    constructor set them."""
    entry = _REGISTRY.get(cls)
    if type(obj) is not cls or entry is None or not ok or not class_intact(cls):
        return
    attrs = vars(obj)
    names = [k for k in attrs if k != "name"] if entry.fields is None else [
        k for k in entry.fields if k in attrs]
    values = [_frozen(obj, attrs[k]) for k in names]
    bound = [i for i, v in enumerate(values) if isinstance(v, _Bound)]
    _SEALS[obj] = (names, values, bound)


def intact(obj: Any) -> bool:
    """``obj`` is exactly a registered class, sealed, and neither it, its class nor its parts
    were changed since (module docstring)."""
    entry = _REGISTRY.get(type(obj))
    if entry is None or not class_intact(type(obj)):
        return False
    try:
        sealed = _SEALS.get(obj)
    except TypeError:  # not weakly referenceable: never sealed
        return False
    if sealed is None:
        return False
    names, values, bound = sealed
    attrs = vars(obj)
    if entry.fields is None and [k for k in attrs if k != "name"] != names:
        return False
    current = list(map(attrs.get, names, itertools.repeat(_MISSING)))
    for i in bound:  # a method of the object itself: the same function, bound to it
        method, func = current[i], values[i].func
        if not (isinstance(method, types.MethodType) and method.__self__ is obj
                and method.__func__ is func):
            return False
        current[i] = values[i]
    if not all(map(operator.is_, current, values)):
        return False
    for attr, types_ in entry.parts:
        part = attrs.get(attr)
        if type(part) not in types_ or not intact(part):
            return False
    return True


def builtin_key(obj: Any) -> str | None:
    """The ``RECORDED`` key to record for a round that ``obj`` makes, if ``obj`` is one of
    odp's built-in mechanisms, untouched (:func:`intact`); else ``None`` (the round is
    recorded as declared)."""
    entry = _REGISTRY.get(type(obj))
    if entry is None or entry.key is None or not intact(obj):
        return None
    return entry.key
