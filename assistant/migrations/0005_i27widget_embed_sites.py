from django.contrib.auth.management import create_permissions
from django.db import migrations, models

import assistant.widget.models

# Which websites may show the chat is a steward's decision (it puts our answers on someone's
# pages): stewards add, change and switch off embed sites; doc writers have no part in it.
STEWARD_PERMISSIONS = ["view_embedsite", "add_embedsite", "change_embedsite", "delete_embedsite"]
STEWARDS = "Policy stewards"


def grant_permissions(apps, schema_editor) -> None:
    app_config = apps.get_app_config("assistant")
    app_config.models_module = True  # permissions exist only after migrate otherwise
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permissions = Permission.objects.filter(
        content_type__app_label="assistant", codename__in=STEWARD_PERMISSIONS
    )
    for group in Group.objects.filter(name=STEWARDS):
        group.permissions.add(*permissions)


class Migration(migrations.Migration):
    dependencies = [
        ("assistant", "0004_t26e_suggestion_approval"),
    ]

    operations = [
        migrations.CreateModel(
            name="EmbedSite",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "name",
                    models.CharField(help_text="Which website this is, for staff.", max_length=100),
                ),
                (
                    "site_key",
                    models.CharField(
                        default=assistant.widget.models.site_key_new,
                        editable=False,
                        max_length=40,
                        unique=True,
                    ),
                ),
                (
                    "allowed_origins",
                    models.TextField(
                        help_text="One origin per line, as scheme://host[:port] with no path, for example https://www.example.com (https://*.example.com covers its subdomains). Only pages served from these may show the widget; every other site is refused.",
                        validators=[assistant.widget.models.validate_allowed_origins],
                    ),
                ),
                (
                    "active",
                    models.BooleanField(
                        default=True, help_text="Off: the widget is refused everywhere."
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={
                "verbose_name": "embed site",
                "ordering": ["name"],
            },
        ),
        migrations.RunPython(grant_permissions, migrations.RunPython.noop),
    ]
