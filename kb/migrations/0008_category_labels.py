from django.contrib.auth.management import create_permissions
from django.db import migrations, models

# Naming categories is part of writing: doc writers may, stewards also delete a name.
WRITER_PERMISSIONS = ["add_category", "change_category", "view_category"]
GROUP_PERMISSIONS = {
    "Doc writers": WRITER_PERMISSIONS,
    "Policy stewards": [*WRITER_PERMISSIONS, "delete_category"],
}


def grant_category_permissions(apps, schema_editor) -> None:
    app_config = apps.get_app_config("kb")
    app_config.models_module = True  # as in 0004: permissions exist only after migrate otherwise
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, codenames in GROUP_PERMISSIONS.items():
        group = Group.objects.filter(name=name).first()
        if group is not None:
            group.permissions.add(
                *Permission.objects.filter(content_type__app_label="kb", codename__in=codenames)
            )


class Migration(migrations.Migration):
    """Names for categories, as readers see them on /docs/ ("API" for documents in ``api``)."""

    dependencies = [
        ("kb", "0007_document_provenance"),
    ]

    operations = [
        migrations.CreateModel(
            name="Category",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "slug",
                    models.CharField(
                        help_text="The category as documents give it (their front matter's "
                        "'category').",
                        max_length=200,
                        unique=True,
                    ),
                ),
                (
                    "label",
                    models.CharField(
                        help_text="What readers see, e.g. Getting started.", max_length=200
                    ),
                ),
            ],
            options={"verbose_name_plural": "categories", "ordering": ["label"]},
        ),
        migrations.RunPython(grant_category_permissions, migrations.RunPython.noop),
    ]
