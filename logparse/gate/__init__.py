"""The CI gate's policy: configuration ([tool.logdiag]), baselines, fail-on."""
