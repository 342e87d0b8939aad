"""Transformer callbacks for grammars/startup.lark."""

from __future__ import annotations


class StartupCallbacks:

    def weight_load_begin(self, children: list) -> tuple:
        from logparse.events import WeightLoadBegin

        return WeightLoadBegin, {"avail_mem_gb": float(children[0])}
