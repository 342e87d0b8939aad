"""The pipeline for one file: lines → grammar → events, typed columns and multi-line records."""
