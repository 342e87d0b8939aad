"""Transformer callbacks for grammars/bench.lark."""

from __future__ import annotations


class BenchCallbacks:

    def bench_banner(self, children: list) -> tuple:
        from logparse.events import BenchBanner

        text = str(children[0])
        return BenchBanner, {"title": text.strip("=- "), "rule": text[0]}
