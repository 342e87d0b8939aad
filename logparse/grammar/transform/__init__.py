"""The lark Transformer that turns parsed lines into (envelope, event class, fields).

One mixin per message family, each in its own module next to the grammar file it serves.
"""

from __future__ import annotations

from logparse.grammar.transform.bench import BenchCallbacks
from logparse.grammar.transform.envelope import Envelope, EnvelopeCallbacks
from logparse.grammar.transform.failures import FailureCallbacks
from logparse.grammar.transform.known import KnownCallbacks
from logparse.grammar.transform import notices as _notices  # noqa: F401  (registers its field parsers)
from logparse.grammar.transform.runtime import RuntimeCallbacks
from logparse.grammar.transform.shell import ShellCallbacks
from logparse.grammar.transform.startup import StartupCallbacks

__all__ = ["Envelope", "LineTransformer"]


class LineTransformer(
    EnvelopeCallbacks,
    KnownCallbacks,
    StartupCallbacks, RuntimeCallbacks, FailureCallbacks, BenchCallbacks, ShellCallbacks
):
    """All callbacks. Message callbacks return (event class, fields); `line` adds the envelope.

    lark accepts any object with the callbacks as its `transformer` (it looks them up by rule
    name); not inheriting from lark.Transformer keeps lark out of the import path of the fast path."""

    # Every mixin's callbacks that take plain str from the fast path (one class attribute would
    # hide the others' in the method resolution order).
    PLAIN_TOKEN_CALLBACKS = (RuntimeCallbacks.PLAIN_TOKEN_CALLBACKS + FailureCallbacks.PLAIN_TOKEN_CALLBACKS
                             + StartupCallbacks.PLAIN_TOKEN_CALLBACKS)
