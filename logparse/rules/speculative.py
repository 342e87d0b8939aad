"""Rules of the 'speculative' family (see shared/diagnoses.md)."""

from __future__ import annotations
