from django.db import migrations, models


class Migration(migrations.Migration):
    """Where each document came from. Rows that exist already get origin "unknown": a folder
    sync adopts one only where it still matches its file, and never prunes or overwrites the
    others without --overwrite."""

    dependencies = [
        ("kb", "0006_searchable_documents_index"),
    ]

    operations = [
        migrations.AddField(
            model_name="document",
            name="origin",
            field=models.CharField(
                choices=[
                    ("folder", "Folder sync"),
                    ("import", "Import"),
                    ("admin", "Admin"),
                    ("unknown", "Unknown (before provenance)"),
                ],
                default="unknown",
                max_length=20,
            ),
        ),
        migrations.AlterField(
            model_name="document",
            name="origin",
            field=models.CharField(
                choices=[
                    ("folder", "Folder sync"),
                    ("import", "Import"),
                    ("admin", "Admin"),
                    ("unknown", "Unknown (before provenance)"),
                ],
                default="admin",
                max_length=20,
            ),
        ),
        migrations.AddField(
            model_name="document",
            name="sync_folder",
            field=models.CharField(
                blank=True,
                default="",
                help_text="The folder a folder sync read it from.",
                max_length=1000,
            ),
        ),
        migrations.AddField(
            model_name="document",
            name="synced_file_hash",
            field=models.CharField(
                blank=True, default="", help_text="sha256 of the file last synced.", max_length=64
            ),
        ),
        migrations.AddField(
            model_name="document",
            name="synced_row_hash",
            field=models.CharField(
                blank=True,
                default="",
                help_text="row_hash() as the last sync left the row; any other value means an edit since.",
                max_length=64,
            ),
        ),
        migrations.AddField(
            model_name="document",
            name="synced_status",
            field=models.CharField(blank=True, default="", max_length=20),
        ),
        migrations.AddField(
            model_name="document",
            name="synced_superseded_by",
            field=models.CharField(
                blank=True,
                default="",
                help_text="The successor path the file named.",
                max_length=500,
            ),
        ),
    ]
