"""The click commands: parse options, call the API, render."""
