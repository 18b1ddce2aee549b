from django.apps import AppConfig


class HarnessAppConfig(AppConfig):
    name = "harness_app"
    verbose_name = "Harness registry"

    def ready(self) -> None:
        from harness_app import live_key_cache
        from harness_app.api import schema  # noqa: F401  (registers the OpenAPI auth scheme)

        live_key_cache.connect_invalidation()
