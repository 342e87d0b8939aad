"""`@record` classes: the generic keyword-only `__init__`, and the one generated for a class once it
has made `_SPECIALIZE_AFTER` instances (`model/record._specialize`), keep one contract: defaults,
fresh default factories, required fields, a TypeError for a wrong keyword, frozen instances; a
subclass or a class with its own `__init__` is never given its parent's generated one."""

from __future__ import annotations

import dataclasses

import pytest

from logparse.model import record as rec
from logparse.model.record import Record, record


def _classes() -> tuple[type, type, type]:
    @record
    class Base(Record):
        need: int
        name: str = "x"
        tags: list[str] = dataclasses.field(default_factory=list)

    @record
    class Child(Base):
        extra: float = 1.5

    @record
    class Custom(Record):
        a: int = 0

        def __init__(self, **kw: object) -> None:  # its own: never replaced
            kw.setdefault("a", 7)
            Record.__init__(self, **kw)

    return Base, Child, Custom


def _warm(cls: type, **kw: object) -> None:
    for _ in range(rec._SPECIALIZE_AFTER + 1):
        cls(**kw)


def test_a_class_made_often_gets_its_own_init_with_the_same_results() -> None:
    Base, Child, _ = _classes()
    before = Base(need=1)
    assert Base.__init__ is rec._GENERIC_INIT
    _warm(Base, need=1)
    assert Base.__init__ is not rec._GENERIC_INIT
    after = Base(need=1)
    assert after == before and repr(after) == repr(before)
    assert hash(Child(need=1, tags=())) == hash(Child(need=1, tags=()))  # type: ignore[arg-type]
    assert Base(need=2, name="y", tags=["t"]) == Base(need=2, name="y", tags=["t"])
    one, two = Base(need=1), Base(need=1)
    one.tags.append("a")
    assert two.tags == []  # a fresh list per instance, as the generic init gives
    with pytest.raises(TypeError):
        Base()  # a required field missing
    with pytest.raises(TypeError):
        Base(need=1, bogus=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        after.need = 3  # type: ignore[misc]
    assert dataclasses.replace(after, name="z").name == "z"
    # The subclass keeps the generic init until it is made often itself: its field too.
    assert Child.__init__ is rec._GENERIC_INIT
    assert Child(need=1).extra == 1.5 and Child(need=1, extra=2.0).extra == 2.0
    _warm(Child, need=1)
    assert Child(need=1, extra=3.0) == Child(need=1, extra=3.0) and Child(need=1).extra == 1.5


def test_a_class_with_its_own_init_keeps_it() -> None:
    _, _, Custom = _classes()
    _warm(Custom)
    assert Custom().a == 7 and Custom(a=1).a == 1


def _positional() -> type:
    @record(kw_only=False)
    class Point(Record):
        x: int
        y: int
        label: str = ""
        seen: list[int] = dataclasses.field(default_factory=list)

    return Point


@pytest.mark.parametrize("warm", [False, True], ids=["generic", "generated"])
def test_a_positional_record_takes_fields_by_position_or_keyword(warm: bool) -> None:
    point = _positional()
    if warm:
        _warm(point, x=0, y=0)
        assert point.__init__ is not rec._GENERIC_INIT  # the generated one
    a, b = point(1, 2), point(x=1, y=2)
    assert a == b and repr(a) == "Point(x=1, y=2, label='', seen=[])"
    assert point(1, 2, "p").label == "p" and point(1, y=2, label="q").label == "q"
    assert point(1, 2).seen is not point(1, 2).seen  # a fresh default each time
    with pytest.raises(TypeError):
        point(1)  # y missing
    with pytest.raises(TypeError):
        point(1, 2, "p", [], 5)  # too many
    with pytest.raises(TypeError):
        point(1, 2, x=3)  # x twice
    with pytest.raises(TypeError):
        point(1, 2, z=3)  # unknown
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.x = 5  # type: ignore[misc]
    assert not any(f.kw_only for f in dataclasses.fields(a))
    assert dataclasses.replace(a, y=9) == point(1, 9)


def test_the_positional_records_of_the_package_keep_the_dataclass_contract() -> None:
    import pickle

    from logparse.io.wrappers import Wrapper
    from logparse.model.events import Frame

    f = Frame("x.py", 3, "main")
    assert f == Frame(path="x.py", lineno=3, func="main") and hash(f) == hash(Frame("x.py", 3, "main"))
    assert pickle.loads(pickle.dumps(f)) == f and {f: 1}[Frame("x.py", 3, "main")] == 1
    w = Wrapper("docker", None, "web", None, None, None, None, None, "web")
    assert dataclasses.replace(w, ts="12:00").ts == "12:00" and w.container == "web"


def test_keyword_only_records_still_refuse_positions() -> None:
    base, _, _ = _classes()
    with pytest.raises(TypeError, match="keyword-only"):
        base(1)
    _warm(base, need=1)
    with pytest.raises(TypeError):
        base(1)


def test_a_positional_record_takes_no_required_field_after_a_default() -> None:
    with pytest.raises(TypeError, match="non-default argument 'y'"):
        @record(kw_only=False)
        class Bad(Record):
            x: int = 0
            y: int
