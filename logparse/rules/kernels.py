"""Rules of the 'kernels' family (see shared/diagnoses.md)."""

from __future__ import annotations
