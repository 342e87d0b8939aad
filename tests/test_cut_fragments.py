"""Cut tails of known templates and cut heads of CPython's traceback texts (parsing/fragments.py):
the cut must fall inside a word and keep enough of the message; a whole message, a tail at a word
boundary or a short scrap is not a fragment."""

from __future__ import annotations

import pytest

from logparse.parsing.fragments import is_cut_after_head, is_cut_python_text, is_cut_tail

TAILS = [
    "vail mem=24.47 GB",  # SGLang: `Capture cuda graph begin. … avail mem={} GB`
    "ory pool end. avail mem=7.84 GB",  # the same family, another template
    "ormers==4.57.1 as a workaround.",  # transformers' RoPE warning, its version masked like a value
    "ost recent call last):",  # CPython's `Traceback (most recent call last):`
    "ling of the above exception, another exception occurred:",
]

NOT_TAILS = [
    "avail mem=7.84 GB",  # starts at a word boundary: a message of its own
    "Memory pool end. avail mem=7.84 GB",  # the whole template, not a cut piece of it
    "ail mem=1 GB",  # too little of the message left to tell which
    "vail mem=24.47 GB and more",  # goes on past the template's end
    "ected all trees",  # no template ends so
    "",
]


@pytest.mark.parametrize("line", TAILS)
def test_cut_tail(line: str) -> None:
    assert is_cut_tail(line)


@pytest.mark.parametrize("line", NOT_TAILS)
def test_not_a_cut_tail(line: str) -> None:
    assert not is_cut_tail(line)


@pytest.mark.parametrize(("line", "cut"), [
    ("The above exception was the direct cause of th", True),
    ("During handling of the above", True),
    ("Current thread 0x00007f3a (most rec", True),  # the thread's id is a value
    ("Traceback (most recent call last):", False),  # whole: the grammar's line, not a cut one
    ("The above", False),  # too short to tell
    ("The above error is the real one", False),
])
def test_cut_python_text(line: str, cut: bool) -> None:
    assert is_cut_python_text(line) is cut


@pytest.mark.parametrize(("line", "cut"), [
    # uvicorn's `Uvicorn running on {} (Press CTRL+C to quit)`, cut in its last piece
    ("Uvicorn running on http://0.0.0.0:9254 (Press CTRL+C to qui", True),
    # SGLang's `Load weight end. type={}, dtype={}, …`, cut inside a value
    ("Load weight end. type=LlamaForCausalLM, dtype=torch.bfl", True),
    ("Uvicorn running on", False),  # the head alone: sourcemsgs' cut prefix, not this
    ("Uvicorn is running fine", False),  # the first word only
    ("Loaded weights", False),
])
def test_cut_after_head(line: str, cut: bool) -> None:
    assert is_cut_after_head(line) is cut
