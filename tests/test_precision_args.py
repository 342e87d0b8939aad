"""Precision of invalid-server-args: a traceback is the argument processing's only when a function
of server_args.py ran; an import chain through its module level is an import failure."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import analyze_text

_SITE = "/usr/local/lib/python3.12/dist-packages/sglang"
_LAUNCH = f"""\
Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "<frozen runpy>", line 88, in _run_code
  File "{_SITE}/launch_server.py", line 30, in <module>
    from sglang.srt.server_args import prepare_server_args
"""
_IMPORT_CHAIN = _LAUNCH + f"""\
  File "{_SITE}/srt/server_args.py", line 71, in <module>
    from sglang.srt.utils.hf_transformers_utils import check_gguf_file, get_config
  File "{_SITE}/srt/utils/hf_transformers_utils.py", line 78, in <module>
    from sglang.srt.configs.deepseek_v4 import DeepSeekV4Config
  File "{_SITE}/srt/configs/deepseek_v4.py", line 7, in <module>
    @dataclass
     ^^^^^^^^^
"""
_ARGS_CHECK = _LAUNCH.replace("from sglang.srt.server_args import prepare_server_args",
                              "server_args = prepare_server_args(sys.argv[1:])") + f"""\
  File "{_SITE}/srt/server_args.py", line 5592, in prepare_server_args
    return ServerArgs.from_cli_args(raw_args)
  File "{_SITE}/srt/server_args.py", line 733, in __post_init__
    self._handle_model_specific_adjustments()
"""


def _fired(tmp_path: Path, text: str) -> set[str]:
    return set(analyze_text(tmp_path, text).fired())


def test_a_cut_import_chain_through_server_args_module_is_not_an_args_failure(tmp_path: Path) -> None:
    assert "invalid-server-args" not in _fired(tmp_path, _IMPORT_CHAIN)


def test_an_import_chain_with_its_exception_is_not_an_args_failure(tmp_path: Path) -> None:
    text = _IMPORT_CHAIN + "TypeError: non-default argument 'rope_theta' follows default argument\n"
    assert "invalid-server-args" not in _fired(tmp_path, text)


def test_a_cut_traceback_in_an_args_function_is_still_an_args_failure(tmp_path: Path) -> None:
    assert "invalid-server-args" in _fired(tmp_path, _ARGS_CHECK)
