"""`logdiag follow`: follow a growing log live and exit with an answer (ready, crashed, timed out).

Layer: above the engine (it runs the real analysis on a crash) and the renderers, below the CLI.
`tail` reads the input like `tail -F`, `live` keeps the incremental start-up state, `session`
decides, `render` speaks (terminal, plain lines, NDJSON).
"""
