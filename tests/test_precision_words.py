"""Precision of decisions rules once made from a word in the text: what decides is the record's
structure — the exception type, the message family the catalog names (with its fields), the frame
paths, the process a header names — so the same word elsewhere in a message changes nothing."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import analyze_text
from tests.conftest import findings_named as named

SG = "/usr/local/lib/python3.12/dist-packages/sglang/srt"


def _fired(tmp_path: Path, text: str) -> set[str]:
    return set(analyze_text(tmp_path, text).fired())


# --------------------------------------------------------------------------- nccl-timeout


def test_another_timeout_that_names_an_nccl_variable_is_no_nccl_timeout(tmp_path: Path) -> None:
    # a client's or a health probe's timeout whose message mentions NCCL_* settings is not NCCL's
    for exc in ("RuntimeError: request timed out after 5000ms (raise NCCL_TIMEOUT or --watchdog-timeout)",
                "TimeoutError: Timed out after 30000 ms waiting for the health probe; NCCL_DEBUG=INFO may help"):
        assert "nccl-timeout" not in _fired(tmp_path, exc + "\n"), exc


def test_an_nccl_abort_timeout_is_still_an_nccl_timeout(tmp_path: Path) -> None:
    # torch raises NCCL's failures as DistBackendError: the type says it, not the word
    text = ("torch.distributed.DistBackendError: [PG ID 1 PG GUID 1 Rank 3] Future for ProcessGroup abort "
            "timed out after 600000 ms\n")
    assert "nccl-timeout" in _fired(tmp_path, text)


def test_a_timeout_raised_in_torch_distributed_is_an_nccl_timeout(tmp_path: Path) -> None:
    text = ("Traceback (most recent call last):\n"
            '  File "/usr/local/lib/python3.12/dist-packages/torch/distributed/distributed_c10d.py", line 2501, in all_reduce\n'
            "    work.wait()\n"
            "RuntimeError: [PG ID 1 PG GUID 1 Rank 3] Future for ProcessGroup abort timed out after 600000 ms\n")
    assert "nccl-timeout" in _fired(tmp_path, text)


# --------------------------------------------------------------------------- host-oom's self-kill


def _killed_after(header: str) -> str:
    return (f"[2026-01-05 10:00:00] {header}Traceback (most recent call last):\n"
            f'  File "{SG}/entrypoints/http_server.py", line 1100, in _wait_and_warmup\n'
            "    raise RuntimeError(res.text)\n"
            "RuntimeError: {'error': 'boom'}\n"
            "Killed\n")


def test_the_warmup_error_header_explains_the_kill(tmp_path: Path) -> None:
    # SGLang kills its own process tree after `Initialization failed. warmup error:`
    assert "host-oom" not in _fired(tmp_path, _killed_after("Initialization failed. warmup error: "))


def test_the_word_warmup_in_another_header_decides_nothing(tmp_path: Path) -> None:
    # a header's process decides whether SGLang killed itself, not a word after it
    said = _fired(tmp_path, _killed_after("DetokenizerManager hit an exception: during warmup "))
    plain = _fired(tmp_path, _killed_after("DetokenizerManager hit an exception: during startup "))
    assert said == plain


# --------------------------------------------------------------------------- spec-mamba-extra-buffer's remedy


def _mamba_check(message: str) -> str:
    return ("Traceback (most recent call last):\n"
            f'  File "{SG}/server_args.py", line 1230, in _handle_mamba_radix_cache\n'
            "    assert (\n"
            f"AssertionError: {message}\n")


def test_the_pd_wording_is_told_by_its_catalog_field(tmp_path: Path) -> None:
    a = analyze_text(tmp_path, _mamba_check("extra_buffer_lazy unsupported under PD disaggregation; use "
                                            "--mamba-radix-cache-strategy extra_buffer."))
    [f] = named(a, "spec-mamba-extra-buffer")
    assert f.data.get("needs") != "no_buffer"


def test_the_words_unsupported_under_elsewhere_keep_the_no_buffer_remedy(tmp_path: Path) -> None:
    # the model check (first wording) matched: the words later in the text are not the PD check
    a = analyze_text(tmp_path, _mamba_check("extra_buffer is not supported for KimiLinearForCausalLM; use no_buffer. "
                                            "(platforms unsupported under this build: see the docs)"))
    [f] = named(a, "spec-mamba-extra-buffer")
    assert f.data.get("needs") == "no_buffer"


# --------------------------------------------------------------------------- deprecated-entrypoint


_WARNING = ("/usr/local/lib/python3.12/dist-packages/sglang/launch_server.py:51: UserWarning: 'python -m "
            "sglang.launch_server' is still supported, but 'sglang serve' is the recommended entrypoint.")


def test_the_printed_deprecation_warning_fires(tmp_path: Path) -> None:
    assert "deprecated-entrypoint" in _fired(tmp_path, _WARNING + "\n")


def test_a_sentence_quoting_the_warning_is_no_warning(tmp_path: Path) -> None:
    # the grammar's warning location takes any text before `path:N: Category:`; its path must be one
    for text in (f"I see `{_WARNING}` in the log\n", f"When I start it I get {_WARNING}\n",
                 f"**Describe the bug** {_WARNING}\n"):
        assert "deprecated-entrypoint" not in _fired(tmp_path, text), text


# --------------------------------------------------------------------------- unsupported-gpu-arch's remedy


def _arch(tmp_path: Path, exc: str) -> str:
    a = analyze_text(tmp_path, "Traceback (most recent call last):\n"
                               f'  File "{SG}/layers/attention/flashattention_backend.py", line 300, in __init__\n'
                               "    raise RuntimeError(msg)\n"
                               f"{exc}\n")
    [f] = named(a, "unsupported-gpu-arch")
    return f.remedy


def test_flashattention2s_capability_check_gets_the_sm80_remedy(tmp_path: Path) -> None:
    # 'Flash attention … compute capability >= 80' is FlashAttention-2's SM80 floor (the catalog's
    # gpu-arch-kind fa2), not FlashAttention-3's Hopper-only check, whatever words it shares with it
    remedy = _arch(tmp_path, "RuntimeError: Flash attention currently only supported for compute capability >= 80")
    assert "Ampere (SM80)" in remedy and "FlashAttention-3" not in remedy


def test_the_fa3_backend_check_gets_the_hopper_remedy(tmp_path: Path) -> None:
    remedy = _arch(tmp_path, "ValueError: The 'fa3' backend is not supported on Blackwell GPUs")
    assert "FlashAttention-3 runs on Hopper" in remedy
