"""Secret redaction: what is masked, what is left alone (SGLang's many harmless `token` words)."""

from __future__ import annotations

import pytest

from logparse.report.fmt import code, fence, md
from logparse.report.redact import MASK, is_secret_key, redact_data, redact_text

HF = "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("server_args=ServerArgs(model_path='m', api_key='sk-abc123', port=1)", "sk-abc123"),
        ('server_args={"api_key": "abc-123-def", "port": 1}', "abc-123-def"),
        ("api_key=plainsecret, x=1", "plainsecret"),
        ("admin_api_key='adm1n'", "adm1n"),
        (f"token {HF} in the middle", HF),
        ("$ HF_TOKEN=hf_short123 python -m sglang.launch_server", "hf_short123"),
        ("OPENAI_API_KEY=sk-proj-aaaaaaaaaaaaaaaaaaaa python x.py", "sk-proj-aaaaaaaaaaaaaaaaaaaa"),
        ("curl -H 'Authorization: Bearer eyJhbGciOi.abc.def' http://h", "eyJhbGciOi.abc.def"),
        ("Authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"),
        ("connect to https://user:s3cr3t@host.example/x", "s3cr3t"),
        ("redis://default:p4ssw0rd@10.0.0.1:6379/0", "p4ssw0rd"),
        ("--api-key topsecret --tp 2", "topsecret"),
        ("--api-key=topsecret", "topsecret"),
        ("--admin-api-key 'quoted secret'", "quoted secret"),
        ("--hf-token hf_x1 --port 30000", "hf_x1"),
        ("GET /v1/models?token=abc123def HTTP/1.1", "abc123def"),
        ("password=hunter2", "hunter2"),
        ("sk-ant-api03-AAAAAAAAAAAAAAAAAAAA used", "sk-ant-api03-AAAAAAAAAAAAAAAAAAAA"),
        # Digits masked by a coverage template must not hide the shape of a token.
        ("Bearer eyJhbGciOiJIUzI<n>NiJ<n>.secretpayload", "secretpayload"),
    ],
)
def test_secrets_are_masked(text: str, secret: str) -> None:
    out = redact_text(text)
    assert secret not in out
    assert MASK in out


@pytest.mark.parametrize(
    "text",
    [
        "[2026-04-21 08:49:49 TP0] Decode batch, #running-req: 3, #token: 4772, token usage: 0.01, accept len: 2.85",
        "max_total_num_tokens=396288, chunked_prefill_size=8192, max_prefill_tokens=16384",
        "--max-total-tokens 100 --speculative-num-draft-tokens 4 --max-prefill-tokens 8192",
        "server_args=ServerArgs(api_key=None, admin_api_key=None, hf_chat_template_name=None)",
        "api_key=''",
        "Capture cuda graph num tokens [8, 16]",
        "postgres://user@host/db",
        "hf_transfer is not installed",
        "Using default HuggingFace chat template with detected content format: string",
    ],
)
def test_harmless_text_is_left_alone(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("api_key", True),
        ("admin_api_key", True),
        ("--api-key", True),
        ("HF_TOKEN", True),
        ("hf_token", True),
        ("ssl_keyfile_password", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("token", True),
        ("GITHUB_TOKEN", True),
        ("new_token", False),
        ("cached_token", False),
        ("n_full_token", False),
        ("max_total_num_tokens", False),
        ("tokenizer_path", False),
        ("NCCL_IB_HCA", False),
        ("speculative_num_draft_tokens", False),
    ],
)
def test_secret_key_names(name: str, secret: bool) -> None:
    assert is_secret_key(name) is secret


def test_redact_data_walks_the_model_and_counts() -> None:
    data = {
        "server_args": {"api_key": "abc", "new_token": 5, "api_key_unset": None, "x": "api_key=zz"},
        "env": {"HF_TOKEN": "whatever", "NCCL_DEBUG": "INFO"},
        "lines": [{"line": 3, "text": f"uses {HF}"}],
        "n": 3.5,
        "flag": True,
    }
    out, count = redact_data(data)
    assert out["server_args"] == {
        "api_key": MASK,
        "new_token": 5,
        "api_key_unset": None,
        "x": f"api_key={MASK}",
    }
    assert out["env"] == {"HF_TOKEN": MASK, "NCCL_DEBUG": "INFO"}
    assert out["lines"][0]["text"] == f"uses {MASK}"
    assert out["n"] == 3.5 and out["flag"] is True
    assert count == 4
    assert data["server_args"]["api_key"] == "abc"  # the input is not modified
    again, n = redact_data(out)
    assert again == out and n == 0  # idempotent


# --------------------------------------------------------------------------- Markdown escaping


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        "a | b",
        "[x](http://evil)",
        "*bold* _it_",
        "`tick` and ``double``",
        "# heading",
        "![img](x)",
    ],
)
def test_markdown_prose_escaping(text: str) -> None:
    out = md(text)
    for ch in "<>|[]*!#":
        # every special character outside code spans carries a backslash
        assert all(
            out[i - 1] == "\\" for i, c in enumerate(out) if c == ch and "`" not in out[:i]
        ), out


def test_markdown_keeps_code_spans_of_remedies() -> None:
    assert md("use `--tp 2` now") == "use `--tp 2` now"


def test_markdown_code_span_and_fence_cannot_be_closed_by_the_content() -> None:
    assert code("a`b") == "``a`b``"
    assert code("x|y") == "`x\\|y`"
    block = fence(["before ``` inside", "after"])
    first, *_, last = block.splitlines()
    assert first == "````text" and last == "````"
