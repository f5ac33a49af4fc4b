"""Document formats other than Markdown, turned into the Markdown the parser and chunker read.

One mechanism serves every format: a format module converts its input to CommonMark text, and
``kb.parsing.parse_document`` reads that text as it reads a Markdown file, so sections, chunks,
offsets and markup checks are the same for a converted page as for a written one.
"""
