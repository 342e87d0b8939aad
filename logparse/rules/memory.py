"""Rules of the 'memory' family (see shared/diagnoses.md)."""

from __future__ import annotations
