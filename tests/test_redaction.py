"""One redaction layer for every output: 46 secret forms × 4 placements in a log × every output of
every command (analyze text/json, check text/json/sarif/junit/github, events csv/jsonl, report
html/md/json). The secret text is never in a default output; with --no-redact it is there; the
JSON outputs count what was masked by kind. And the redaction is linear: a bounded number of
regex scans per string whatever its length or content."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from logparse.render.redact import MASK, Redactor

# (name, text as it appears in a log, the secret part that must never be printed). The secrets
# hold no digits and no hex runs, so that coverage templates (which mask numbers) show them raw.
FORMS: list[tuple[str, str, str]] = [
    ("auth-bearer", "Authorization: Bearer QwXbearerTokenValuez", "QwXbearerTokenValuez"),
    ("auth-basic-json", '"Authorization": "Basic UXdYYmFzaWM6cGFzcw=="', "UXdYYmFzaWM6cGFzcw=="),
    ("auth-token", "authorization: token QwXghTokenValuez", "QwXghTokenValuez"),
    ("curl-header", "curl -H 'Authorization: Bearer QwXcurlBearerz' http://h/v", "QwXcurlBearerz"),
    ("lone-bearer", "sent Bearer QwXloneBearerTokz upstream", "QwXloneBearerTokz"),
    ("url-slash-password", "fetch https://u:pa/ssQwXslash@h.example.com/x", "pa/ssQwXslash"),
    ("url-empty-user", "redis://:QwXredisPwz@h:6379", "QwXredisPwz"),
    ("url-user-password", "postgres://admin:QwXpgPassz@db:5432/x", "QwXpgPassz"),
    ("flag-dash-value", "--api-key -xQwXdashValuez --port 30000", "-xQwXdashValuez"),
    ("flag-space", "--api-key QwXapiKeyFlagz --tp 2", "QwXapiKeyFlagz"),
    ("flag-equals", "--api-key=QwXapiKeyEqz", "QwXapiKeyEqz"),
    ("flag-admin", "--admin-api-key QwXadminKeyz", "QwXadminKeyz"),
    ("flag-hf-token", "--hf-token hf_QwXaaaaaaaaaaaaaaaaaaaz", "hf_QwXaaaaaaaaaaaaaaaaaaaz"),
    ("flag-ssl-password", "--ssl-keyfile-password QwXsslPassz", "QwXsslPassz"),
    ("aws-key-id", "using AKIAQWXZQWXZQWXZQWXZ now", "AKIAQWXZQWXZQWXZQWXZ"),
    ("aws-secret-spaced", "aws_secret_access_key = QwXawsSecretAccessKeyValue/abc", "QwXawsSecretAccessKeyValue"),
    ("x-api-key-header", "x-api-key: QwXxApiKeyz", "QwXxApiKeyz"),
    ("api-key-header", "api-key: QwXapiKeyHeaderz", "QwXapiKeyHeaderz"),
    ("yaml-api-key", "  api_key: QwXyamlKeyz", "QwXyamlKeyz"),
    ("query-access-token", "GET /v/models?access_token=QwXqueryTokenz&x=y", "QwXqueryTokenz"),
    ("github-pat", "github_pat_QWXAAAAAAAAAAAAAAAAAAAAAAAAAz", "github_pat_QWXAAAAAAAAAAAAAAAAAAAAAAAAAz"),
    ("github-classic", "ghp_QwXaaaaaaaaaaaaaaaaaaaaaaaaaaz", "ghp_QwXaaaaaaaaaaaaaaaaaaaaaaaaaaz"),
    ("slack-bot", "xoxb-QwXslackTokenValuez-abc", "xoxb-QwXslackTokenValuez-abc"),
    ("jwt", "eyJhbGciOiJIUzINiJ.eyJzdWIiOiJRdzIIn.QwXjwtSignatureValue_z", "QwXjwtSignatureValue_z"),
    (
        "pem-private-key",
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCQwXzPrivateBody\n-----END PRIVATE KEY-----",
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCQwXzPrivateBody",
    ),
    ("django-secret-key", "SECRET_KEY=QwXdjangoSecretz", "QwXdjangoSecretz"),
    ("server-args-api-key", "api_key='QwXserverArgsKeyz', admin_api_key=None", "QwXserverArgsKeyz"),
    ("dict-api-key", "{'api_key': 'QwXdictKeyz'}", "QwXdictKeyz"),
    ("json-hf-token", '{"hf_token": "hf_QwXbbbbbbbbbbbbbbbbbbbz"}', "hf_QwXbbbbbbbbbbbbbbbbbbbz"),
    ("env-hf-token", "HF_TOKEN=hf_QwXccccccccccccccccccz", "hf_QwXccccccccccccccccccz"),
    ("env-openai", "OPENAI_API_KEY=sk-proj-QwXdddddddddddddddddz", "sk-proj-QwXdddddddddddddddddz"),
    ("env-wandb", "WANDB_API_KEY=QwXwandbKeyz", "QwXwandbKeyz"),
    ("env-any-token", "MY_SERVICE_TOKEN=QwXserviceTokz", "QwXserviceTokz"),
    ("password-kv", "password=QwXhunterz", "QwXhunterz"),
    ("token-kv", "token=QwXplainTokenz", "QwXplainTokenz"),
    ("message-openai", "Invalid API key: sk-QwXeeeeeeeeeeeeeeeez", "sk-QwXeeeeeeeeeeeeeeeez"),
    ("anthropic", "sk-ant-api-QwXffffffffffffffffz", "sk-ant-api-QwXffffffffffffffffz"),
    ("bare-hf", "login with hf_QwXggggggggggggggggggz", "hf_QwXggggggggggggggggggz"),
    ("gitlab", "glpat-QwXhhhhhhhhhhhhhhhhhhz", "glpat-QwXhhhhhhhhhhhhhhhhhhz"),
    ("google-api-key", "AIzaSyQwX" + "i" * 30, "AIzaSyQwX" + "i" * 30),
    ("azure-sas", "https://acct.blob.core.windows.net/c?sv=x&sig=QwXsasSignaturez", "QwXsasSignaturez"),
    ("client-secret", "client_secret: QwXclientSecretz", "QwXclientSecretz"),
    ("proxy-basic", "Proxy-Authorization: Basic UXdYcHJveHk6cHc=", "UXdYcHJveHk6cHc="),
    ("export-hub-token", "export HUGGING_FACE_HUB_TOKEN=QwXhubTokenz", "QwXhubTokenz"),
    ("env-url-password", "DATABASE_URL=mysql://root:QwXmysqlPwz@db/x", "QwXmysqlPwz"),
    ("slack-app", "xapp-QwX-slackAppTokenz", "xapp-QwX-slackAppTokenz"),
]
assert len(FORMS) >= 44 and len({f[0] for f in FORMS}) == len(FORMS)

HEAD = "$ python3 -m sglang.launch_server --model-path m/x --port 30000\n"
TB = (
    "[2026-04-14 10:09:20 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 3301, '
    "in run_scheduler_process\n"
    "    scheduler = Scheduler(\n"
)


def _repr_quoted(form: str) -> str:
    """The form as Python's repr shows a string argument (newlines as \\n)."""
    return repr(form)


