"""A traceback whose newlines the paste collapsed into one line, split back into its lines.

GitHub renders a traceback pasted outside a code block as one paragraph, so the copy of it is one
line: `(SGLangEngine pid=812) Traceback (most recent call last):   File "/…/scheduler.py", line 2612,
in run_scheduler_process     scheduler.event_loop_overlap()   File "…", line 120, in decorate_context
    return func(*args, **kwargs) RuntimeError: CUDA error: an illegal memory access was encountered`.
Some tools print the traceback's text with literal `\\n` escapes instead. Either way the reader gives
the grammar one logical line per traceback line again (same physical line number, same wrapper), so
the traceback is assembled as if it had been pasted intact.

The split points are Python's own traceback syntax: the `Traceback (most recent call last):` header,
each `File "…", line N, in f` frame (the text after it up to the next frame is the frame's source
line), the chain separators, and, after the last frame, the exception line (`SomeError: …`).
"""

from __future__ import annotations

from logparse.model.lazyre import lazy_compile

__all__ = ["split_collapsed_traceback"]

HEADER = "Traceback (most recent call last):"
_CHAINS = ("During handling of the above exception, another exception occurred:",
           "The above exception was the direct cause of the following exception:")
_FRAME = lazy_compile(r'File "[^"]*", line \d+(?:, in \S+)?')
# The exception line after the last frame: a dotted class name ending like an exception class.
_EXCEPTION = lazy_compile(
    r"(?:^|(?<=\s))(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Warning|Failure|Timeout)"
    r"(?:\([\w.]+\))?(?::\s|$)"
)
# More pieces than this is not a traceback pasted by a person (keep the line as it is).
MAX_PIECES = 512


def split_collapsed_traceback(line: str) -> list[str] | None:
    """The lines of a collapsed traceback in `line`, or None when it holds none (the common case:
    a header alone at the end of a line, `Scheduler hit an exception: Traceback (…):`)."""
    at = line.find(HEADER)
    if at < 0:
        return None
    tail = line[at + len(HEADER):]
    if "\\n" in tail[:8]:
        # Literal `\n` escapes: the text had its newlines, only escaped.
        parts = line.replace("\\r\\n", "\\n").split("\\n")
        return [p for p in parts if p.strip()] if len(parts) <= MAX_PIECES else None
    if 'File "' not in tail:
        return None
    out = [line[: at + len(HEADER)]]
    for segment in _split_chains(tail):
        if segment in _CHAINS or segment == HEADER:
            out.append(segment)
            continue
        frames = list(_FRAME.finditer(segment))
        if not frames:
            if segment.strip():
                out.append(segment.strip())
            continue
        lead = segment[: frames[0].start()].strip()
        if lead:
            out.append(lead)
        for i, m in enumerate(frames):
            out.append("  " + m.group(0))
            end = frames[i + 1].start() if i + 1 < len(frames) else len(segment)
            body = segment[m.end(): end].strip()
            if not body:
                continue
            if i + 1 == len(frames):
                exc = _EXCEPTION.search(body)
                if exc is not None:
                    source = body[: exc.start()].strip()
                    if source:
                        out.append("    " + source)
                    out.append(body[exc.start():].strip())
                    continue
            out.append("    " + body)
        if len(out) > MAX_PIECES:
            return None
    return out if len(out) > 2 else None


def _split_chains(tail: str) -> list[str]:
    """`tail` cut at the chain separators and at further traceback headers (kept as pieces)."""
    pieces = [tail]
    for marker in (*_CHAINS, HEADER):
        nxt: list[str] = []
        for p in pieces:
            if p in _CHAINS or p == HEADER or marker not in p:
                nxt.append(p)
                continue
            parts = p.split(marker)
            for j, part in enumerate(parts):
                if j:
                    nxt.append(marker)
                if part.strip():
                    nxt.append(part)
        pieces = nxt
    return pieces
