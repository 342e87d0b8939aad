"""Generator profiles (benchmarks/profiles.py) and the reference's summary on them: each profile
is deterministic, reaches the asked size and holds the lines it is named for."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from itertools import pairwise
from pathlib import Path

import pytest

from benchmarks import reference
from benchmarks.generate import generate
from benchmarks.profiles import PROFILES, WRAP_BLOCK

ENV = re.compile(r"\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?: [A-Z_]+\d+)*\] ")


def _gen(tmp_path: Path, profile: str, lines: int, name: str = "a") -> tuple[int, list[str]]:
    path = tmp_path / f"{profile}-{name}.log"
    n = generate(str(path), lines=lines, seed=11, profile=profile)
    text = path.read_bytes().decode("utf-8", errors="replace")
    return n, text.split("\n")[:-1]


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_profile_is_deterministic_and_long_enough(tmp_path: Path, profile: str):
    n1, a = _gen(tmp_path, profile, 3000, "a")
    n2, b = _gen(tmp_path, profile, 3000, "b")
    assert a == b
    assert n1 == n2 == len(a) >= 3000
    assert (tmp_path / f"{profile}-a.log").read_bytes() == (tmp_path / f"{profile}-b.log").read_bytes()


def test_profiles_differ_from_each_other(tmp_path: Path):
    heads = {p: "\n".join(_gen(tmp_path, p, 3000)[1][-500:]) for p in PROFILES}
    assert len(set(heads.values())) == len(PROFILES)


def test_serving_heavy_is_stats_and_access(tmp_path: Path):
    _, lines = _gen(tmp_path, "serving-heavy", 20000)
    hot = sum(1 for x in lines if "] Decode batch, " in x or "] Prefill batch, " in x
              or '] INFO:     ' in x and '" 200 OK' in x)
    assert hot / len(lines) > 0.9


def test_startup_heavy_relaunches_tp64(tmp_path: Path):
    _, lines = _gen(tmp_path, "startup-heavy", 20000)
    launches = [x for x in lines if "server_args=ServerArgs(" in x]
    assert len(launches) >= 3
    assert all("tp_size=64" in x and "lora_paths=['adapter0=" in x for x in launches)
    assert len(launches[0]) > 5500  # the long dump (the default one is ~4,700 characters)
    assert sum("TP63] Load weight end." in x for x in lines) >= 2 * len(launches) - 2
    startup_kinds = ("NCCL INFO", "Init torch distributed", "Load weight", "KV Cache is",
                     "Memory pool end", "Capture ", "[Gloo]", "ProcessGroupNCCL")
    share = sum(any(k in x for k in startup_kinds) for x in lines) / len(lines)
    assert share > 0.35


def test_failure_heavy_interleaves_tracebacks(tmp_path: Path):
    _, lines = _gen(tmp_path, "failure-heavy", 30000)
    heads = [i for i, x in enumerate(lines) if "Scheduler hit an exception: Traceback" in x
             or x.endswith("]: Traceback (most recent call last):")]
    assert len(heads) >= 30
    # two records open at once: a second head before the first one's final error line
    ends = [i for i, x in enumerate(lines)
            if re.match(r"(\[rank\d+\]: )?[\w.]+(Error|Exception): ", x)]
    overlapping = sum(1 for h, h2 in pairwise(heads)
                      if not any(h < e < h2 for e in ends))
    assert overlapping >= 3
    assert any(" NCCL WARN " in x for x in lines)
    assert any("Watchdog caught collective operation timeout" in x for x in lines)
    assert any(": UserWarning: " in x or ": FutureWarning: " in x for x in lines)


def test_wrapper_prefixed_prefixes_every_line(tmp_path: Path):
    _, lines = _gen(tmp_path, "wrapper-prefixed", 2 * WRAP_BLOCK + 3000)
    docker, k8s, ray = lines[:WRAP_BLOCK], lines[WRAP_BLOCK:2 * WRAP_BLOCK], lines[2 * WRAP_BLOCK:]
    assert all(x.startswith("sglang-1  | ") for x in docker)
    assert all(re.match(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9}Z ", x) for x in k8s)
    assert all(re.match(r"\((Scheduler|Server)Actor pid=\d+, ip=10\.0\.1\.15\) ", x) for x in ray)
    assert any(x.startswith("(SchedulerActor pid=534,") and " TP0] Decode batch" in x for x in ray)


def test_long_running_spans_days_with_distinct_request_ids(tmp_path: Path):
    _, lines = _gen(tmp_path, "long-running", 40000)
    rids = [m[1] for x in lines if (m := re.search(r"Receive: obj=GenerateReqInput\(rid='(\w+)'", x))]
    assert len(rids) == len(set(rids)) > 40000 / 10
    stamps = sorted(m[0][1:20] for x in lines if (m := ENV.match(x)))
    span = datetime.fromisoformat(stamps[-1]) - datetime.fromisoformat(stamps[0])
    assert span > timedelta(days=1)  # ~3.6 days per 100k lines; serving-heavy: ~5 hours
    assert any(x.count("Finish: obj=GenerateReqInput(rid='") for x in lines)


def test_unrecognized_is_mostly_foreign(tmp_path: Path):
    _, lines = _gen(tmp_path, "unrecognized", 20000)
    sglang = sum(1 for x in lines if ENV.match(x))
    assert sglang / len(lines) < 0.3


def test_corpus_repeats_the_corpus_files_exactly(tmp_path: Path):
    from benchmarks.profiles import corpus_files

    blob = b"".join(f.read_bytes() if f.read_bytes().endswith(b"\n") else f.read_bytes() + b"\n"
                    for f in corpus_files())
    per = blob.count(b"\n")
    n, _ = _gen(tmp_path, "corpus", 2 * per + 5)
    data = (tmp_path / "corpus-a.log").read_bytes()
    assert n == data.count(b"\n") == 2 * per + 5
    assert data.startswith(blob + blob)


def test_reference_counts_match_the_lines(tmp_path: Path):
    path = tmp_path / "f.log"
    generate(str(path), lines=20000, seed=3, profile="failure-heavy")
    lines = path.read_text(encoding="utf-8").splitlines()
    s = reference.run_reference(str(path))
    assert s["decode"]["rows"] == sum(1 for x in lines if ENV.match(x) and "] Decode batch, " in x)
    assert s["prefill"]["rows"] == sum(1 for x in lines if ENV.match(x) and "] Prefill batch, " in x)
    assert s["access"]["rows"] == sum(1 for x in lines if re.match(
        r'\[[^\]]+\] INFO:     \S* - "[A-Z]+ \S+ HTTP/[\d.]+" \d{3}', x))
    assert s["exceptions"]["count"] == sum("Scheduler hit an exception" in x for x in lines)
    assert s["exceptions"]["by_type"].get("?", 0) < s["exceptions"]["count"]
    assert s["startup"]["kv_alloc"] == 16  # TP8: main and draft model pools
