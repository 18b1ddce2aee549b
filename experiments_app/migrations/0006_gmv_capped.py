from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("experiments_app", "0005_latency_replay_jobs"),
    ]

    operations = [
        migrations.AddField(
            model_name="experimentrollup",
            name="gmv_cap",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="experiment",
            name="primary_metric",
            field=models.CharField(
                choices=[
                    ("gmv", "Confirmed-receipt GMV per UV"),
                    ("views", "Item-page views per UV"),
                    ("gmv_capped", "Confirmed-receipt GMV per UV, capped at the pre-period 99th pct"),
                ],
                default="gmv",
                max_length=16,
            ),
        ),
    ]
