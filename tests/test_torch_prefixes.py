"""torch's C++ log prefix (c10/util/Logging.cpp MessageLogger) in every form releases printed it:
`[E file.cpp:N] ` before 2.2, `[rankN]:[E304 12:54:52.122900428 file.cpp:N] ` since (the month
not zero-padded), and a launcher's capitalised rank tag with the letter replaced, as verl on Ray
printed it (fixtures/corpus/dev/g-005, verl-project/verl#1420). The prefix is the envelope; the
message after it is the grammar's as for any other envelope."""

from __future__ import annotations

import pytest

from logparse.grammar.build import get_parser
from logparse.model.events import NcclWatchdogTimeout, Unparsed

WATCHDOG = (
    "[Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE, "
    "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600066 milliseconds before timing out."
)

PREFIXES = [
    # torch < 2.2 (pytorch/pytorch#118369): letter and file only
    ("[E ProcessGroupNCCL.cpp:475] ", None, None, "E"),
    # torch >= 2.2 (hiyouga/LlamaFactory#6269): global rank, MMDD, nanoseconds
    ("[rank0]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] ", "rank0", "12-06 18:44:12", "E"),
    ("[rank4]:[E304 12:54:52.122900428 ProcessGroupNCCL.cpp:616] ", "rank4", "03-04 12:54:52", "E"),
    # without a known global rank
    ("[W623 01:02:03.000000001 ProcessGroupNCCL.cpp:1250] ", None, "06-23 01:02:03", "W"),
    # dev/g-005: `[Rank7]:` and `T` where the letter was
    ("[Rank7]:[T506 14:16:14.487575902 ProcessGroupNCCL.cpp:629] ", "rank7", "05-06 14:16:14", "T"),
    # VLOG lines print the last letter of "FEWIV"
    ("[V ProcessGroupNCCL.cpp:900] ", None, None, "V"),
]


@pytest.mark.parametrize(("prefix", "rank", "ts", "level"), PREFIXES)
def test_torch_cpp_prefix_is_the_envelope(prefix: str, rank: str | None, ts: str | None, level: str) -> None:
    env, cls, kw = get_parser(strict=True).parse(prefix + WATCHDOG.format(r=3))
    assert env is not None and env.style == "c10d"
    assert (env.rank, env.ts, env.level) == (rank, ts, level)
    assert cls is NcclWatchdogTimeout and kw["timeout_ms"] == 600000


@pytest.mark.parametrize(
    "line",
    [
        # a bracketed word and a time are not the prefix: the letter must stand alone or before MMDD
        "[TP0 14:16:14.487575902 ProcessGroupNCCL.cpp:629] x",
        "[Rank 7]:[E506 14:16:14.487575902 ProcessGroupNCCL.cpp:629] x",
        "[RANK7]:[E506 14:16:14.487575902 ProcessGroupNCCL.cpp:629] x",
    ],
)
def test_lookalikes_are_not_the_torch_prefix(line: str) -> None:
    env, cls, _ = get_parser(strict=True).parse(line)
    assert env is None or env.style != "c10d"
    assert cls is Unparsed or env is None
