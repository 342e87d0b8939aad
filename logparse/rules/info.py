"""Rules of the 'info' family (see shared/diagnoses.md)."""

from __future__ import annotations
