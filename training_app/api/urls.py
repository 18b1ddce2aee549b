from django.urls import path

from training_app.api import datasets, hsa

urlpatterns = [
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
    path("hsa/transforms/", hsa.HsaCatalogApi.as_view(), name="hsa-catalog"),
    path(
        "harnesses/<int:harness_id>/versions/<int:number>/hsa-preview/",
        hsa.HsaPreviewApi.as_view(),
        name="hsa-preview",
    ),
]
