"""Reads about documents, one module per subject: who may open what (``access``), category names
(``categories``), document paths and folders (``paths``), the version of the index as a whole
(``index_version``), how a passage's lines read (``passages``), and what saved versions changed
(``versions``)."""
