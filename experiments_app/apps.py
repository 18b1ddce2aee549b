from django.apps import AppConfig


class ExperimentsAppConfig(AppConfig):
    name = "experiments_app"
    verbose_name = "Experiments"
