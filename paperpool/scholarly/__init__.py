"""The open scholarly services paperpool asks about papers: arXiv, Crossref, OpenReview
and OpenAlex. `client` is the one polite HTTP client they share (timeouts, User-Agent
with the pool's contact, rate limits, retries, a cache of responses); each service's
module turns its answers into the BibTeX records import-bib reads, so that a paper added
by its identifier becomes the same stub a .bib record would. Only `add --arxiv/--doi/
--openreview`, `import-ids` and `refresh` reach the network: validate and build never do."""
