from django.urls import path

from experiments_app.api import events, experiments, labeling
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
    # the labeler's side of blind tests (docs/LABELING.md)
    path("labeling/tests/", labeling.LabelingTestListApi.as_view(), name="labeling-test-list"),
    path(
        "labeling/tests/<str:token>/next/",
        labeling.LabelingNextApi.as_view(),
        name="labeling-next",
    ),
    path(
        "labeling/tests/<str:token>/labels/",
        labeling.LabelingLabelApi.as_view(),
        name="labeling-labels",
    ),
    path(
        "labeling/tests/<str:token>/undo/",
        labeling.LabelingUndoApi.as_view(),
        name="labeling-undo",
    ),
    path(
        "labeling/tests/<str:token>/skip/",
        labeling.LabelingSkipApi.as_view(),
        name="labeling-skip",
    ),
    path(
        "experiments/<int:experiment_id>/readout",
        experiments.ExperimentReadoutApi.as_view(),
        name="experiment-readout",
    ),
]
