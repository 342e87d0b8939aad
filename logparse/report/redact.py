"""Secret redaction for the report: the one redaction layer of every output, `logparse.render.redact`.

Kept so that report code and callers importing `logparse.report.redact` keep working."""

from __future__ import annotations

from logparse.render.redact import MASK, Redactor, is_secret_key, redact_data, redact_text

__all__ = ["MASK", "Redactor", "is_secret_key", "redact_data", "redact_text"]
