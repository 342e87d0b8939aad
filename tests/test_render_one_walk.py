"""Output documents are walked once: the sanitizer's JSON-safe copy (`Redactor.json_safe`) does what
`render.summary.clean` does (NaN and infinities → None, tuples → lists, keys → str) on its way, so
`analyze`'s JSON and text outputs no longer clean the whole summary and then redact it."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from logparse.render import summary
from logparse.render.redact import MASK
from logparse.render.sanitize import Sanitizer

FIXTURES = sorted((Path(__file__).parents[1] / "fixtures" / "logs").glob("*.log"))


class _Str(str):
    pass


DOCS: list[Any] = [
    {"a": math.nan, "b": math.inf, "c": -math.inf, "d": 1.5, "e": (1, 2.0, math.nan), 3: "x", 2.5: None, None: 1},
    {"nested": [{"api_key": math.nan}, {"api_key": 0.0}, {"hf_token": "hf_abcdefghijklmnopqrstu"}], True: (math.inf,)},
    {"np": np.float64("nan"), "np2": np.float64(2.5), "sub": _Str("Bearer QwXsecretTokenValue"), _Str("k"): [math.nan]},
    ["--api-key", "QwXvalue", math.nan, ("a", "b")],
    (math.nan, {"x": {"y": [math.inf, {1: 2}]}}),
]


@pytest.mark.parametrize("redact", [True, False])
@pytest.mark.parametrize("doc", DOCS)
def test_the_json_safe_walk_equals_clean_then_sanitize(doc: Any, redact: bool) -> None:
    two = Sanitizer(redact)
    expected = two.data(summary.clean(doc))
    one = Sanitizer(redact)
    one.json_safe = True
    got = one.data(doc)
    assert repr(got) == repr(expected)  # repr: NaN would make == fail, and key types show
    assert one.summary() == two.summary()


def test_a_secret_named_key_holding_nan_is_not_masked() -> None:
    s = Sanitizer(True)
    s.json_safe = True
    assert s.data({"api_key": math.nan, "token": 1.0}) == {"api_key": None, "token": MASK}


def test_analyze_outputs_do_not_clean_the_summary_separately(monkeypatch: pytest.MonkeyPatch) -> None:
    from logparse.engine.core import analyze
    from logparse.render.json import render
    from logparse.render.text import render as render_text

    analyses = [analyze(str(p)) for p in FIXTURES]
    expected = [render([a]) for a in analyses], [render_text([a]) for a in analyses]
    calls = 0
    real = summary.clean

    def counting(value: Any) -> Any:
        nonlocal calls
        calls += 1
        return real(value)

    monkeypatch.setattr(summary, "clean", counting)
    got = [render([a]) for a in analyses], [render_text([a]) for a in analyses]
    assert calls == 0
    assert got == expected
