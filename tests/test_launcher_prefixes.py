"""Launcher prefixes on every line (issue 9): Open MPI's `--tag-output` / `--timestamp-output`
tags and a launcher's `[date time] [prog@<node,rank>]:` tag, stripped like any capture tool's.

Lines are quoted from public threads: fixtures/corpus/dev/f-012 (sgl-project/sglang#3065, mpirun
with timestamps), fixtures/corpus/dev/f-042 (sgl-project/sglang#14691, the `/bin/sh@<0,0>` tag);
the bare `[1,0]<stderr>:` tag is Open MPI's form without `--timestamp-output` (as pasted in
public tracebacks such as `[1,0]<stderr>:Traceback (most recent call last):`); Slurm's `srun
--label` task number (`0: `, right-aligned as ` 3: ` among ten or more tasks) from
fixtures/corpus/dev/q-016 (every line of an RL weight-update failure under srun).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.io.wrappers import Unwrapper
from logparse.model.events import Traceback
from logparse.parsing.pipeline import parse_file
from tests.conftest import FIXTURES

F012 = "Thu Jan 23 11:55:50 2025[1,1]<stderr>:    scheduler.event_loop_overlap()"
F042 = ('[2025-12-08 15:20:22] [/bin/sh@<0,0>]:   File "/sgl-workspace/sglang/python/sglang/srt/'
        'layers/attention/flashmla_backend.py", line 410, in forward_extend')

WRAPPED = [
    (F012, "open-mpi", "mpi:1,1", "2025-01-23 11:55:50", "    scheduler.event_loop_overlap()"),
    # the same line cut right after the tag (f-012's last line)
    ("Thu Jan 23 11:55:50 2025[1,1]<stderr>", "open-mpi", "mpi:1,1", "2025-01-23 11:55:50", ""),
    ("[1,0]<stderr>:Traceback (most recent call last):", "open-mpi", "mpi:1,0", None,
     "Traceback (most recent call last):"),
    # a CI's ISO stamp around Open MPI's tag
    ("2026-08-03T09:47:01Z [1,0]<stdout>:[2025-01-23 11:55:50 TP1] Load weight begin. avail mem=78.31 GB",
     "open-mpi", "mpi:1,0", "2026-08-03 09:47:01",
     "[2025-01-23 11:55:50 TP1] Load weight begin. avail mem=78.31 GB"),
    ("0: [2025-03-05 03:55:55 TP0] Scheduler hit an exception: Traceback (most recent call last):", "srun-label",
     "srun:0", None, "[2025-03-05 03:55:55 TP0] Scheduler hit an exception: Traceback (most recent call last):"),
    ('0:   File "/usr/local/lib/python3.10/dist-packages/torch/distributed/c10d_logger.py", line 83, in wrapper',
     "srun-label", "srun:0", None,
     '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/c10d_logger.py", line 83, in wrapper'),
    (" 3: [rank3]:[W305 03:55:35.242042106 socket.cpp:462] [c10d]", "srun-label", "srun:3", None,
     "[rank3]:[W305 03:55:35.242042106 socket.cpp:462] [c10d]"),
    ("12: torch.distributed.DistBackendError: NCCL error", "srun-label", "srun:12", None,
     "torch.distributed.DistBackendError: NCCL error"),
    (F042, "launcher-tag", "tag:/bin/sh@0,0", "2025-12-08 15:20:22",
     '  File "/sgl-workspace/sglang/python/sglang/srt/layers/attention/flashmla_backend.py", '
     "line 410, in forward_extend"),
]


@pytest.mark.parametrize(("line", "kind", "stream", "ts", "rest"), WRAPPED)
def test_launcher_tags_are_stripped(line: str, kind: str, stream: str, ts: str | None, rest: str) -> None:
    w, got = Unwrapper()(line)
    assert w is not None and (w.kind, w.stream, w.ts) == (kind, stream, ts)
    assert got == rest


NOT_WRAPPED = [
    # SGLang's own envelopes, untagged and tagged, whose message starts with a bracket
    "[2025-12-08 15:20:22] [Rank 0] HiCacheHF3FS Client Initializing: file_path=/x.bin",
    "[2025-12-25 09:59:20 TP0] [Rank 0] HiCacheHF3FS Client Initializing: file_path=/x.bin",
    # a message that names a tag-like text but is not one
    "[2025-12-08 15:20:22] [worker@host]: <stderr> was closed",
    "[12:00:01] [1,0] done",
    "Thu Jan 23 11:55:50 2025 [1,1] <stderr>: spaced, not Open MPI's glued tag",
    # digits and a colon that are no task label: a clock, a zero-padded or signed number, a
    # label with nothing after it, a dict member
    "12:30:45 started",
    "03: not a task id",
    "-1: negative",
    "7: ",
    "1:2",
]


@pytest.mark.parametrize("line", NOT_WRAPPED)
def test_lookalikes_are_left_alone(line: str) -> None:
    w, got = Unwrapper()(line)
    assert w is None and got == line


def _parse(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    log = tmp_path / "x.log"
    log.write_text(text, encoding="utf-8")
    return parse_file(str(log))


def test_open_mpi_tagged_scheduler_traceback_is_one_record(tmp_path: Path) -> None:
    # f-012's frames, completed with a header and an exception line, under the mpirun tag.
    tag = "Thu Jan 23 11:55:50 2025[1,1]<stderr>:"
    body = [
        "[2025-01-23 11:55:50 TP1] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 1816, in run_scheduler_process',
        "    scheduler.event_loop_overlap()",
        '  File "/usr/local/lib/python3.10/dist-packages/torch/utils/_contextlib.py", line 116, in decorate_context',
        "    return func(*args, **kwargs)",
        '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 489, in event_loop_overlap',
        "    result = self.run_batch(batch)",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
    ]
    parsed = _parse(tmp_path, "".join(tag + x + "\n" for x in body))
    (tb,) = parsed.of(Traceback)
    assert tb.exc_type == "RuntimeError" and tb.rank == "TP1"
    assert [f.func for f in tb.frames][-1] == "event_loop_overlap"
    assert parsed.coverage.unparsed == 0


def test_dev_cases_with_launcher_tags_are_fully_read() -> None:
    for name in ("f-012", "f-042", "q-016"):
        parsed = parse_file(str(FIXTURES / "corpus" / "dev" / f"{name}.log"))
        assert parsed.coverage.unparsed == 0, name
        assert parsed.of(Traceback), name


@pytest.mark.parametrize("outer", ["sglang-1  | ", "(SGLangEngine pid=1234) ", "2025-12-08T15:20:22.000000420Z "])
def test_launcher_tags_inside_a_capture_tools_prefix(outer: str) -> None:
    u = Unwrapper()
    for _ in range(2):  # the second line takes the repeated-prefix memo
        w, got = u(outer + F042)
        assert w is not None and w.stream == "tag:/bin/sh@0,0" and got.startswith('  File "')
        w, got = u(outer + F012)
        assert w is not None and w.stream == "mpi:1,1" and got == "    scheduler.event_loop_overlap()"


def test_kubectl_prefix_keeps_two_pods_tracebacks_apart(tmp_path: Path) -> None:
    # `kubectl logs -l app=sglang --prefix`: two pods' scheduler tracebacks interleaved line by line.
    body = [
        "[2026-01-01 00:00:0{n} TP{n}] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2311, in run_scheduler_process',
        "    scheduler.event_loop_overlap()",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
    ]
    lines = []
    for line in body:
        for n, pod in enumerate(("sglang-0", "sglang-1")):
            lines.append(f"[pod/{pod}/sglang] " + line.format(n=n))
    path = tmp_path / "pods.log"
    path.write_text("\n".join(lines) + "\n")
    tbs = parse_file(str(path)).of(Traceback)
    assert len(tbs) == 2
    assert all(t.exc_type == "RuntimeError" and len(t.frames) == 1 for t in tbs)


# A `[%(asctime)s][%(levelname)s]: %(message)s` logging format around SGLang's records, the rank tags
# moved into the message (dev/p-024, sgl-project/sglang#9508): the tags go back into an envelope.
BRACKET_LEVEL = [
    ("[2025-08-27 13:51:19][ERROR]: TP1 Scheduler hit an exception: Traceback (most recent call last):",
     "ERROR", "[2025-08-27 13:51:19 TP1] Scheduler hit an exception: Traceback (most recent call last):"),
    ("[2025-08-27 13:51:19,123][WARNING]: DP0 TP3 EP3 Using default MoE kernel config.",
     "WARNING", "[2025-08-27 13:51:19 DP0 TP3 EP3] Using default MoE kernel config."),
    ("[2025-08-27 13:51:19][INFO]: Load weight begin. avail mem=78.31 GB", "INFO",
     "Load weight begin. avail mem=78.31 GB"),
    # a message that starts with a GPU name, not a rank tag
    ("[2025-08-27 13:51:19][INFO]: GPU0 is an H100", "INFO", "GPU0 is an H100"),
]


@pytest.mark.parametrize(("line", "level", "rest"), BRACKET_LEVEL)
def test_bracketed_level_format_gives_ranks_back_to_the_envelope(line: str, level: str, rest: str) -> None:
    w, got = Unwrapper()(line)
    assert w is not None and (w.kind, w.level) == ("bracket-level", level)
    assert got == rest


@pytest.mark.parametrize("line", ["[2025-08-27 13:51:19] [ERROR] spaced: SGLang's envelope, then its message",
                                  "[2025-08-27 13:51:19][0] not a level",
                                  "[2025-08-27 13:51:19 TP0] Scheduler hit an exception: Traceback (most recent call last):"])
def test_bracketed_level_lookalikes_are_left_alone(line: str) -> None:
    w, got = Unwrapper()(line)
    assert w is None and got == line


def test_a_bracketed_level_log_is_read_whole_with_its_ranks() -> None:
    parsed = parse_file(str(FIXTURES / "corpus" / "dev" / "p-024.log"))
    assert parsed.coverage.unparsed == 0
    (tb,) = parsed.of(Traceback)
    assert tb.rank == "TP1" and tb.line == 1


def test_custom_format_with_milliseconds_after_a_dot_keeps_its_ranks() -> None:
    # dev/r-005 (sgl-project/sglang#21723): `date time.ms LEVEL pid [ TP0 file:line] msg`
    w, got = Unwrapper()("2026-03-18 11:22:06.731 ERROR 120984 [ TP0 scheduler.py:3190] Scheduler hit an exception: "
                         "Traceback (most recent call last):")
    assert w is not None and w.level == "ERROR" and w.ts == "2026-03-18 11:22:06.731"
    assert got == "[2026-03-18 11:22:06 TP0] Scheduler hit an exception: Traceback (most recent call last):"


def test_skypilots_worker_prefix_is_a_ray_prefix() -> None:
    # dev/t-006 (sgl-project/sglang-jax#424): SkyPilot's form of Ray's prefix for a job's workers
    u = Unwrapper()
    for _ in range(2):
        w, got = u("(worker6, rank=6, pid=33713, ip=10.128.0.37) [2025-11-17 11:54:25 NP6] Scheduler hit an exception: "
                   "Traceback (most recent call last):")
        assert w is not None and (w.kind, w.pid, w.ip, w.stream) == ("ray", 33713, "10.128.0.37", "ray:33713")
        assert got.startswith("[2025-11-17 11:54:25 NP6] Scheduler hit")
