from django.urls import path

from experiments_app.api import events, experiments
from experiments_app.api.live import LiveReplyApi

urlpatterns = [
    path("live/reply", LiveReplyApi.as_view(), name="live-reply"),
    path("events", events.EventsApi.as_view(), name="events"),
    path("experiments/", experiments.ExperimentListApi.as_view(), name="experiment-list"),
    path(
        "experiments/<int:experiment_id>/",
        experiments.ExperimentDetailApi.as_view(),
        name="experiment-detail",
    ),
    path(
        "experiments/<int:experiment_id>/start/",
        experiments.ExperimentStartApi.as_view(),
        name="experiment-start",
    ),
    path(
        "experiments/<int:experiment_id>/stop/",
        experiments.ExperimentStopApi.as_view(),
        name="experiment-stop",
    ),
    path(
        "experiments/<int:experiment_id>/allocation/",
        experiments.ExperimentAllocationApi.as_view(),
        name="experiment-allocation",
    ),
    path(
        "experiments/<int:experiment_id>/readout",
        experiments.ExperimentReadoutApi.as_view(),
        name="experiment-readout",
    ),
]
