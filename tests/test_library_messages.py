"""The libraries' message templates (grammars/source-messages/<package>.txt, grammar/sourcemsgs.py):
every file loads and names the wheels it came from; real lines each library prints are classified
`library-source`; near misses (a template with more after it, a cut too short, a line that only
shares a template's shape) are not; building the index compiles nothing and costs one bucket
append per template."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from logparse.grammar import sourcemsgs
from logparse.grammar.resources import grammar_dir
from logparse.grammar.sourcemsgs import LibraryMessages, SourceMessages, library_messages
from logparse.parsing.classify import classify

FOLDER = grammar_dir() / sourcemsgs.FOLDER
LIBRARY_FILES = sorted(p for p in FOLDER.glob("*.txt") if p.name != sourcemsgs.SGLANG)

# One or more real lines per package: from the shared/dev corpus where one is there (noted), else
# as the package's own source prints it (the call's text with values filled in).
SAMPLES: dict[str, list[str]] = {
    "uvicorn": [
        "Started server process [3106]",
        "Waiting for application startup.",
        "Application startup complete.",
        "Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)",
        "Shutting down",
        "Finished server process [3106]",
    ],
    "huggingface_hub": [
        ("Xet Storage is enabled for this repo, but the 'hf_xet' package is not installed. Falling back to regular "
        "HTTP download. For better performance, install the package with: `pip install huggingface_hub[hf_xet]` "
        "or `pip install hf_xet`"),
    ],
    "accelerate": [
        "The following values were not passed to `accelerate launch` and had defaults used instead:",
    ],
    "nixl": [
        "Backend UCX was instantiated",  # dev f-021, after NIXL's own envelope
        "Initialized NIXL agent: 50005a36-7f8e-4017-ae04-aa8beaeb3325",  # dev f-021
    ],
    "deep_gemm": [
        "Auto-tuning JIT kernel gemm_fp8_fp8_bf16_nt with keys {'N': 4096, 'K': 7168}",
    ],
    "xgrammar": [
        "prepend_space_in_tokenization is deprecated. Use add_prefix_space instead.",
    ],
    "torch": [
        ("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage "
        "class. This should only matter to you if you are using storages directly.  To access UntypedStorage "
        "directly, use tensor.untyped_storage() instead of tensor.storage()"),
    ],
    "vllm": ["Automatically detected platform cuda."],
    "ray": ["Started a local Ray instance."],
    "flashinfer-python": [
        "Prebuilt kernels not found, using JIT backend",  # dev e-027
        "Loading CUDA module for symbol: batch_decode_with_paged_kv_cache",
    ],
    "triton": ["Autotuning kernel _fwd_kernel with config BLOCK_M: 64, BLOCK_N: 64, num_warps: 4"],
    "sgl-kernel": ["Please ensure sgl_kernel is properly installed with:"],
    "mooncake": ["Allocator backend probing is unsupported"],
    "fastapi": ['To use the fastapi command, please install "fastapi[standard]":'],
    "outlines": ["Error in LLMatcher: unexpected token"],
    "transformers": [
        ("The attention mask and the pad token id were not set. As a consequence, you may observe unexpected "
        "behavior. Please pass your input's `attention_mask` to obtain reliable results."),
        "Using a slow image processor as `use_fast` is unset and a slow processor was saved with this model. `use_fast=True` will be the default behavior in v4.52, even if the model was saved with a slow processor. This will result in minor differences in outputs. You'll still be able to use a slow processor with `use_fast=False`.",
    ],
}

# Lines that must not be taken as any library's message.
NEAR_MISSES = [
    "Application startup complete. Then the scheduler crashed",  # a fixed template with more after it
    "Waiting for appl",  # a cut head shorter than MIN_CUT_PREFIX
    "Backend",
    "the model answered something unexpected here",
    "Before this PR：",
    "12 34 56",
]


def test_every_library_file_loads_and_names_its_wheels() -> None:
    assert LIBRARY_FILES, "no library template files shipped"
    for path in LIBRARY_FILES:
        lines = path.read_text(encoding="utf-8").splitlines()
        assert lines[0].startswith("# ") and "log-message templates" in lines[0], path.name
        assert lines[1].startswith("# From: "), path.name
        wheels = lines[1][len("# From: "):].split(", ")
        assert all(re.search(r"\.(?:whl|tar\.gz)$", w) for w in wheels), (path.name, wheels)
        assert len(SourceMessages(lines)) > 0, path.name
    assert set(library_messages().packages) == {p.stem for p in LIBRARY_FILES}


@pytest.mark.parametrize(("package", "line"), [(p, line) for p, lines in SAMPLES.items() for line in lines])
def test_real_library_lines_are_library_source(package: str, line: str) -> None:
    assert library_messages().which(line) == package
    assert classify(line) == "library-source"


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_misses_are_not_library_messages(line: str) -> None:
    assert library_messages().which(line) is None
    assert classify(line) != "library-source"


def test_safeguards_at_build_time() -> None:
    messages = SourceMessages([
        "# header",
        "{}: {}",  # only holes and punctuation: dropped
        "Error {} at {}",  # too little literal text: dropped
        "{} is {}",  # floating, no long piece: dropped
        "{} finished loading the checkpoint shards",  # floating with a long piece: kept
        "Waiting for application startup.",
    ])
    assert len(messages) == 2
    assert not messages.match("x: y") and not messages.match("Error 3 at 4") and not messages.match("a is b")
    assert messages.match("rank 3 finished loading the checkpoint shards")
    assert not messages.match("rank 3 finished loading the checkpoint shards, then died")
    assert messages.is_cut_prefix("Waiting for applic")
    assert not messages.is_cut_prefix("Waiting")


def test_index_build_compiles_nothing_and_is_one_entry_per_template(monkeypatch: pytest.MonkeyPatch) -> None:
    # Linear build: every kept template is appended to exactly one bucket, and no regex is compiled
    # until a line asks (counted, not timed).
    compiled: list[str] = []
    real_compile = re.compile

    def counting(pattern: str, flags: int = 0) -> re.Pattern[str]:
        compiled.append(pattern)
        return real_compile(pattern, flags)

    templates = [f"Loaded shard {i} of {{}} from {{}} in {{}} seconds" for i in range(500)]
    templates += [f"{{}} worker number {i} has joined the group" for i in range(500)]
    monkeypatch.setattr(sourcemsgs.re, "compile", counting)
    messages = SourceMessages(templates)
    assert compiled == []
    assert len(messages) == len(templates)
    # A lookup compiles its first word's alternation once, and only the floating templates that
    # share a word with the line are tried.
    assert messages.match("rank7 worker number 42 has joined the group")
    assert len(compiled) == 1  # `rank7` starts no template; one floating template shares its words
    assert not messages.match("Loaded shard 3 of 8")
    assert messages.match("Loaded shard 3 of 8 from /models/x in 0.2 seconds")


def test_library_index_is_lazy() -> None:
    # A short log whose unparsed lines are all classified before the template lookups (here: a
    # foreign logger's record) never builds the libraries' index.
    library_messages.cache_clear()
    try:
        assert classify("DEBUG:urllib3.connectionpool:http://10.0.5.12:9091 \"PUT /metrics HTTP/1.1\"") == "foreign-logger"
        assert library_messages.cache_info().currsize == 0
    finally:
        library_messages.cache_clear()


def test_library_messages_object_is_per_package() -> None:
    libs = LibraryMessages({"a": ["Alpha service is starting now"], "b": ["Beta service is starting now"]})
    assert libs.which("Beta service is starting now") == "b"
    assert libs.which("Gamma service is starting now") is None
    assert libs.is_cut_prefix("Alpha service is")


def test_index_is_cached_by_content_and_rebuilt_when_damaged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    texts = {"pkg": "# h\n# From: x.whl\nWaiting for application startup.\n{} worker number {} has joined the group\n"}
    lines = ["Waiting for application startup.", "rank 3 worker number 42 has joined the group", "Waiting for appl"]
    first = sourcemsgs._indices(lambda: texts)["pkg"]
    files = list((tmp_path / "logdiag").glob("sourcemsgs-*.json"))
    assert len(files) == 1
    cached = sourcemsgs._indices(lambda: texts)["pkg"]  # read back from the JSON
    assert [cached.match(x) for x in lines] == [first.match(x) for x in lines] == [True, True, False]
    assert cached.is_cut_prefix("Waiting for applic")
    # Another text is another key; a damaged file is ignored and rewritten.
    files[0].write_text(files[0].read_text().replace('"heads": [', '"heads": [1, '))
    rebuilt = sourcemsgs._indices(lambda: texts)["pkg"]
    assert [rebuilt.match(x) for x in lines] == [True, True, False]
    other = sourcemsgs._indices(lambda: {"pkg": texts["pkg"] + "Application startup complete.\n"})["pkg"]
    assert other.match("Application startup complete.") and not rebuilt.match("Application startup complete.")


def test_files_key_reads_the_files_only_when_they_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from logparse.grammar.cache import content_key, files_key

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("Waiting for application startup.\n")
    b.write_text("{} worker number {} has joined the group\n")
    reads: list[int] = []

    def parts() -> list[bytes]:
        reads.append(1)
        return [b"tag", a.read_bytes(), b.read_bytes()]

    first = files_key("tag", [str(a), str(b)], parts)
    assert first == content_key([b"tag", a.read_bytes(), b.read_bytes()]) and len(reads) == 1
    assert files_key("tag", [str(a), str(b)], parts) == first and len(reads) == 1  # unchanged: not read
    # Rewritten with the same text (a reinstall): read again, and the same content key.
    a.write_text("Waiting for application startup.\n")
    import os
    os.utime(a, ns=(a.stat().st_atime_ns, a.stat().st_mtime_ns + 10**9))
    assert files_key("tag", [str(a), str(b)], parts) == first and len(reads) == 2
    # An edit is another key, whatever the dates say.
    stamp = b.stat()
    b.write_text("{} worker number {} has left the group!\n")
    os.utime(b, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    changed = files_key("tag", [str(a), str(b)], parts)
    assert changed != first and len(reads) == 3
    # A file that is gone: computed from the contents (the caller's parts), nothing remembered.
    assert files_key("tag", [str(a), str(tmp_path / "missing.txt")], lambda: [b"x"]) == content_key([b"x"])


def test_dynamo_workers_messages_are_a_librarys() -> None:
    # NVIDIA Dynamo running an SGLang worker (sgl-project/sglang#30242, dev/o-014): its own
    # register.py messages, from grammars/source-messages/ai-dynamo.txt.
    from logparse.parsing.classify import classify

    assert classify("Successfully registered LLM with runtime config") == "library-source"
    assert classify("Model registration succeeded; processing queued requests") == "library-source"
    assert classify("Model registration failed; dropping queued requests") is None
