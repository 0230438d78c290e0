"""What the pool says: its table, statistics, gap tables, claims, views, what changed
since publication, diff between revisions and the audit."""
