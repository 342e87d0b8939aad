"""SGLang's own warmup request, as a logged request line shows it."""

from __future__ import annotations

from logparse.model.events import KnownMessage
from logparse.run.vocab import WARMUP_PROMPT


def is_warmup_request(e: KnownMessage) -> bool:
    """A `Receive: obj=GenerateReqInput(… text='The capital city of France is' …)` line: the request
    the server sends itself after its HTTP server starts and before it says it is ready (every
    release's `_wait_and_warmup` / `_execute_server_warmup` uses this prompt), logged with
    `--log-requests`. It arrives while the server is still starting."""
    return e.code == "request-received" and WARMUP_PROMPT in e.text
