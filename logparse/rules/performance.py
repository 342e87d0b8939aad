"""Rules of the 'performance' family (see shared/diagnoses.md)."""

from __future__ import annotations
