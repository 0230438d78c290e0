"""Benchmarks: paperpool's commands timed on pools and traces of growing size (run
`python -m paperpool.bench`; BENCHMARKS.md explains the figures)."""
