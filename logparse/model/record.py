"""`@record`: frozen, slotted, keyword-only data classes that are cheap to define.

The event vocabulary has ~60 classes. `@dataclass(frozen=True, slots=True, kw_only=True)` builds
each one by generating and compiling five methods — measured ~2 ms a class, ~40 % of the start-up
of `logdiag analyze` on a short log. `@record` gives the same contract (keyword-only `__init__`
with defaults and `field(default_factory=...)`, immutable instances, `__slots__`, value equality,
hashing, a readable repr) with shared generic methods and no code generation. It also fills in
`__dataclass_fields__`, so `dataclasses.fields()`, `dataclasses.replace()` and
`dataclasses.is_dataclass()` keep working on records. `@record(kw_only=False)` also takes the
fields by position, in their order: the contract of `@dataclass(frozen=True, slots=True)`, which
cost ~1 ms a class at import (its generated methods are compiled).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar, dataclass_transform

__all__ = ["Record", "record"]

T = TypeVar("T", bound=type)
_MISSING = dataclasses.MISSING


class Record:
    """Base of record classes: a generic init (keyword-only unless `@record(kw_only=False)`),
    frozen attributes, value semantics."""

    __slots__ = ()
    # (name, default or _MISSING, default factory or None) of every field, base classes first.
    __record_spec__: ClassVar[tuple[tuple[str, Any, Callable[[], Any] | None], ...]] = ()
    __record_names__: ClassVar[tuple[str, ...]] = ()
    # `@record(kw_only=False)`: the fields may also be given by position, in their order.
    __record_positional__: ClassVar[bool] = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        if args:
            kwargs = _by_position(cls, args, kwargs)
        made = _MADE[cls] = _MADE.get(cls, 0) + 1
        if made == _SPECIALIZE_AFTER and cls.__dict__.get("__init__") is _GENERIC_INIT:
            _specialize(cls)
        setter = object.__setattr__
        for name, default, factory in self.__record_spec__:
            if name in kwargs:
                value = kwargs.pop(name)
            elif factory is not None:
                value = factory()
            elif default is not _MISSING:
                value = default
            else:
                raise TypeError(f"{type(self).__name__}() missing required keyword argument: '{name}'")
            setter(self, name, value)
        if kwargs:
            raise TypeError(f"{type(self).__name__}() got unexpected keyword arguments: {', '.join(sorted(kwargs))}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field '{name}'")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field '{name}'")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, n) for n in self.__record_names__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__record_names__)
        return f"{type(self).__name__}({inner})"

    def __getstate__(self) -> tuple[Any, ...]:
        return self._values()

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(self.__record_names__, state, strict=True):
            object.__setattr__(self, name, value)

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuild through __new__ + __setstate__ (pickling for worker processes).
        return (_rebuild, (type(self), self._values()))


def _by_position(cls: type[Record], args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments that positional `args` stand for (a positional record's fields in
    order); a TypeError where Python's own signature binding would raise one."""
    names = cls.__record_names__
    if not cls.__record_positional__:
        raise TypeError(f"{cls.__name__}() takes no positional arguments (its fields are keyword-only)")
    if len(args) > len(names):
        raise TypeError(f"{cls.__name__}() takes {len(names)} positional arguments but {len(args)} were given")
    out = dict(zip(names, args))
    for name in kwargs:
        if name in out:
            raise TypeError(f"{cls.__name__}() got multiple values for argument '{name}'")
    out.update(kwargs)
    return out


_GENERIC_INIT = Record.__init__
# Instances made through the generic __init__, per class; at _SPECIALIZE_AFTER the class gets an
# `__init__` of its own, generated from its fields (what @dataclass does for every class at import,
# ~2 ms each): the generic one costs ~4.5 µs an event (a loop over every field with dict pops), the
# generated one about a third of that. Only classes made often pay the ~0.3 ms to generate it, so a
# short log's start-up does not.
_MADE: dict[type, int] = {}
_SPECIALIZE_AFTER = 256
_RESERVED = frozenset({"self", "_set", "_MISSING"})


