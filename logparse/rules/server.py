"""Rules of the 'server' family (see shared/diagnoses.md)."""

from __future__ import annotations