PLACEMENTS: dict[str, Any] = {
    # Python's repr of the server arguments: the form as the value of a string argument.
    "server-args": lambda f: HEAD + f"[2026-04-14 10:09:14] server_args=ServerArgs(model_path='m/x', "
    f"chat_template={_repr_quoted(f)}, tp_size=1, port=30000)\n" + TB + "ValueError: boom\n",
    # An environment dump (`env` output) pasted into the log: the form as a variable's value.
    "env-dump": lambda f: HEAD + "HOSTNAME=node\n" + "".join(f"EXTRA_ENV={line}\n" for line in f.split("\n"))
    + TB + "ValueError: boom\n",
    # The message of the exception that crashed the server (evidence of a finding).
    "traceback": lambda f: HEAD + TB + f"ValueError: request failed: {f}\n",
    # A line no grammar rule knows (coverage templates).
    "unparsed": lambda f: HEAD + f"{f}\n" + TB + "ValueError: boom\n",
}

OUTPUTS = ("analyze-text", "analyze-json", "check-text", "check-json", "check-sarif", "check-junit", "check-github",
           "report-json", "report-md", "report-html", "events-csv", "events-jsonl")
EVENT_KINDS = ("server_args", "launch_command", "traceback")


@cache
def _analysis(tmp: str, placement: str, form: str) -> Any:
    from logparse.engine.core import analyze

    path = Path(tmp) / f"{abs(hash((placement, form)))}.log"
    path.write_text(PLACEMENTS[placement](form), encoding="utf-8")
    return analyze(str(path))


