from django.urls import path

from experiments_app.api import blind_tests, events, experiments, labeling, latency_replays
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
    # blind tests, operators (docs/BLIND_TESTS.md)
    path("blind-tests/", blind_tests.BlindTestListApi.as_view(), name="blind-test-list"),
    path(
        "blind-tests/<int:test_id>/",
        blind_tests.BlindTestDetailApi.as_view(),
        name="blind-test-detail",
    ),
    path(
        "blind-tests/<int:test_id>/labels.csv",
        blind_tests.BlindTestLabelsCsvApi.as_view(),
        name="blind-test-labels-csv",
    ),
    path(
        "blind-tests/<int:test_id>/close/",
        blind_tests.BlindTestCloseApi.as_view(),
        name="blind-test-close",
    ),
    path(
        "blind-tests/<int:test_id>/open/",
        blind_tests.BlindTestOpenApi.as_view(),
        name="blind-test-open",
    ),
    path(
        "blind-tests/<int:test_id>/labelers/",
        blind_tests.BlindTestLabelersApi.as_view(),
        name="blind-test-labelers",
    ),
    path(
        "blind-tests/<int:test_id>/labelers/<int:labeler_id>/",
        blind_tests.BlindTestLabelerApi.as_view(),
        name="blind-test-labeler",
    ),
    path("labelers/", blind_tests.LabelerInviteApi.as_view(), name="labeler-invite"),
    # latency replays of a room (docs/API.md)
    path(
        "rooms/<int:room_id>/latency-replays/",
        latency_replays.LatencyReplayListApi.as_view(),
        name="latency-replay-list",
    ),
    path(
        "rooms/<int:room_id>/latency-replays/<int:report_id>/",
        latency_replays.LatencyReplayDetailApi.as_view(),
        name="latency-replay-detail",
    ),
    path(
        "rooms/<int:room_id>/latency-replays/<int:report_id>/cancel/",
        latency_replays.LatencyReplayCancelApi.as_view(),
        name="latency-replay-cancel",
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
