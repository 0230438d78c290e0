"""The command line: a thin client of the project (context.py) that parses, calls and reports."""