def _outputs(analysis: Any, redact: bool) -> dict[str, str]:
    """Every output of every command for one analysed log, rendered in-process."""
    from logparse.cli.check import render as render_check
    from logparse.gate.config import Config
    from logparse.gate.report import FileResult, build_report
    from logparse.render.json import render as analyze_json
    from logparse.render.sanitize import clean_check
    from logparse.render.text import render as analyze_text
    from logparse.report.html import render_html
    from logparse.report.markdown import render_markdown
    from logparse.report.model import build_report as build_postmortem

    out = {"analyze-text": analyze_text([analysis], redact=redact), "analyze-json": analyze_json([analysis], redact=redact)}
    result = FileResult(path=analysis.log.path, findings=list(analysis.findings), outcome=analysis.outcome,
                        root_cause=analysis.root_cause)
    report = clean_check(build_report([result], Config(), "error"), redact=redact)
    for fmt in ("text", "json", "sarif", "junit", "github"):
        out[f"check-{fmt}"] = render_check(report, fmt)
    rep = build_postmortem(analysis, redact=redact)
    out["report-json"] = json.dumps(rep.data, ensure_ascii=False)
    out["report-md"] = render_markdown(rep.data, None)
    out["report-html"] = render_html(rep.data, {})
    return out


def _events(path: str, redact: bool) -> dict[str, str]:
    from logparse.cli.main import main

    runner = CliRunner()
    out: dict[str, str] = {}
    for fmt in ("csv", "jsonl"):
        texts = []
        for kind in EVENT_KINDS:
            args = ["events", path, "--kind", kind, "--format", fmt] + ([] if redact else ["--no-redact"])
            r = runner.invoke(main, args)
            assert r.exit_code == 0, r.output
            texts.append(r.output)
        out[f"events-{fmt}"] = "\n".join(texts)
    return out


@cache
def _rendered(tmp: str, placement: str, form: str) -> tuple[dict[str, str], dict[str, str]]:
    a = _analysis(tmp, placement, form)
    safe = _outputs(a, True) | _events(a.log.path, True)
    raw = _outputs(a, False) | _events(a.log.path, False)
    return safe, raw


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("redaction"))


def _fragment(secret: str) -> str:
    """The longest run of letters of a secret: what a coverage template (numbers masked) or a
    truncated line could still show of it."""
    return max(re.findall(r"[A-Za-z_]{6,}", secret) or [secret], key=len)


@pytest.mark.parametrize("placement", sorted(PLACEMENTS))
@pytest.mark.parametrize(("name", "form", "secret"), FORMS, ids=[f[0] for f in FORMS])
def test_secret_absent_from_every_output(workdir: str, placement: str, name: str, form: str, secret: str) -> None:
    safe, raw = _rendered(workdir, placement, form)
    assert set(safe) == set(OUTPUTS)
    leaks = [o for o in OUTPUTS if secret in safe[o] or _fragment(secret) in safe[o]]
    assert not leaks, f"{name} in {placement} leaks into {leaks}"
    shown = [o for o in OUTPUTS if _fragment(secret) in raw[o]]
    if placement == "traceback":  # the crash's evidence reaches every format of every command
        assert set(OUTPUTS) - {"events-csv", "events-jsonl"} <= set(shown), shown
        assert {"events-csv", "events-jsonl"} & set(shown), shown
    # Wherever --no-redact shows the secret, the default output shows the placeholder instead.
    for o in shown:
        assert MASK in safe[o], (o, placement)


@pytest.mark.parametrize(("name", "form", "secret"), FORMS, ids=[f[0] for f in FORMS])
def test_no_redact_shows_what_was_masked(workdir: str, name: str, form: str, secret: str) -> None:
    """Not vacuous: with --no-redact the secret is in the JSON outputs of at least two of the
    four placements (coverage templates mask path-shaped text such as `u:pa/ss@h/x`)."""
    placements = [p for p in PLACEMENTS
                  if {"analyze-json", "report-json"} & {o for o, text in _rendered(workdir, p, form)[1].items()
                                                        if _fragment(secret) in text}]
    assert len(placements) >= 2, placements


