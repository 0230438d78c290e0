"""The pool's records: reading them, checking them (with the cache of checked records),
identities, history, evidence, stubs and adding a record."""
