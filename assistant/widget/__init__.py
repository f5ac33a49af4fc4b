"""The website widget: one ``<script>`` tag on a customer's site opens the chat page, served from
this origin in an iframe. The site keys (``EmbedSite``) say which origins may frame it; the frame's
Content-Security-Policy ``frame-ancestors`` is built from that list and every other page stays
``frame-ancestors 'none'``. docs/widget.md is the operator's side."""
