"""Lines where native code ended its process without an exception: a CUDA check macro of a kernel
library (flash-attention's Hopper kernels, CUTLASS-based ones) prints `CUDA error (file.h:166):
<error>` and calls `exit(EXIT_FAILURE)` (catalog `native-check-exit`). No traceback follows, so
without this the excerpt would show an error but no end of the process. One owner of the fact;
`engine/outcome.crash_line` reads it with the other lines that show a process died."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING

from logparse.parsing.candidates import message_candidates

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog

CODE = "native-check-exit"


def _all_exits(log: ParsedLog) -> list[int]:
    cached = log.derived.get("native_exits")
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    from logparse.grammar.messages import catalog

    spec = catalog()[CODE]
    found = sorted(no for no, text in message_candidates(log).get(CODE, ()) if spec.match(text.strip()) is not None)
    log.derived["native_exits"] = found
    return found


def native_exits(log: ParsedLog, start: int, end: int) -> list[int]:
    """The lines start..end (one launch attempt) where a native check ended its process."""
    found = _all_exits(log)
    return found[bisect_left(found, start) : bisect_right(found, end)]
