from __future__ import annotations

import os
import signal
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser, OutputWrapper
from django.db import connections

from assistant.services.chat_start import (
    CHAT_START_FILE,
    ChatStartError,
    chat_start_add,
    chat_start_read,
)
from kb.models import Document
from kb.runtime import embedded
from kb.runtime.processes import Supervisor, SupervisorGaveUp, celery_worker, web_server
from kb.services.demo_logins import LOGINS_FILE, DemoLogin, DemoLoginsError, demo_logins_ensure

DEFAULT_PORT = 8000
# When the default port is taken, the next ones are tried: a second checkout's demo, or another
# program's server on 8000, should not stop a newcomer's first run.
PORTS_TRIED = 20


class Command(BaseCommand):
    help = (
        "Run the demo: migrate, load corpus/ into an empty database (on a restart: bring in what "
        "changed in corpus/, keeping every change made in admin), create the demo admin user, "
        "then serve the site "
        "(gunicorn, the production settings file) and a Celery worker until Ctrl-C, restarting "
        "either if it dies, and stopping everything this started."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--port",
            type=int,
            default=None,
            help=f"the web server's port (default: DEMO_PORT, else {DEFAULT_PORT} or the next "
            "free one)",
        )
        parser.add_argument("--corpus", default=str(settings.BASE_DIR / "corpus"))
        parser.add_argument(
            "--reset-passwords",
            action="store_true",
            help="give the demo, writer and steward users new passwords (signing everyone out)",
        )

    def handle(
        self,
        *args: object,
        port: int | None,
        corpus: str,
        reset_passwords: bool = False,
        **options: object,
    ) -> None:
        # Before anything else: a taken port is one line now, not 30 of gunicorn's after the load.
        chosen = demo_port_choose(requested=_requested_port(port), default=DEFAULT_PORT)
        port = chosen.port
        if chosen.notice:
            self.stdout.write(chosen.notice)
        call_command("migrate", interactive=False, verbosity=0)
        self.stdout.write("database migrated")
        demo_corpus_sync(corpus=corpus, stdout=self.stdout)
        demo_chat_start(corpus=corpus, stdout=self.stdout)
        try:
            logins = demo_logins_ensure(data_dir=settings.DATA_DIR, reset_passwords=reset_passwords)
        except DemoLoginsError as exc:
            raise CommandError(str(exc)) from None
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
            f"  admin        http://127.0.0.1:{port}/admin/\n"
            f"{_logins_lines(logins)}"
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


def demo_chat_start(*, corpus: str, stdout: OutputWrapper) -> None:
    """The chat page's greeting and first suggested questions from the corpus's
    ``chat-start.json``, where the database has none yet (a steward's changes stand)."""
    try:
        chat_start = chat_start_read(directory=Path(corpus))
    except ChatStartError as exc:
        raise CommandError(str(exc)) from None
    if chat_start is None:
        return
    added = chat_start_add(chat_start=chat_start)
    if added.greeting or added.suggested_questions:
        stdout.write(
            f"chat page: {'a greeting and ' if added.greeting else ''}"
            f"{added.suggested_questions} suggested questions from {CHAT_START_FILE}"
        )


@dataclass(frozen=True)
class DemoPort:
    port: int
    notice: str | None  # one line saying the default port was taken, if it was


def demo_port_choose(*, requested: int | None, default: int) -> DemoPort:
    """The port to serve on, checked free before gunicorn starts. A port the user chose is used
    or refused (``CommandError``, one line naming ``--port`` and ``DEMO_PORT``); the default, if
    taken, gives way to the next free one."""
    if requested is not None:
        if not _port_free(requested):
            raise CommandError(
                f"port {requested} is in use on 127.0.0.1: stop what listens there, or choose "
                "another port with --port N (or DEMO_PORT=N make demo)"
            )
        return DemoPort(port=requested, notice=None)
    for candidate in range(default, default + PORTS_TRIED):
        if _port_free(candidate):
            notice = None
            if candidate != default:
                notice = (
                    f"port {default} is in use: serving on {candidate} instead "
                    "(choose one with --port N or DEMO_PORT=N)"
                )
            return DemoPort(port=candidate, notice=notice)
    raise CommandError(
        f"ports {default}-{default + PORTS_TRIED - 1} are all in use on 127.0.0.1: choose a free "
        "port with --port N (or DEMO_PORT=N make demo)"
    )


def _requested_port(option: int | None) -> int | None:
    if option is not None:
        if not 0 < option < 65536:
            raise CommandError(f"--port must be a port number from 1 to 65535 (got {option})")
        return option
    value = os.environ.get("DEMO_PORT", "").strip()
    if not value:
        return None
    if not value.isdigit() or not 0 < int(value) < 65536:
        raise CommandError(f"DEMO_PORT must be a port number from 1 to 65535 (got {value!r})")
    return int(value)


def _port_free(port: int) -> bool:
    """Whether gunicorn could listen on 127.0.0.1:``port`` now. SO_REUSEADDR as gunicorn sets
    it: a port left in TIME_WAIT by the last run is free to it, a listening one is not."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _logins_lines(logins: list[DemoLogin]) -> str:
    """The sign-ins, one line each, and where their passwords are kept."""
    lines = []
    for login in logins:
        password = repr(login.password) if login.password else "(changed in admin; not shown)"
        lines.append(f"    {login.username:<8} password {password:<20} {login.may}\n")
    kept = settings.DATA_DIR / LOGINS_FILE
    lines.append(f"    (kept in {kept}; --reset-passwords gives new ones)\n")
    return "".join(lines)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
