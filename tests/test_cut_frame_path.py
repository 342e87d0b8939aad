"""A frame cut at the end of an excerpt is named by the tail of its path in whole components
(e-033 was reported as `space/sglang/…`, half of `/sgl-workspace`)."""

from __future__ import annotations

from logparse.model.events import Frame, Traceback
from logparse.rules.frames import first_sglang_frame


def _tb(path: str) -> Traceback:
    return Traceback(line=1, frames=(Frame(path, None, None),))


def test_long_cut_path_keeps_whole_components() -> None:
    where = first_sglang_frame(_tb("/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.p"))
    assert where == "…/sglang/python/sglang/srt/model_executor/model_runner.p (cut)"


def test_near_miss_short_cut_path_is_kept_whole() -> None:
    assert first_sglang_frame(_tb("/home/ub")) == "/home/ub (cut)"
