from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.db import connections

from kb.runtime import embedded


class Command(BaseCommand):
    help = "Start, stop or show the embedded PostgreSQL and Redis kept under the data directory."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["start", "stop", "status"])

    def handle(self, *args: object, action: str, **options: object) -> None:
        data_dir = settings.DATA_DIR
        if action == "stop":
            connections.close_all()
            redis_was_up = embedded.redis_stop(data_dir=data_dir)
            postgres_was_up = embedded.postgres_stop(data_dir=data_dir)
            self.stdout.write(
                f"PostgreSQL: {'stopped' if postgres_was_up else 'was not running'}; "
                f"Redis: {'stopped' if redis_was_up else 'was not running'}"
            )
            return
        # start and status: whatever this configuration runs embedded is started (as its first
        # connection would), then where it is is said.
        database = connections["default"]
        if "EMBEDDED_DATA_DIR" in database.settings_dict:
            database.ensure_connection()
        if settings.EMBEDDED_REDIS_DATA_DIR is not None:
            embedded.redis_start_once(data_dir=settings.EMBEDDED_REDIS_DATA_DIR)
        entry = database.settings_dict
        self.stdout.write(f"data directory: {data_dir}")
        self.stdout.write(
            f"PostgreSQL: {entry.get('HOST') or 'localhost'}:{entry.get('PORT') or 5432}"
            f"/{entry['NAME']}"
        )
        self.stdout.write(f"Celery broker: {settings.CELERY_BROKER_URL}")
