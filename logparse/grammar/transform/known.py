"""`known_message`: fixed-text messages (the warnings of formats §4 and similar notices).

Every `-> known_message` alternative starts with a NAMED terminal; its name, in kebab case, is the
message's stable `code` (`MAX_RUNNING_RESET` → `max-running-reset`). A family module registers a
field parser for the terminals whose values matter:

    @known_fields("MAX_RUNNING_RESET")
    def _max_running(tokens: list[str]) -> dict[str, Any]:
        return {"max_running_requests": int(tokens[1])}

`tokens` are the texts of all kept tokens of the alternative, the code terminal first.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from logparse.model.events import NO_FIELDS, KnownMessage

FieldParser = Callable[[list[str]], dict[str, Any]]
KNOWN_FIELD_PARSERS: dict[str, FieldParser] = {}


def known_fields(*terminals: str) -> Callable[[FieldParser], FieldParser]:
    def register(fn: FieldParser) -> FieldParser:
        for name in terminals:
            if name in KNOWN_FIELD_PARSERS:
                raise ValueError(f"two field parsers for known message terminal {name}")
            KNOWN_FIELD_PARSERS[name] = fn
        return fn

    return register


@cache  # one string per code, not one per line (~60 bytes each)
def code_of(terminal: str) -> str:
    return terminal.strip("_").lower().replace("_", "-")


class KnownCallbacks:
    def known_message(self, children: list[Any]) -> tuple[type, dict[str, Any]]:
        # uvicorn's own messages start with its level prefix; the message terminal names the code.
        if children[0].type == "UV_LEVEL" and len(children) > 1:
            children = children[1:]
        head = children[0]
        texts = [str(c) for c in children]
        parser = KNOWN_FIELD_PARSERS.get(head.type)
        fields = parser(texts) if parser is not None else NO_FIELDS
        if None in fields.values():  # a damaged number (logparse.model.numbers): leave the field out
            fields = {k: v for k, v in fields.items() if v is not None}
        if not fields:
            fields = NO_FIELDS
        return KnownMessage, {"code": code_of(head.type), "text": "".join(texts), "fields": fields}
