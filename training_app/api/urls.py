from django.urls import path

from training_app.api import datasets, endpoints, evals, hsa, judges, publish_gate, runs

urlpatterns = [
    path("endpoints/", endpoints.EndpointListApi.as_view(), name="endpoint-list"),
    path(
        "endpoints/<int:endpoint_id>/",
        endpoints.EndpointDetailApi.as_view(),
        name="endpoint-detail",
    ),
    path(
        "endpoints/<int:endpoint_id>/test/",
        endpoints.EndpointTestApi.as_view(),
        name="endpoint-test",
    ),
    path("datasets/", datasets.DatasetListApi.as_view(), name="dataset-list"),
    path("datasets/<int:dataset_id>/", datasets.DatasetDetailApi.as_view(), name="dataset-detail"),
    path(
        "datasets/<int:dataset_id>/download/",
        datasets.DatasetDownloadApi.as_view(),
        name="dataset-download",
    ),
    path(
        "augmentation-jobs/",
        datasets.AugmentationJobListApi.as_view(),
        name="augmentation-job-list",
    ),
    path(
        "augmentation-jobs/<int:job_id>/",
        datasets.AugmentationJobDetailApi.as_view(),
        name="augmentation-job-detail",
    ),
    path(
        "augmentation-jobs/<int:job_id>/cancel/",
        datasets.AugmentationJobCancelApi.as_view(),
        name="augmentation-job-cancel",
    ),
    path("training-runs/", runs.TrainingRunListApi.as_view(), name="training-run-list"),
    path(
        "training-runs/compare/",
        runs.TrainingRunCompareApi.as_view(),
        name="training-run-compare",
    ),
    path(
        "training-runs/<int:run_id>/",
        runs.TrainingRunDetailApi.as_view(),
        name="training-run-detail",
    ),
    path(
        "training-runs/<int:run_id>/stages/<int:stage_id>/",
        runs.StageRunDetailApi.as_view(),
        name="training-stage-detail",
    ),
    path(
        "training-runs/<int:run_id>/metrics/",
        runs.TrainingRunMetricsApi.as_view(),
        name="training-run-metrics",
    ),
    path(
        "training-runs/<int:run_id>/cancel/",
        runs.TrainingRunCancelApi.as_view(),
        name="training-run-cancel",
    ),
    path(
        "training-runs/<int:run_id>/start/",
        runs.TrainingRunStartApi.as_view(),
        name="training-run-start",
    ),
    path(
        "training-runs/<int:run_id>/resume/",
        runs.TrainingRunResumeApi.as_view(),
        name="training-run-resume",
    ),
    path(
        "training-runs/<int:run_id>/config.yaml",
        runs.TrainingRunConfigApi.as_view(),
        name="training-run-config",
    ),
    path(
        "training-runs/<int:run_id>/endpoint/",
        runs.TrainingRunEndpointApi.as_view(),
        name="training-run-endpoint",
    ),
    path("eval-sets/", evals.EvalSetListApi.as_view(), name="eval-set-list"),
    path("eval-sets/<int:eval_set_id>/", evals.EvalSetDetailApi.as_view(), name="eval-set-detail"),
    path("eval-runs/", evals.EvalRunListApi.as_view(), name="eval-run-list"),
    path("eval-runs/score-table/", evals.EvalScoreTableApi.as_view(), name="eval-score-table"),
    path("eval-runs/compare/", evals.EvalCompareApi.as_view(), name="eval-compare"),
    path("eval-runs/<int:run_id>/", evals.EvalRunDetailApi.as_view(), name="eval-run-detail"),
    path("eval-runs/<int:run_id>/items/", evals.EvalRunItemsApi.as_view(), name="eval-run-items"),
    path(
        "eval-runs/<int:run_id>/cancel/", evals.EvalRunCancelApi.as_view(), name="eval-run-cancel"
    ),
    path(
        "rooms/<int:room_id>/publish-gate/",
        publish_gate.PublishGateApi.as_view(),
        name="publish-gate",
    ),
    path(
        "harnesses/<int:harness_id>/versions/<int:number>/publish-check/",
        publish_gate.PublishCheckApi.as_view(),
        name="publish-check",
    ),
    path("judges/", judges.JudgeListApi.as_view(), name="judge-list"),
    path("judges/<int:judge_id>/", judges.JudgeDetailApi.as_view(), name="judge-detail"),
    path(
        "judges/<int:judge_id>/versions/",
        judges.JudgeVersionListApi.as_view(),
        name="judge-version-list",
    ),
    path("judges/<int:judge_id>/score/", judges.JudgeScoreApi.as_view(), name="judge-score"),
    path("judges/<int:judge_id>/compare/", judges.JudgeCompareApi.as_view(), name="judge-compare"),
    path(
        "judge-calibrations/",
        judges.CalibrationListApi.as_view(),
        name="judge-calibration-list",
    ),
    path(
        "judge-calibrations/<int:calibration_id>/",
        judges.CalibrationDetailApi.as_view(),
        name="judge-calibration-detail",
    ),
    path("hsa/transforms/", hsa.HsaCatalogApi.as_view(), name="hsa-catalog"),
    path(
        "harnesses/<int:harness_id>/versions/<int:number>/hsa-preview/",
        hsa.HsaPreviewApi.as_view(),
        name="hsa-preview",
    ),
]
