import django.db.models.deletion
from django.conf import settings
from django.contrib.auth.management import create_permissions
from django.db import migrations, models

# The greeting is shown to every visitor, as the suggested questions are: stewards write it,
# doc writers read it.
GROUP_PERMISSIONS = {
    "Policy stewards": [
        "view_chatgreeting",
        "add_chatgreeting",
        "change_chatgreeting",
        "delete_chatgreeting",
    ],
    "Doc writers": ["view_chatgreeting"],
}


def grant_permissions(apps, schema_editor) -> None:
    app_config = apps.get_app_config("assistant")
    app_config.models_module = True  # permissions exist only after migrate otherwise
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, codenames in GROUP_PERMISSIONS.items():
        permissions = Permission.objects.filter(
            content_type__app_label="assistant", codename__in=codenames
        )
        for group in Group.objects.filter(name=name):
            group.permissions.add(*permissions)


class Migration(migrations.Migration):
    dependencies = [
        ("assistant", "0005_i27widget_embed_sites"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ChatGreeting",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "text",
                    models.TextField(
                        help_text="A sentence or two; line breaks are kept. Shown on the empty chat page.",
                        max_length=500,
                    ),
                ),
                (
                    "active",
                    models.BooleanField(
                        default=True, help_text="Shown while on (the newest one wins)."
                    ),
                ),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "updated_by",
                    models.ForeignKey(
                        blank=True,
                        help_text="Who wrote or last changed it (empty: loaded by the demo).",
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-updated_at", "-id"],
            },
        ),
        migrations.RunPython(grant_permissions, migrations.RunPython.noop),
    ]
