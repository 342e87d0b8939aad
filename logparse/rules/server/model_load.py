"""model-load-failure: the model (config, tokenizer or weights) could not be loaded."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logparse.model.events import Event, KnownMessage, Severity, Traceback
from logparse.model.findings import Finding
from logparse.model.text import short
from logparse.rules.context import RuleContext
from logparse.rules.errors import Found, find_message, first_match
from logparse.rules.frames import frame_files, traceback_after
from logparse.rules.registry import rule

# Catalog families (grammars/messages/server.toml) → the kind the finding reports, most specific first.
_KINDS: tuple[tuple[str, str], ...] = (
    ("model-auth", "auth"),
    ("model-not-found", "not-found"),
    ("model-checkpoint-corrupt", "corrupt"),
    ("model-hub-unreachable", "hub"),
    ("model-unknown-type", "unknown-model-type"),
    ("model-architecture-unsupported", "architecture"),
    ("model-processor-unsupported", "processor"),
    ("transformers-version-required", "transformers-version"),
)
_CODES = tuple(code for code, _ in _KINDS)
_LABELS = {"auth": "access to the model repo was refused", "not-found": "model files not found",
           "corrupt": "a checkpoint file is damaged or incomplete",
           "hub": "the Hugging Face hub could not be reached",
           "unknown-model-type": "unknown model_type", "architecture": "architecture not supported",
           "processor": "no multimodal processor for the architecture",
           "transformers-version": "transformers version mismatch", "unknown": "model could not be loaded"}


def _model_kind(ctx: RuleContext, text: str) -> str:
    m = first_match(ctx, _CODES, text)
    return dict(_KINDS)[m[0]] if m is not None else "unknown"


def _model_type(ctx: RuleContext, text: str) -> str | None:
    got = ctx.collect("model-type-name", text) or {}
    name = got.get("model_type") or got.get("key")
    return str(name) if name else None


def _config_lookup(ctx: RuleContext, tb: Traceback) -> bool:
    """A traceback through transformers' AutoConfig whose failing line is the CONFIG_MAPPING lookup
    of the config's model_type (the exception line may be cut)."""
    return "configuration_auto.py" in frame_files(tb) and ctx.match("config-mapping-lookup",
                                                                     ctx.traceback_text(tb)) is not None


def _ignored_imports(ctx: RuleContext, before: int) -> list[KnownMessage]:
    return [e for e in ctx.log.of(KnownMessage) if e.code == "model-import-ignored" and e.line < before]


def _model_remedy(ctx: RuleContext, kind: str, text: str, model: str | None, ignored: list[KnownMessage]) -> str:
    m_ = f" {model}" if model else ""
    if kind == "auth":
        return (f"accept the model's license on its Hugging Face page and authenticate: `huggingface-cli login` or "
                f"`HF_TOKEN=<token>` in the server's environment (for{m_ or ' the gated repo'})")
    if kind == "not-found":
        return (f"check `--model-path`{m_} (a local directory with config.json and the weights, or an exact hub id), "
                "a complete download, and `HF_HUB_OFFLINE` / mount paths in the container")
    if kind == "corrupt":
        # The header is read first: a Git LFS pointer or a cut download fails there, not later.
        return (f"a checkpoint file{m_} is truncated or is a Git LFS pointer: re-download the weights "
                "(`huggingface-cli download <repo> --local-dir <dir>`, or `git lfs pull`) and compare the file "
                "sizes with the hub's")
    if kind == "hub":
        return (f"the hub did not answer for{m_ or ' the model'}: check the network / proxy of the server "
                "(`HTTPS_PROXY`, or `HF_ENDPOINT` for a mirror), authenticate with `HF_TOKEN` when rate-limited, or "
                "download the model first and serve the local directory (`HF_HUB_OFFLINE=1`)")
    if kind == "unknown-model-type":
        name = _model_type(ctx, text)
        return (f"the installed transformers does not know the config's model_type{' ' + name if name else ''}: upgrade it "
                "(`pip install -U transformers`, to the version the model card names) or the SGLang release that "
                "pins it")
    if kind == "architecture":
        return ("upgrade SGLang to a release that implements this architecture, or `--model-impl transformers`"
                + _skipped_module_hint(ignored, "model"))
    if kind == "processor":
        # The registry skips a processor module whose import failed (logged once, at start-up), so
        # an earlier `Ignore import error` is usually the real cause; otherwise this release has none.
        arch = (ctx.match("model-processor-unsupported", text) or {}).get("architecture")
        return (f"this SGLang has no multimodal processor for {arch or 'the model'}: upgrade SGLang to a release "
                "that supports the model, or serve a model it supports; with the Transformers backend "
                "(`--model-impl transformers`) recent releases use a generic processor"
                + _skipped_module_hint(ignored, "processor"))
    if kind == "transformers-version":
        return f"install the transformers version the message asks for: {short(text, 140)}"
    return f"fix the model files / versions the message names: {short(text, 140)}"


