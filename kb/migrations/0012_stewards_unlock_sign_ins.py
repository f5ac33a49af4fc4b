from __future__ import annotations

from django.contrib.auth.management import create_permissions
from django.db import migrations

# A locked-out sign-in (django-axes) is its access attempt: deleting it unlocks the account or
# address at once. Stewards see the attempts and the sign-in log and may unlock; writers may not.
STEWARD_PERMISSIONS = [
    "view_accessattempt",
    "delete_accessattempt",
    "view_accesslog",
    "view_accessfailurelog",
]
STEWARDS = "Policy stewards"


def grant(apps, schema_editor) -> None:
    # Permissions are normally created after all migrations run; the group needs them now.
    app_config = apps.get_app_config("axes")
    app_config.models_module = True  # migration app configs are stubs without one
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    stewards, _ = Group.objects.get_or_create(name=STEWARDS)
    stewards.permissions.add(
        *Permission.objects.filter(content_type__app_label="axes", codename__in=STEWARD_PERMISSIONS)
    )


def revoke(apps, schema_editor) -> None:
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for group in Group.objects.filter(name=STEWARDS):
        group.permissions.remove(
            *Permission.objects.filter(
                content_type__app_label="axes", codename__in=STEWARD_PERMISSIONS
            )
        )


class Migration(migrations.Migration):
    dependencies = [
        ("kb", "0011_page_vectors"),
        ("axes", "0010_accessattemptexpiration"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
