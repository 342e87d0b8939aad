"""Run the rules, group findings, decide outcome and root cause."""
