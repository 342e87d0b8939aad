"""The speculative-decoding configuration a log shows: algorithm, draft, steps / topk / draft tokens,
spec v2, and whether speculation is set up at all — of the whole log or of one launch attempt."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from logparse.model.events import (
    BenchServingResult,
    CaptureEnd,
    Event,
    GraphKind,
    KnownMessage,
    ServerArgs,
)
from logparse.model.text import short

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog
    from logparse.run.views import Views

# Known messages that only a run with speculative decoding prints (see sglang-log-formats §4.3).
SPEC_CODES = frozenset({"spec-v2-enabled", "overlap-disabled-spec-v1", "spec-v2-non-overlap", "mixed-chunk-disabled-spec",
                        "spec-draft-tokens-adjusted", "mtp-draft-path-unneeded", "draft-load-format",
                        "ngram-overlap-disabled", "ngram-draft-tokens-default", "draft-attention-override",
                        "draft-max-position-override"})
_ON = frozenset({"1", "true", "yes", "on"})


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    return None


def _set(v: Any) -> str | None:
    return str(v) if v not in (None, "None", "") else None


@dataclass
class SpecConfig:
    """What the log says about the speculative-decoding configuration."""

    algorithm: str | None = None
    draft_model: str | None = None
    num_steps: int | None = None
    topk: int | None = None
    num_draft_tokens: int | None = None
    spec_v2: bool | None = None  # SGLANG_ENABLE_SPEC_V2 / --enable-beta-spec / W23
    spec_v2_source: str | None = None
    configured: bool = False  # speculation is set up in this log
    explicitly_off: bool = False  # server_args prints speculative_algorithm=None
    evidence: list[Event] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    @property
    def depth(self) -> int | None:
        """Draft steps per verify (the accept length is at most depth + 1)."""
        if self.num_steps:
            return self.num_steps
        if self.num_draft_tokens and self.topk in (1, None):
            return self.num_draft_tokens - 1
        return None

    @property
    def width(self) -> int | None:
        """The largest possible accept length (draft steps + the bonus token)."""
        d = self.depth
        return d + 1 if d else None

    def topk_data(self) -> dict[str, Any]:
        """The draft-tree settings a finding reports (only those the log shows)."""
        return {k: v for k, v in (("topk", self.topk), ("num_steps", self.num_steps),
                                  ("num_draft_tokens", self.num_draft_tokens), ("spec_v2", self.spec_v2_source))
                if v is not None}


def spec_config(log: ParsedLog, views: Views, line: int | None = None) -> SpecConfig:
    """The speculative configuration of the whole log, or of the launch attempt `line` belongs to when
    the log holds several attempts."""
    launches = views.run.launches
    if line is not None and len(launches) > 1:
        launch = views.run.launch_at(line)
        arg = launch.arg
        env = launch.env
    else:
        arg = views.arg
        # the pasted commands' environment only: `env_vars` also takes names that warnings merely
        # suggest ("You can set env SGLANG_ENABLE_SPEC_V2=True …")
        env = views.launch_env
    cfg = SpecConfig()
    cfg.algorithm = _set(arg("speculative_algorithm"))
    cfg.draft_model = _set(arg("speculative_draft_model_path"))
    cfg.num_steps = _int(arg("speculative_num_steps"))
    cfg.topk = _int(arg("speculative_eagle_topk"))
    cfg.num_draft_tokens = _int(arg("speculative_num_draft_tokens"))
    flag = env.get("SGLANG_ENABLE_SPEC_V2")
    if flag is not None:
        cfg.spec_v2 = flag.strip().lower() in _ON
        cfg.spec_v2_source = f"SGLANG_ENABLE_SPEC_V2={flag}"
    if arg("enable_beta_spec") is True:
        cfg.spec_v2, cfg.spec_v2_source = True, "--enable-beta-spec"
    known = log.of(KnownMessage)
    for e in known:
        if e.code == "spec-v2-enabled" and cfg.spec_v2 is None and (line is None or e.line < line):
            cfg.spec_v2, cfg.spec_v2_source = True, f"line {e.line}: spec v2 is enabled"
    if cfg.algorithm:
        cfg.configured = True
        cfg.reasons.append(f"--speculative-algorithm {cfg.algorithm}")
    for e in known:
        reset_for_spec = e.code == "max-running-reset" and "specul" in str(e.fields.get("reason", e.text))
        if e.code in SPEC_CODES or reset_for_spec:
            cfg.configured = True
            cfg.evidence.append(e)
            cfg.reasons.append(f"line {e.line}: {short(e.text, 80)}")
            break
    for c in log.of(CaptureEnd):
        if c.graph_kind in (GraphKind.DRAFT, GraphKind.DRAFT_EXTEND):
            cfg.configured = True
            cfg.evidence.append(c)
            cfg.reasons.append(f"line {c.line}: draft CUDA graph captured")
            break
    if any(not math.isnan(x) for x in log.decode.cols["accept_len"]):
        cfg.configured = True
        cfg.reasons.append("decode lines print accept len")
    if any("accept_length" in b.fields for b in log.of(BenchServingResult)):
        cfg.reasons.append("the benchmark reports an accept length")
    for sa in log.of(ServerArgs):
        if "speculative_algorithm" in sa.args and sa.args["speculative_algorithm"] in (None, "None"):
            cfg.explicitly_off = True
    if cfg.explicitly_off and not cfg.algorithm:
        cfg.configured = False
    return cfg
