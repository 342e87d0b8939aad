"""A record that another program's Python logger wrote (its `%(name)s` in the line's logging
format) is that program's, whatever its message says: coverage counts it as `foreign-logger` by
the wrapper's logger name, not by knowing the message. SGLang's own loggers (a custom logging
config) and anonymous names (`root`, `__main__`, `stdout`) tell nothing, so their unknown messages
stay unknown (`io.wrappers.foreign_logger`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.io.wrappers import Unwrapper, foreign_logger
from logparse.parsing.pipeline import parse_file

FOREIGN = [
    # modelscope (SGLANG_USE_MODELSCOPE downloads) in the logging cookbook's `asctime - name - level`
    # format, real lines from public issue threads (InternLM/lmdeploy#4512 and others)
    "2026-04-09 01:35:32,628 - modelscope - INFO - Target directory already exists, skipping creation.",
    "2025-06-06 23:06:08,245 - modelscope - INFO - Download model 'Qwen/Qwen2.5-3B-Instruct' successfully.",
    "2025-12-28 21:54:22,412 - modelscope - INFO - Got 10 files, start to download ...",
    # lmdeploy's logger, whose message holds its own `file.py:22 - ` location (InternLM/lmdeploy#4512)
    "2026-04-09 01:35:48,424 - lmdeploy - WARNING - transformers.py:22 - LMDeploy requires transformers version:"
    " [4.33.0 ~ 5.3.0], but found version: 5.5.0",
    # `asctime - level - name: message` with a dotted logger name
    "2025-02-26 15:44:36,973 - INFO - billing.sync: processed batch 950467 in 0.997s",
]

NOT_FOREIGN = [
    # SGLang's own logger under a custom logging format: an unknown message of SGLang's stays a gap
    "2025-12-04 20:35:53,001 - sglang.srt.managers.scheduler - INFO - Some message no release printed 42",
    # a script run as __main__ (`python -m sglang.launch_server` is one) and the root logger
    "2025-12-04 20:35:53,001 - __main__ - INFO - A message of whoever ran as the main module",
    "2025-12-04 20:35:53,001 - root - WARNING - A message of whoever used the root logger",
    # no logger name at all
    "2024-11-02 10:11:12,345 - WARNING - Retrying request to /v1/chat/completions in 0.8 seconds",
]


def _coverage(tmp_path: Path, line: str) -> tuple[int, dict[str, int]]:
    path = tmp_path / "run.log"
    path.write_text(line + "\n")
    cov = parse_file(str(path)).coverage
    return cov.unparsed, dict(cov.classified)


@pytest.mark.parametrize("line", FOREIGN)
def test_another_programs_logger_is_a_foreign_record(line: str, tmp_path: Path) -> None:
    unparsed, classified = _coverage(tmp_path, line)
    assert (unparsed, classified) == (0, {"foreign-logger": 1})


@pytest.mark.parametrize("line", NOT_FOREIGN)
def test_sglangs_own_and_anonymous_loggers_stay_unknown(line: str, tmp_path: Path) -> None:
    unparsed, classified = _coverage(tmp_path, line)
    assert (unparsed, classified) == (1, {})


def test_a_custom_formats_location_is_not_a_logger_name() -> None:
    # SGLang's custom-logging format carries `file.py:NN`, not a logger: SGLang's own file names there.
    w, rest = Unwrapper()("2025-12-04 20:35:53 INFO 151972 [scheduler_metrics_mixin.py:287] Some new message")
    assert w is not None and w.logger == "scheduler_metrics_mixin.py:287"
    assert not foreign_logger(w)
    w, _ = Unwrapper()("2026-04-09 01:35:32,628 - modelscope - INFO - Target directory already exists")
    assert w is not None and foreign_logger(w)


def test_an_sglang_record_inside_a_foreign_envelope_is_still_parsed(tmp_path: Path) -> None:
    # The wrapper only decides for lines the grammar did not parse: SGLang's record inside is read.
    path = tmp_path / "run.log"
    path.write_text("2025-02-26 15:44:36,973 - INFO - flashinfer.jit: Prebuilt kernels not found, using JIT backend\n")
    cov = parse_file(str(path)).coverage
    # (flashinfer's own message: its kind comes from the message, the envelope only fills a gap)
    assert cov.unparsed == 0 and dict(cov.classified) == {"library-source": 1}


TORCH_CPP = [
    # torch's C++ logging (c10d, glog style): real lines from public reports, messages no rule reads
    "[rank10]:[E130 18:11:34.707542570 ProcessGroupGloo.cpp:143] Gloo connectFullMesh failed with "
    "[../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",
    "[rank0]:[W128 08:52:45.414542959 ProcessGroupNCCL.cpp:1524] Warning: WARNING: destroy_process_group() was not "
    "called before program exit, which can leak resources. For more info, please see "
    "https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())",
]


@pytest.mark.parametrize("line", TORCH_CPP)
def test_an_unknown_message_in_torchs_cpp_envelope_is_torchs_record(line: str, tmp_path: Path) -> None:
    unparsed, classified = _coverage(tmp_path, line)
    assert (unparsed, classified) == (0, {"foreign-logger": 1})


def test_an_unknown_message_in_sglangs_envelope_stays_unknown(tmp_path: Path) -> None:
    unparsed, classified = _coverage(tmp_path, "[2025-07-12 10:11:12 TP0] A message of a release not read yet 7")
    assert (unparsed, classified) == (1, {})