def _skipped_module_hint(ignored: list[KnownMessage], what: str) -> str:
    """The earlier `Ignore import error when loading X` that made SGLang skip a model / processor."""
    if not ignored:
        return ""
    e = ignored[0]
    return (f"; first fix the import error of {e.fields.get('module', 'the ' + what + ' module')} at line {e.line} "
            f"({short(str(e.fields.get('error', '')), 100)}), which made SGLang skip that {what}")


@rule(code="SRV002", name="model-load-failure", family="server", severity=Severity.ERROR,
      needs=("tracebacks", "events"), stage="startup")
def model_load_failure(ctx: RuleContext) -> Iterator[Finding]:
    """The model (config, tokenizer or weights) could not be loaded.

    **What it means**
    Hugging Face refused a gated repo (401), the path or files are missing, the installed transformers
    does not know the config's `model_type`, SGLang does not implement the architecture (`Model
    architectures [...] are not supported`, often after an earlier `Ignore import error when loading
    sglang.srt.models.X`) or has no multimodal processor for it (`No processor registered for
    architecture: [...]`), or transformers is too old.

    **Why it matters**
    The server cannot start; the fix is authentication, the path, or a version, not a memory setting.

    **Example**
    ```
    sglang  | [2026-05-19 00:09:18 TP5 EP5] Scheduler hit an exception: Traceback (most recent call last):
    sglang  |   File "/usr/local/lib/python3.12/dist-packages/transformers/models/auto/configuration_auto.py", line 405, in from_pretrained
    sglang  |     config_class = CONFIG_MAPPING[config_dict["model_type"]]
    ```

    **Fix**
    Authenticate (`HF_TOKEN`), fix `--model-path`, or install the transformers / SGLang version the log
    names; when an earlier `Ignore import error` names the model's module, fix that import first.
    """
    model = ctx.views.arg("model_path")
    model = str(model) if model else None
    hits = find_message(ctx, _CODES)
    for tb in ctx.unclaimed(ctx.log.of(Traceback)):
        if any(h.traceback is tb for h in hits) or not _config_lookup(ctx, tb):
            continue
        text = f"{tb.exc_type}: {tb.message}" if tb.exc_type else ctx.traceback_text(tb)
        hits.append(Found("config-mapping-lookup", tb.line, text, {}, tb, tb))
    for hit in sorted(hits, key=lambda h: h.line):
        tb = hit.traceback
        body = ctx.traceback_text(tb) if tb is not None else hit.text
        kind = _model_kind(ctx, hit.text)
        if kind == "unknown" and tb is not None and _config_lookup(ctx, tb):
            kind = "unknown-model-type"
        ignored = _ignored_imports(ctx, hit.line)
        data: dict[str, Any] = {"kind": kind, "model_path": model}
        if ignored:
            data["ignored_imports"] = [{"line": e.line, "module": e.fields.get("module")} for e in ignored[:8]]
        if model_type := _model_type(ctx, body):
            data["model_type"] = model_type
        if tb is not None and tb.exc_type is None:
            what = "the exception line is cut"
            if kind == "unknown-model-type":
                what = ("transformers' CONFIG_MAPPING lookup of the config's model_type failed (the exception line is "
                        "cut; it would name the model_type)")
        else:
            what = short(hit.text, 220)
        message = f"Model load failed ({_LABELS[kind]}{f', {model}' if model else ''}): {what}"
        if ignored:
            message += (f" — note the earlier `Ignore import error when loading {ignored[0].fields.get('module')}` "
                        f"(line {ignored[0].line})")
        events: list[Event] = [hit.event]
        if tb is None:
            after = traceback_after(ctx, hit.line, 4, hit.rank)
            if after is not None and after.line not in ctx.claimed:
                events.append(after)
        yield ctx.finding("model-load-failure", message, _model_remedy(ctx, kind, body, model, ignored),
                          events=events, data=data)
