"""Capture tools' prefixes the reader strips (issue 9), checked like tests/test_paste_invariance:
a corpus log under each shape must analyse like the log itself. The shapes are the ones
test_paste_invariance does not hold: journald's ISO output formats, a stamp followed by a tab
or written with a space and its zone, and `kubectl logs --prefix`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.test_paste_invariance import _baseline, _docker_wrapped, _every, _log_lines, _summary

_T0 = datetime(2025, 7, 25, 7, 53, 8, 217502)


def _at(i: int) -> datetime:
    return _T0 + timedelta(microseconds=1733 * i)


SHAPES: dict[str, Callable[[int], str]] = {
    # `journalctl -o short-iso` and `-o short-iso-precise`
    "journald-short-iso": lambda i: _at(i).strftime("%Y-%m-%dT%H:%M:%S") + "+0800 gpu-node-3 python3[4711]: ",
    "journald-short-iso-precise": lambda i: _at(i).strftime("%Y-%m-%dT%H:%M:%S.%f") + "+08:00 gpu-node-3 python3[4711]: ",
    # a log viewer's export: stamp, offset, tab
    "iso-tab": lambda i: _at(i).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "+08:00\t",
    # `date --rfc-3339=ns`-style stamps from a shell loop (`while read l; do echo "$(date …) $l"`)
    "rfc3339-spaced": lambda i: _at(i).strftime("%Y-%m-%d %H:%M:%S.%f") + "000+00:00 ",
    # `kubectl logs --prefix`, with and without `--timestamps`
    "kubectl-prefix": lambda i: "[pod/sglang-7cfd7bf68f-nk5kr/sglang] ",
    "kubectl-prefix-timestamps": lambda i: "[pod/sglang-0/sglang] " + _at(i).strftime("%Y-%m-%dT%H:%M:%S.%f") + "123Z ",
}

# Every 8th corpus case (shared + dev), each under every shape.
_SAMPLE = [key for i, key in enumerate(sorted(_every())) if i % 8 == 0]


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("key", _SAMPLE)
def test_stamped_log_analyses_like_the_log(shape: str, key: str, tmp_path: Path) -> None:
    case = _every()[key]
    lines = _log_lines(case)
    if _docker_wrapped(lines):
        pytest.skip("a docker-compose capture is the outermost wrapper")
    stamp = SHAPES[shape]
    path = tmp_path / f"{case.name}.{shape}.log"
    text = "".join(stamp(i) + line + "\n" for i, line in enumerate(lines))
    path.write_bytes(text.encode("utf-8", errors="surrogateescape"))
    base, got = _baseline(case.log), _summary(path)
    assert (got.root, got.fired, got.outcome) == (base.root, base.fired, base.outcome)
    assert abs(got.unrecognized - base.unrecognized) <= max(1, 0.02 * base.total)
