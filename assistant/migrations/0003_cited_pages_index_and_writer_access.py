from django.contrib.auth.management import create_permissions
from django.contrib.postgres.indexes import GinIndex
from django.db import migrations

# The document editor lists the questions a page answered, with their feedback, so that doc
# writers (and stewards) see a change's impact: both groups read those records.
READ_PERMISSIONS = ["view_message", "view_feedback"]
GROUPS = ("Doc writers", "Policy stewards")


def grant_read_permissions(apps, schema_editor) -> None:
    app_config = apps.get_app_config("assistant")
    app_config.models_module = True  # permissions exist only after migrate otherwise
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permissions = Permission.objects.filter(
        content_type__app_label="assistant", codename__in=READ_PERMISSIONS
    )
    for group in Group.objects.filter(name__in=GROUPS):
        group.permissions.add(*permissions)


class Migration(migrations.Migration):
    dependencies = [
        ("assistant", "0002_support_requests_and_suggested_questions"),
        ("kb", "0004_groups"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="message",
            index=GinIndex(
                fields=["citations"], name="assistant_msg_citations", opclasses=["jsonb_path_ops"]
            ),
        ),
        migrations.RunPython(grant_read_permissions, migrations.RunPython.noop),
    ]
