import django.db.models.deletion
from django.conf import settings
from django.contrib.auth.management import create_permissions
from django.db import migrations, models

# What the chat page suggests is a steward's decision (a proposal is a visitor's text): stewards
# write, approve and decline suggestions; doc writers read them (what customers ask most) and
# may not put anything on the page, as they may not retire one.
STEWARD_PERMISSIONS = [
    "view_suggestedquestion",
    "add_suggestedquestion",
    "change_suggestedquestion",
    "delete_suggestedquestion",
    "approve_suggestedquestion",
]
GROUP_PERMISSIONS = {
    "Policy stewards": STEWARD_PERMISSIONS,
    "Doc writers": ["view_suggestedquestion"],
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
        ("assistant", "0003_cited_pages_index_and_writer_access"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="suggestedquestion",
            options={
                "ordering": ["order", "id"],
                "permissions": [
                    ("approve_suggestedquestion", "Can approve questions for the chat page")
                ],
            },
        ),
        # Rows from before were written in admin by staff: approved. New rows start proposed.
        migrations.AddField(
            model_name="suggestedquestion",
            name="status",
            field=models.CharField(default="approved", max_length=10),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="suggestedquestion",
            name="status",
            field=models.CharField(
                choices=[
                    ("proposed", "Proposed (not shown)"),
                    ("approved", "Approved"),
                    ("declined", "Declined (not proposed again)"),
                ],
                default="proposed",
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="suggestedquestion",
            name="askers",
            field=models.PositiveIntegerField(
                default=0,
                help_text="For a proposal: how many clients asked it (last 90 days) when last "
                "counted.",
            ),
        ),
        migrations.AlterField(
            model_name="suggestedquestion",
            name="active",
            field=models.BooleanField(
                default=True, help_text="An approved question is shown while on."
            ),
        ),
        migrations.AddField(
            model_name="suggestedquestion",
            name="reviewed_by",
            field=models.ForeignKey(
                blank=True,
                help_text="The steward who approved or declined it, or wrote it.",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="suggestedquestion",
            name="reviewed_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(grant_permissions, migrations.RunPython.noop),
    ]
