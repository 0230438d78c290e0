"""Citation formats in and out: BibTeX, CSL-JSON, RIS, CSV, COinS, CITATION.cff and export."""
