"""Renderers: one module per output format. Only renderers know output formats."""