@pytest.mark.parametrize("placement", sorted(PLACEMENTS))
def test_json_outputs_count_redactions_by_kind(workdir: str, placement: str) -> None:
    """Every JSON output that would show the secret says what it masked, by kind."""
    safe, raw = _rendered(workdir, placement, FORMS[0][1])
    secret = FORMS[0][2]
    counts = {
        "analyze-json": lambda d: d["redactions"],
        "report-json": lambda d: d["redaction"]["by_kind"],
        "check-json": lambda d: d["redactions"],
        "check-sarif": lambda d: d["runs"][0]["properties"]["redactions"],
    }
    shown = [o for o in counts if secret in raw[o]]
    assert shown, placement
    for o in shown:
        assert counts[o](json.loads(safe[o])).get("bearer-token", 0) >= 1, o
        assert counts[o](json.loads(raw[o])) == {}, o
    doc = json.loads(safe["analyze-json"])
    assert doc["files"][0]["redactions"] == doc["redactions"]
    report = json.loads(safe["report-json"])["redaction"]
    assert report["enabled"] is True and report["masked"] == sum(report["by_kind"].values())


def test_cli_no_redact_on_every_command(tmp_path: Path) -> None:
    """The commands themselves: redacted by default, --no-redact keeps the text, on each command."""
    from logparse.cli.main import main

    form, secret = FORMS[9][1], FORMS[9][2]
    log = tmp_path / "run.log"
    log.write_text(PLACEMENTS["traceback"](form), encoding="utf-8")
    runner = CliRunner()
    commands = [
        ["analyze", str(log)], ["analyze", str(log), "--format", "json"],
        *[["check", str(log), "--exit-zero", "--format", f] for f in ("text", "json", "sarif", "junit", "github")],
        ["events", str(log), "--kind", "traceback"], ["events", str(log), "--kind", "traceback", "--format", "jsonl"],
        ["report", str(log), "-o", "-", "--format", "json"], ["report", str(log), "-o", "-", "--format", "html"],
    ]
    for args in commands:
        safe = runner.invoke(main, args)
        raw = runner.invoke(main, [*args, "--no-redact"])
        assert safe.exit_code == 0 and raw.exit_code == 0, (args, safe.output, raw.output)
        assert secret not in safe.stdout and MASK in safe.stdout, args
        assert secret in raw.stdout, args
    md = tmp_path / "r.md"
    assert runner.invoke(main, ["report", str(log), "-o", str(md)]).exit_code == 0
    assert secret not in md.read_text(encoding="utf-8")


def test_coverage_templates_honour_no_redact(tmp_path: Path) -> None:
    """A template masks digits (which can hide a token's shape): redacted, it is rebuilt from the
    redacted line; with --no-redact it comes from the raw line."""
    from logparse.render.json import document

    a = _analysis(str(tmp_path), "unparsed", "login hf_ab12cd34ef56gh78ij90kl done")
    safe = [t["template"] for t in document([a])["files"][0]["coverage"]["top_unparsed"]]
    raw = [t["template"] for t in document([a], redact=False)["files"][0]["coverage"]["top_unparsed"]]
    assert any(MASK in t for t in safe) and not any("hf_ab" in t for t in safe)
    assert any("hf_ab<n>cd" in t for t in raw) and not any(MASK in t for t in raw)


# --------------------------------------------------------------------------- the function itself


@pytest.mark.parametrize(("name", "form", "secret"), FORMS, ids=[f[0] for f in FORMS])
def test_every_form_masked_in_one_string(name: str, form: str, secret: str) -> None:
    r = Redactor()
    out = r.text(form)
    assert secret not in out and MASK in out and r.total >= 1
    assert r.text(out) == out  # idempotent: nothing left to mask


@pytest.mark.parametrize(
    "text",
    [
        "Decode batch. #running-req: 3, #token: 4772, token usage: 0.97, gen throughput (token/s): 1.5",
        "max_total_num_tokens=396288, max_prefill_tokens=16384, --max-total-tokens 4096",
        "server_args=ServerArgs(api_key=None, tokenizer_path='x', skip_tokenizer_init=False, password='')",
        "http://0.0.0.0:30000/generate  KeyError: 'api_key'  cache key: 5  new_token=5  token: 123456789",
        "hf_hub_download failed; sk-short; Bearer of bad news",
        "Qwen/QwenVLForConditionalGenerationWithExtraHeads",  # base64-shaped, but no digit: a name
    ],
)
def test_harmless_text_is_left_alone(text: str) -> None:
    r = Redactor()
    assert r.text(text) == text and r.total == 0


