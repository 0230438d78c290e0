"""The site's trace pages, a part of the site paperpool.traces brings (sitegen/parts.py):
the gallery of the pool's traces, the trace schema's page and a page per corpus."""
