from __future__ import annotations

import os
import secrets
import signal
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser, OutputWrapper
from django.db import connections

from kb.models import Document
from kb.runtime import embedded
from kb.runtime.processes import Supervisor, SupervisorGaveUp, celery_worker, web_server

DEMO_USERNAME = "demo"


class Command(BaseCommand):
    help = (
        "Run the demo: migrate, load corpus/ into an empty database (on a restart: bring in what "
        "changed in corpus/, keeping every change made in admin), create the demo admin user, "
        "then serve the site "
        "(gunicorn, the production settings file) and a Celery worker until Ctrl-C, restarting "
        "either if it dies, and stopping everything this started."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--port", type=int, default=int(os.environ.get("DEMO_PORT", "8000")))
        parser.add_argument("--corpus", default=str(settings.BASE_DIR / "corpus"))

    def handle(self, *args: object, port: int, corpus: str, **options: object) -> None:
        call_command("migrate", interactive=False, verbosity=0)
        self.stdout.write("database migrated")
        demo_corpus_sync(corpus=corpus, stdout=self.stdout)
        password = self._demo_user()
        connections.close_all()

        supervisor = Supervisor(
            [
                web_server(port=port),
                celery_worker(schedule=settings.DATA_DIR / "celerybeat-schedule"),
            ]
        )
        supervisor.start()
        self.stdout.write(
            f"\nGroundwork is running:\n"
            f"  help center  http://127.0.0.1:{port}/\n"
            f"  admin        http://127.0.0.1:{port}/admin/  user {DEMO_USERNAME!r}, "
            f"password {password!r}\n"
            f"  search lab   http://127.0.0.1:{port}/admin/search-lab/\n"
            f"Press Ctrl-C to stop.\n"
        )
        # Ctrl-C, and a plain `kill` from a process manager, both stop everything started here;
        # SIGINT is restored explicitly because a shell starting us in the background ignores it.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, _interrupt)
        gave_up: SupervisorGaveUp | None = None
        try:
            while True:
                supervisor.check()  # a crashed worker or web server is restarted, and logged
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        except SupervisorGaveUp as exc:
            gave_up = exc
        finally:
            supervisor.stop()
            self._stop_servers()
        if gave_up is not None:
            raise CommandError(str(gave_up))

    def _demo_user(self) -> str:
        """A fresh password on every run, printed once: the demo never ships a known password."""
        password = secrets.token_urlsafe(12)
        user, _ = get_user_model().objects.get_or_create(username=DEMO_USERNAME)
        user.is_staff = user.is_superuser = True
        user.set_password(password)
        user.save()
        return password

    def _stop_servers(self) -> None:
        connections.close_all()
        if "CELERY_BROKER_URL" not in os.environ:
            embedded.redis_stop(data_dir=settings.DATA_DIR)
        if "DATABASE_URL" not in os.environ:
            embedded.postgres_stop(data_dir=settings.DATA_DIR)
        self.stdout.write("stopped the web server, the worker and the embedded servers")


def demo_corpus_sync(*, corpus: str, stdout: OutputWrapper) -> None:
    """The sample pages: loaded into an empty database; on a restart, the safe folder sync, which
    keeps whatever was retired, imported or edited in admin since and lists each conflict."""
    if Document.objects.exists():
        stdout.write(f"syncing {corpus}: changes made in admin are kept, conflicts are listed")
    else:
        stdout.write(f"loading {corpus} into the empty database")
    call_command("kb_sync", corpus)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
