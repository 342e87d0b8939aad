"""Rules of the 'speculative' family (see shared/diagnoses.md): spec v2 with topk > 1 (topk), hybrid
mamba models without the extra buffer (mamba), draft workers that fail to start (draft), other
speculative argument checks (arguments), and acceptance that is low or absent while serving
(acceptance). The configuration and the measured acceptance they read are run facts
(logparse/run/speculative.py, shared with the report). Importing the package registers the rules."""

from __future__ import annotations

from logparse.rules.speculative import acceptance, arguments, draft, mamba, topk  # noqa: F401 — registrations
