"""A Python warning raised in the OpenAI-compatible API's request handlers is serving evidence (issue 9).

`…/sglang/srt/entrypoints/openai/serving_chat.py:642: DeprecationWarning: max_tokens is deprecated …`
is printed while a client's `/v1/chat/completions` request is turned into sampling parameters: the
server was up and serving someone's request (SGLang's own warmup posts to `/generate`, which never
runs these handlers). Real occurrence: fixtures/corpus/dev/k-017 (zai-org/GLM-OCR#232, Ascend).
"""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze
from tests.conftest import FIXTURES, analyze_text

_READY = (
    "[2026-08-05 09:25:37] INFO:     Application startup complete.\n"
    "[2026-08-05 09:25:37] INFO:     Uvicorn running on http://0.0.0.0:8898 (Press CTRL+C to quit)\n"
    '[2026-08-05 09:25:38] INFO:     127.0.0.1:59208 - "GET /model_info HTTP/1.1" 200 OK\n'
)
_HANDLER = (
    "/sgl-workspace/sglang/python/sglang/srt/entrypoints/openai/serving_chat.py:642: DeprecationWarning: "
    "max_tokens is deprecated in favor of the max_completion_tokens field\n"
    "  max_output_tokens = request.max_completion_tokens or request.max_tokens\n"
)


def test_dev_case_is_serving() -> None:
    a = analyze(str(FIXTURES / "corpus" / "dev" / "k-017.log"))
    assert a.outcome == "serving" and a.facts.get("ready") is True


def test_a_request_handlers_warning_after_readiness_is_serving(tmp_path: Path) -> None:
    assert analyze_text(tmp_path, _READY + _HANDLER).outcome == "serving"


def test_the_api_models_module_says_nothing_of_a_request(tmp_path: Path) -> None:
    # Near miss: protocol.py also holds module-level models (a warning there may come at import).
    text = _READY + _HANDLER.replace("serving_chat.py:642", "protocol.py:980")
    assert analyze_text(tmp_path, text).outcome == "ready"
