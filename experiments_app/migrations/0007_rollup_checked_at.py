from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("experiments_app", "0006_gmv_capped"),
    ]

    operations = [
        migrations.AddField(
            model_name="experimentrollup",
            name="checked_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
