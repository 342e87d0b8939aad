"""`render.json.pretty` writes exactly what `json.dumps(indent=2, ensure_ascii=False,
allow_nan=False)` writes (analyze's JSON must not change by a byte), and fails where it fails."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logparse.render.json import pretty

_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=40),
)
_KEYS = st.one_of(st.text(max_size=12), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                  st.booleans(), st.none())
_DOCS = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=6), st.tuples(inner, inner),
                            st.dictionaries(_KEYS, inner, max_size=6)),
    max_leaves=60,
)


def _stdlib(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)


@settings(max_examples=400, deadline=None)
@given(_DOCS)
def test_same_text_as_the_stdlib(doc: Any) -> None:
    assert pretty(doc) == _stdlib(doc)


def test_same_text_on_the_shapes_of_an_analysis() -> None:
    doc = {"files": [{"path": "a.log", "lines": {"total": 3}, "findings": [], "errors": [{}],
                      "data": {"ratio": 0.1, "ranks": ["TP0", "TP1"], "nested": [[], [{}], [1, [2, [3]]]]},
                      "text": "quote \" backslash \\ newline \n tab \t control \x01 é ☃ \ud800"}],
            "redactions": {}}
    assert pretty(doc) == _stdlib(doc)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, [1, math.nan], {"x": math.inf}])
def test_out_of_range_floats_are_refused_like_the_stdlib(bad: Any) -> None:
    with pytest.raises(ValueError):
        _stdlib(bad)
    with pytest.raises(ValueError):
        pretty(bad)


@pytest.mark.parametrize("bad", [object(), {"x": {1, 2}}, {(1, 2): 3}, b"bytes"])
def test_what_json_cannot_hold_is_refused_like_the_stdlib(bad: Any) -> None:
    with pytest.raises(TypeError):
        _stdlib(bad)
    with pytest.raises(TypeError):
        pretty(bad)
