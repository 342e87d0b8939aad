"""The run model: events → launches → per-rank lifecycle, facts and configuration (one owner per fact)."""
