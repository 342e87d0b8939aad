"""Rules of the 'distributed' family (see shared/diagnoses.md)."""

from __future__ import annotations
