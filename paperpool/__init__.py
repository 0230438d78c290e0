"""paperpool: a survey's curated paper pool as data, checked, measured and published."""

__version__ = "0.1.0"
