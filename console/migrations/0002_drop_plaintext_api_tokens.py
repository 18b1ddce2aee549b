"""Drop DRF's plaintext API tokens (rest_framework.authtoken, replaced by django-rest-knox).

Their keys were stored in the clear and cannot be turned into knox digests, so they are
deleted with their table; users reissue tokens (docs/OPERATIONS.md). The app's migration
records and content types go too, so nothing points at the dropped table. Not reversible
into the old tokens: going back recreates nothing (the old code would need new tokens anyway).
"""

from django.db import migrations

TABLE = "authtoken_token"


def drop_plaintext_tokens(apps, schema_editor):  # type: ignore[no-untyped-def]
    connection = schema_editor.connection
    if TABLE in connection.introspection.table_names():
        schema_editor.execute(f"DROP TABLE {schema_editor.quote_name(TABLE)}")
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM django_migrations WHERE app = %s", ["authtoken"])
    content_type = apps.get_model("contenttypes", "ContentType")
    # Cascades to the app's permissions.
    content_type.objects.filter(app_label="authtoken").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0001_roles"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]
    operations = [migrations.RunPython(drop_plaintext_tokens, migrations.RunPython.noop)]
