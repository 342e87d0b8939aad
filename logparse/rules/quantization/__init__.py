"""Rules of the 'quantization' family (see shared/diagnoses.md), one module per rule: DeepGEMM scale
formats (deepgemm), scale tensors the loader does not know (scale), and tensor-parallel partitions
that do not divide the quantization block (block)."""

from __future__ import annotations

from logparse.rules.quantization.block import TP_CANDIDATES, quant_block_misaligned, tp_candidates
from logparse.rules.quantization.deepgemm import deepgemm_scale_format
from logparse.rules.quantization.scale import quant_method, quant_scale_missing

__all__ = [
    "TP_CANDIDATES",
    "deepgemm_scale_format",
    "quant_block_misaligned",
    "quant_method",
    "quant_scale_missing",
    "tp_candidates",
]
