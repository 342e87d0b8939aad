"""The grammar: the lark parser built from grammars/, the fast path compiled from it, the transformer callbacks."""
