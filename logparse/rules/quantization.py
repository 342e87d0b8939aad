"""Rules of the 'quantization' family (see shared/diagnoses.md)."""

from __future__ import annotations
