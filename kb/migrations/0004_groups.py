from __future__ import annotations

from django.contrib.auth.management import create_permissions
from django.db import migrations

DOC_WRITER_PERMISSIONS = [
    "add_document",
    "change_document",
    "view_document",
    "view_chunk",
    "view_documentindexstate",
    "view_embeddingmodel",
]
STEWARD_PERMISSIONS = [
    *DOC_WRITER_PERMISSIONS,
    "delete_document",
    "retire_document",
    "manage_embedding_models",
    "add_embeddingmodel",
    "change_embeddingmodel",
    "delete_embeddingmodel",
]
GROUPS = {"Doc writers": DOC_WRITER_PERMISSIONS, "Policy stewards": STEWARD_PERMISSIONS}


def create_groups(apps, schema_editor) -> None:
    # Permissions are normally created after all migrations run; these groups need them now.
    app_config = apps.get_app_config("kb")
    app_config.models_module = True  # migration app configs are stubs without one
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, codenames in GROUPS.items():
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.set(
            Permission.objects.filter(content_type__app_label="kb", codename__in=codenames)
        )


def remove_groups(apps, schema_editor) -> None:
    apps.get_model("auth", "Group").objects.filter(name__in=GROUPS).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("kb", "0003_permissions"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_groups, remove_groups)]