def _specialize(cls: type[Record]) -> None:
    """Give `cls` a generated keyword-only `__init__` with the same contract as the generic one
    (defaults, default factories, required fields; a TypeError for a missing or unknown one)."""
    import keyword

    spec = cls.__record_spec__
    names = [name for name, _, _ in spec]
    if any(not n.isidentifier() or keyword.iskeyword(n) or n in _RESERVED or n.startswith(("_d", "_f"))
           for n in names) or len(set(names)) != len(names):
        return  # (a name the generated code could not take as a parameter: keep the generic init)
    ns: dict[str, Any] = {"_set": object.__setattr__, "_MISSING": _MISSING}
    params: list[str] = []
    body: list[str] = []
    for i, (name, default, factory) in enumerate(spec):
        if factory is not None:
            ns[f"_f{i}"] = factory
            params.append(f"{name}=_MISSING")
            body.append(f"    _set(self, {name!r}, _f{i}() if {name} is _MISSING else {name})")
            continue
        if default is not _MISSING:
            ns[f"_d{i}"] = default
            params.append(f"{name}=_d{i}")
        else:
            params.append(name)
        body.append(f"    _set(self, {name!r}, {name})")
    star = "" if cls.__record_positional__ else "*, "
    head = f"def __init__(self, {star}{', '.join(params)}) -> None:\n" if params else "def __init__(self) -> None:\n"
    exec(head + ("\n".join(body) or "    pass") + "\n", ns)  # noqa: S102 (our own field names only)
    init = ns["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    type.__setattr__(cls, "__init__", init)


def _rebuild(cls: type[Record], values: tuple[Any, ...]) -> Record:
    obj = object.__new__(cls)
    obj.__setstate__(values)
    return obj


_PARAMS = dataclasses._DataclassParams(  # type: ignore[attr-defined]
    init=True, repr=True, eq=True, order=False, unsafe_hash=False, frozen=True
)


@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(dataclasses.field,))
def record(cls: Any = None, /, *, kw_only: bool = True) -> Any:
    """Make `cls` (a subclass of Record) a frozen, slotted, keyword-only record class; with
    `@record(kw_only=False)` its fields may be given by position too, in their order (what
    `@dataclass(frozen=True, slots=True)` gives, without compiling its generated methods)."""
    if cls is None:
        return lambda c: _make(c, kw_only)
    return _make(cls, kw_only)


def _make(cls: T, kw_only: bool) -> T:
    own = inspect.get_annotations(cls)
    spec = list(getattr(cls, "__record_spec__", ()))
    known = {name for name, _, _ in spec}
    own_names: list[str] = []
    for name, annotation in own.items():
        if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
            continue
        value = cls.__dict__.get(name, _MISSING)
        default, factory = _MISSING, None
        if isinstance(value, dataclasses.Field):
            default, factory = value.default, (None if value.default_factory is _MISSING else value.default_factory)
        elif value is not _MISSING:
            default = value
        entry = (name, default, factory)
        if name in known:
            spec = [entry if n == name else (n, d, f) for n, d, f in spec]
        else:
            spec.append(entry)
            own_names.append(name)
    namespace = {k: v for k, v in cls.__dict__.items() if k not in own_names and k not in ("__dict__", "__weakref__")}
    namespace["__slots__"] = tuple(own_names)
    # Its own entry, so that specializing this class's __init__ (`_specialize`) never reaches a
    # subclass, which inherits the entry only through its own.
    if "__init__" not in namespace and getattr(cls, "__init__", None) is _GENERIC_INIT:
        namespace["__init__"] = _GENERIC_INIT
    new: Any = type(cls)(cls.__name__, cls.__bases__, namespace)
    new.__qualname__ = cls.__qualname__
    new.__record_spec__ = tuple(spec)
    new.__record_names__ = tuple(n for n, _, _ in spec)
    new.__record_positional__ = not kw_only
    if not kw_only:
        _check_order(new)
    new.__dataclass_fields__ = _LazyFields(new, own)
    new.__dataclass_params__ = _PARAMS
    return new  # type: ignore[no-any-return]


def _check_order(cls: type[Record]) -> None:
    """A positional record, like a dataclass, takes no required field after one with a default."""
    seen_default = False
    for name, default, factory in cls.__record_spec__:
        if default is not _MISSING or factory is not None:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument '{name}' follows default argument in {cls.__name__}")


class _LazyFields:
    """A record class's `__dataclass_fields__`, made on the first read (`dataclasses.fields`,
    `replace`, `is_dataclass`, `asdict` all read it with getattr) and then stored on the class in
    its place: building a `dataclasses.Field` per field of every event class at import was a third
    of `@record`'s cost, and a short run reads the fields of few classes."""

    def __init__(self, owner: type, annotations: dict[str, Any]) -> None:
        self._owner = owner
        self._annotations = annotations

    def __get__(self, obj: object, objtype: type | None = None) -> dict[str, dataclasses.Field[Any]]:
        fields: dict[str, dataclasses.Field[Any]] = {}
        for name, default, factory in self._owner.__record_spec__:  # type: ignore[attr-defined]
            f: dataclasses.Field[Any] = dataclasses.field(default=default, default_factory=factory or _MISSING)  # type: ignore[call-overload, arg-type]
            f.name = name
            f.type = self._annotations.get(name, Any)
            f._field_type = dataclasses._FIELD  # type: ignore[attr-defined]
            f.kw_only = not self._owner.__record_positional__  # type: ignore[attr-defined]
            fields[name] = f
        # On the owner, not on a subclass the read came through: the fields are the owner's.
        type.__setattr__(self._owner, "__dataclass_fields__", fields)
        return fields
