"""External retrieval eval sets: public documentation pinned by commit, cases derived mechanically.

`sources` stages a set's pages from its pinned git commit and checks them against a recorded
checksum; `pages` reads a staged folder into sections the way the product parses and splits it;
`cases` derives the questions; `baselines` scores plain BM25, dense and RRF on the same sections.
"""
