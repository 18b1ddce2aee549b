"""Every REST endpoint under /api/v1/, gathered from the apps."""

from django.urls import include, path

urlpatterns = [
    path("", include("console.api.urls")),
    path("", include("harness_app.api.urls")),
    path("", include("experiments_app.api.urls")),
    path("", include("training_app.api.urls")),
]