def test_pem_block_split_over_lines_is_masked_to_its_end() -> None:
    r = Redactor()
    lines = ["key follows", "-----BEGIN RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEAx", "abc def",
             "-----END RSA PRIVATE KEY-----", "after"]
    out = r.lines(lines)
    assert out[0] == "key follows" and out[-1] == "after"
    assert out[2] == MASK and out[3] == MASK and out[4] == "-----END RSA PRIVATE KEY-----"
    assert r.counts["private-key"] == 1
    data = r.data({"evidence": [{"text": t} for t in lines]})
    assert [d["text"] for d in data["evidence"]] == out


def test_a_pem_block_opened_in_one_field_does_not_swallow_the_next() -> None:
    r = Redactor()
    out = r.data({"message": "key: -----BEGIN PRIVATE KEY-----MIIEvQ", "remedy": "use --api-key-file", "n": 1})
    assert out["remedy"] == "use --api-key-file" and "MIIEvQ" not in out["message"]
    assert r.text("-----BEGIN PRIVATE KEY-----abc") != r.text("plain") == "plain"


def test_secret_named_keys_are_masked_whole() -> None:
    r = Redactor()
    out = r.data({"api_key": "anything", "--hf-token": "x", "HF_TOKEN": "y", "api_key_unset": None, "tp_size": 2,
                  "env.MY_TOKEN": "z", "flags.--api-key": "w"})
    assert out == {"api_key": MASK, "--hf-token": MASK, "HF_TOKEN": MASK, "api_key_unset": None, "tp_size": 2,
                   "env.MY_TOKEN": MASK, "flags.--api-key": MASK}
    assert r.counts["secret-field"] == 5


# --------------------------------------------------------------------------- linear time, by counting

