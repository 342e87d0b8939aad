"""Transformer callbacks for grammars/failures.lark."""

from __future__ import annotations


class FailureCallbacks:

    def killed(self, children: list) -> tuple:
        from logparse.events import Killed

        return Killed, {}
