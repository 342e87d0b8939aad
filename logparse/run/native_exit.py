"""Lines where native code ended its process without an exception: a CUDA check macro of a kernel
library (flash-attention's Hopper kernels, CUTLASS-based ones) prints `CUDA error (file.h:166):
<error>` and calls `exit(EXIT_FAILURE)` (catalog `native-check-exit`). No traceback follows, so
without this the excerpt would show an error but no end of the process. One owner of the fact;
`engine/outcome.crash_line` reads it with the other lines that show a process died."""

from __future__ import annotations

from typing import TYPE_CHECKING

from logparse.parsing.candidates import candidates_in

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog

CODE = "native-check-exit"


def native_exits(log: ParsedLog, start: int, end: int) -> list[int]:
    """The lines start..end (one launch attempt) where a native check ended its process: the
    catalog prefilter's candidates (`parsing/candidates.py`, shared with the rules), matched."""
    from logparse.grammar.messages import catalog

    spec = catalog()[CODE]
    return [no for no, text in candidates_in(log, CODE, start, end) if spec.match(text.strip()) is not None]
