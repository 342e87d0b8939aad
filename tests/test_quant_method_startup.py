"""A traceback through a quantization method's layer-construction calls (`get_quant_method`,
`create_weights`, `process_weights_after_loading`) was raised while the model was built: start-up,
even when the excerpt keeps only its tail."""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.engine.core import analyze

# sgl-project/sglang#9642 (dev/p-025), the tail as pasted
TAIL = """  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/layers/quantization/compressed_tensors/compressed_tensors.py", line 129, in get_quant_method
    scheme = self.get_scheme(layer=layer, layer_name=prefix)
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/layers/quantization/compressed_tensors/compressed_tensors.py", line 428, in _get_scheme_from_parts
    return CompressedTensorsW8A8Int8(
NameError: name 'CompressedTensorsW8A8Int8' is not defined. Did you mean: 'CompressedTensorsW8A8Fp8'?
"""
# constructed (not a pasted log): the post-load step of fp8.py's quantization method
WEIGHTS = """Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/layers/quantization/fp8.py", line 412, in process_weights_after_loading
    layer.weight_scale = torch.nn.Parameter(weight_scale, requires_grad=False)
RuntimeError: CUDA error: invalid argument
"""


@pytest.mark.parametrize("text", [TAIL, WEIGHTS])
def test_a_quant_methods_construction_is_startup(text: str, tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text(text)
    a = analyze(str(log))
    assert a.outcome == "crashed-at-startup"
