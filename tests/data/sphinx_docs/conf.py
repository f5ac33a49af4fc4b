# A Sphinx project's configuration, read (never run) for default_role and extlinks.
import os

project = "Acme"
default_role = "code"
extlinks = {"issue": ("https://tracker.acme.example/issues/%s", "issue %s")}
html_theme = os.environ.get("THEME", "alabaster")
