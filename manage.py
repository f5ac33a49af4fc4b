#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

from __future__ import annotations

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    from kb.runtime.embedded import EmbeddedServerError

    try:
        execute_from_command_line(sys.argv)
    except (EmbeddedServerError, ImproperlyConfigured) as exc:
        # Settings errors are for people: one line that says what and how to fix it.
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
