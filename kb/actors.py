"""Who is acting: a signed-in user, or the system itself.

A service that needs a permission takes the acting user. Management commands (``kb_sync``, the
demo loader) have no user: whoever may run them on the server already holds every right, so they
act as ``SYSTEM``, a marker that a web request can never produce.
"""

from __future__ import annotations

import enum

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, PermissionsMixin


class SystemActor(enum.Enum):
    SYSTEM = "system"


SYSTEM = SystemActor.SYSTEM

Actor = AbstractBaseUser | AnonymousUser | SystemActor


def actor_has_perm(actor: Actor, permission: str) -> bool:
    """Whether ``actor`` holds ``permission``; the system holds every one."""
    if actor is SYSTEM:
        return True
    # Permissions come with PermissionsMixin (Django's User has it); a user model without it
    # holds none.
    return bool(
        actor.is_active and isinstance(actor, PermissionsMixin) and actor.has_perm(permission)
    )


def actor_name(actor: Actor) -> str:
    """For logs and messages: the username, ``system``, or ``anonymous``."""
    if actor is SYSTEM:
        return "system"
    return actor.get_username() or "anonymous"


SIGN_IN_USERNAME_CHARS = 255  # what axes' attempt tables keep (AccessAttempt.username)


def sign_in_username(request: object, credentials: dict[str, object] | None) -> str:
    """The name a sign-in attempt is counted under (``AXES_USERNAME_CALLABLE``): the name typed,
    cut to what the attempts table keeps. No account has a longer name (150 at most), so the
    cut never merges two accounts' counts; without it a long name was a server error."""
    typed = (credentials or {}).get("username")
    if typed is None:
        typed = getattr(request, "POST", {}).get("username", "")
    return str(typed or "")[:SIGN_IN_USERNAME_CHARS]
