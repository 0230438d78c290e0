"""Orchestration traces: a JSON Schema, full validation, replayed metrics, import from
OpenTelemetry GenAI spans, and the drawings the site's gallery shows."""
