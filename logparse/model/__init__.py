"""The vocabulary: events, findings, severities, message codes (imports nothing of logparse)."""
