"""BibTeX: reading .bib files, importing them as stubs, writing entries, and the
registry sections that lay both out."""
