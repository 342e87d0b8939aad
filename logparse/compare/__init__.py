"""Comparing runs (`logdiag compare`): is a baseline comparable, and what did the change buy."""