N = 262_144
ADVERSARIAL = {
    "letters": "a" * N,
    "upper-underscore": "A_" * (N // 2),
    "url-prefixes": "a://b:" * (N // 6),
    "open-quotes": "api_key='" * (N // 9),
    "bearers": "Bearer " * (N // 7),
    "flag-dashes": "--a-" * (N // 4),
    "dashes": "-" * N,
    "pem-begins": "-----BEGIN PRIVATE KEY-----" * (N // 27),
    "jwt-starts": "eyJ" + "a" * N,
    "env-names": "A_TOKEN" * (N // 7),
    "queries": "?token" * (N // 6),
    "at-signs": "a://b:" + "@" * N,
    "base64": "QWxhZGRpbjpvcGVuIHNlc2FtZQ1" * (N // 27),
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_long_lines_take_a_bounded_number_of_scans(name: str) -> None:
    """A 262,144-character line costs the same number of regex scans as a short one (the scans
    are linear by construction: literal-anchored alternatives, bounded repeats, no failing tail
    after an unbounded run); a quadratic pattern would not finish this test."""
    text = ADVERSARIAL[name]
    long_r, short_r = Redactor(), Redactor()
    long_r.text(text)
    short_r.text(text[:64])
    assert long_r.scans <= 3 and short_r.scans <= 3


def test_a_long_launch_command_is_one_string_scanned_a_bounded_number_of_times() -> None:
    flags = " ".join(f"--flag-{i} value-{i}" for i in range(6000))
    command = f"python3 -m sglang.launch_server {flags} --api-key QwXcmdSecretz {flags}"[: 1 << 16]
    command = command[: (1 << 16) - 40] + " --api-key QwXcmdSecretz"
    r = Redactor()
    out = r.text(command)
    assert "QwXcmdSecretz" not in out and r.scans == 3 and r.counts["secret-flag"] == 1
    # Each masked secret costs one replacement, not a rescan: many secrets, still three scans
    # (the needle prefilter, then the two full scans).
    many = " ".join(f"--api-key QwXsecret{chr(97 + i % 26)}" for i in range(5000))
    r2 = Redactor()
    assert MASK in r2.text(many) and r2.scans == 3 and r2.counts["secret-flag"] == 5000


def test_a_repeated_string_is_scanned_once_and_counted_every_time() -> None:
    """Output documents repeat strings (keys, ranks, the same traceback on every rank): each
    distinct string is scanned once per redactor, yet every occurrence is masked and counted."""
    secret = "curl -H 'Authorization: Bearer QwXrepeatedSecret1234' http://x"
    doc = [{"text": secret, "rank": f"TP{i % 4}", "line": i} for i in range(1000)]
    r = Redactor()
    out = r.data({"items": doc})
    assert all("QwXrepeatedSecret1234" not in item["text"] for item in out["items"])
    assert r.counts["bearer-token"] == 1000
    # distinct strings: the secret (the needle prefilter and two full scans), 4 ranks and 4 keys
    # (items, text, rank, line: no needle, one scan each); the list of dicts is no list of
    # strings, so no joined-words pass
    assert r.scans == 3 + 4 + 4, r.scans
    fresh = Redactor()
    assert [fresh.data(item) for item in doc] == out["items"] and fresh.counts == r.counts


def test_a_pem_block_across_lines_is_not_taken_from_the_memo() -> None:
    """Inside a PEM block a line is masked whole whatever it says: the memo of a line seen outside
    the block must not leak it, nor a line seen inside the block be reused outside."""
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"
    lines = ["plain text", "-----BEGIN PRIVATE KEY-----", "plain text", body, "-----END PRIVATE KEY-----", "plain text"]
    r = Redactor()
    out = r.lines(lines)
    assert out[0] == "plain text" and out[2] == MASK and out[3] == MASK and out[5] == "plain text"
    assert r.text("plain text") == "plain text" and r.counts["private-key"] == 1


def test_every_alternative_starts_with_a_literal() -> None:
    """Every alternative starts with a literal, so the engine skips ahead in C to the next place a
    secret can start (an edit that loses this makes every output tens of times slower)."""
    from logparse.render.redact import _CASED, _FOLDED

    for kind, source in _FOLDED + _CASED:
        assert re.match(r"\\[?&;]|[A-Za-z0-9_:-]", source), (kind, source[:20])


# Found by the 10,000-case campaign (benchmarks/fuzz.py, seed 11): a secret whose context was in
# another item of a list, and a key ID with the next word glued on.
def test_a_secret_split_across_list_items_is_masked_in_every_item_it_covers() -> None:
    # A pasted `--model-path <moAuthorization: Bearer KEY…` parsed into a flag's list of values.
    r = Redactor()
    out = r.data({"model": ["<moAuthorization:", "Bearer", "AKIAIOSFODNN7EXAMPLEdel>"]})
    assert "AKIAIOSFODNN7EXAMPLE" not in json.dumps(out)
    assert out["model"][:2] == ["<moAuthorization:", "Bearer"]
    # argv split into words: the flag in one item, its value in the next.
    argv = r.data(["python3", "-m", "sglang.launch_server", "--api-key", "QwXargvSecret9", "--tp", "8"])
    assert argv == ["python3", "-m", "sglang.launch_server", "--api-key", MASK, "--tp", "8"]
    # Items without a secret are left as they are, and the count says what was masked.
    plain = Redactor()
    assert plain.data(["--tp", "8", "--model-path", "/models/x"]) == ["--tp", "8", "--model-path", "/models/x"]
    assert plain.total == 0


def test_an_aws_key_id_with_a_glued_suffix_is_still_masked() -> None:
    r = Redactor()
    assert "AKIAIOSFODNN7EXAMPLE" not in r.text("tvm.error.Internal AKIAIOSFODNN7EXAMPLEE")
    assert "AKIAIOSFODNN7EXAMPLE" not in r.text("AKIAIOSFODNN7EXAMPLEError: bad")
    assert r.counts["aws-access-key-id"] == 2


def test_campaign_cases_leak_no_secret_in_analyze_json(tmp_path: Path) -> None:
    from logparse.cli.main import main

    cases = {
        "split.log": "Example: sglang serve --model-path <moAuthorization: Bearer AKIAIOSFODNN7EXAMPLEdel> [opt\n",
        "glued.log": "ValueError: bad\ntvm.error.Internalapi_key: AKIAIOSFODNN7EXAMPLEE\n",
    }
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        res = CliRunner().invoke(main, ["analyze", "--format", "json", "--jobs", "1", str(path)])
        assert res.exit_code in (0, 1), res.output
        assert "AKIAIOSFODNN7EXAMPLE" not in res.output, name


def test_a_rule_of_dashes_glued_to_a_title_is_no_flag() -> None:
    """bench_serving's section rules ('-----Inter-Token Latency-----') hold '-token' after dashes:
    not a `--…-token VALUE` flag, which starts a word (seen in a real bench_serving block)."""
    from logparse.render.redact import redact_text

    rule = "---------------Inter-Token Latency----------------"
    assert redact_text(rule) == rule
    assert redact_text("      " + rule) == "      " + rule
    assert redact_text("serve --inter-token abc123") == "serve --inter-token [REDACTED]"
    assert redact_text('cmd="--api-key abc123"') == 'cmd="--api-key [REDACTED]"'


# --------------------------------------------------------------------------- the needle prefilter


def test_a_string_without_a_needle_skips_the_full_scans() -> None:
    """Most output strings (ranks, phase names, numbers as text, frames) can hold no secret: one
    prefilter scan each, not the two full scans."""
    r = Redactor()
    doc = {"ranks": ["TP0", "TP1"], "phase": "load_weights", "frames": ['File "/x/y.py", line 3, in run']}
    out = r.data(doc)
    assert out == doc and r.total == 0
    # 7 distinct strings (3 keys, 4 values) and the two ranks joined (a list of words): one scan each
    assert r.scans == 7 + 1, r.scans


def _without_prefilter(monkeypatch: pytest.MonkeyPatch) -> None:
    from logparse.render import redact

    monkeypatch.setattr(redact, "_NEEDLE", re.compile(""))  # every string takes the full scans


def _answers(texts: list[str]) -> tuple[list[str], dict[str, int], list[str]]:
    r = Redactor()
    one = [r.text(t) for t in texts]
    return one, dict(r.counts), r.lines(texts)


def _fixture_texts() -> list[str]:
    root = Path(__file__).parents[1] / "fixtures"
    texts: list[str] = []
    for path in sorted([*root.glob("logs/*"), *root.glob("corpus/dev/*.log"), *root.glob("rules/*/*.log")]):
        if path.is_file() and path.suffix != ".gz":
            texts.extend(path.read_text(encoding="utf-8", errors="replace").splitlines())
    return texts


def test_the_prefilter_changes_no_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every fixture line, every secret form, the harmless texts and the adversarial lines: the
    same redaction, counts and multi-line (PEM) answers with and without the prefilter."""
    texts = _fixture_texts() + [form for _n, form, _s in FORMS] + [t[:8192] for t in ADVERSARIAL.values()]
    texts += [t.upper() for t in texts[-len(FORMS) - len(ADVERSARIAL):]]  # the cased shapes, and case folding
    assert len(texts) > 10_000
    fast = _answers(texts)
    _without_prefilter(monkeypatch)
    assert _answers(texts) == fast


def _alternatives() -> list[tuple[str, str, bool]]:
    from logparse.render.redact import _CASED, _FOLDED

    return [(kind, source, True) for kind, source in _FOLDED] + [(kind, source, False) for kind, source in _CASED]


@pytest.mark.parametrize(("kind", "source", "folded"), _alternatives(), ids=[a[0] for a in _alternatives()])
def test_every_match_of_every_alternative_holds_a_needle(kind: str, source: str, folded: bool) -> None:
    """The prefilter's contract, alternative by alternative: any text an alternative matches
    contains one of the needles, or the full scans mask nothing in it (a free-standing `token`
    with a bare number: token-value leaves counters alone) (texts generated from the
    alternative's own regex)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from logparse.render import redact
    from logparse.render.redact import _lower, needle

    @settings(max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.from_regex(re.compile(source), fullmatch=False))
    def holds_a_needle(text: str) -> None:
        # The folded alternatives read the lower-cased text, as the prefilter does.
        if needle().search(text if folded else _lower(text)):
            return
        kept = redact._NEEDLE
        redact._NEEDLE = re.compile("")  # the full scans, whatever the text
        try:
            assert Redactor().text(text) == text, (kind, text)
        finally:
            redact._NEEDLE = kept

    holds_a_needle()
