"""The ground floor: one-line problems and errors, the strict YAML reader and writer,
system errors in words, input files, CSV cells and worker processes. Imports no other wing."""
