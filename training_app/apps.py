from django.apps import AppConfig


class TrainingAppConfig(AppConfig):
    name = "training_app"
    verbose_name = "Training and evaluation"
