"""Rules of the 'hang' family (see shared/diagnoses.md)."""

from __future__ import annotations
