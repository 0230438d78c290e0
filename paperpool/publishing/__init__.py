"""What a maintainer publishes: the README block, a publication's snapshot, a new survey,
and releases."""
