"""Text for people: markdown escaping, the sandboxed templates and the registry's reference."""
