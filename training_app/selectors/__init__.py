"""Reads of the training app, one module per concern:

* ``endpoints``: model endpoints, the ``vllm serve`` line each runs, and a live connection
  check;
* ``datasets``: datasets (and a dataset's file as a download) and augmentation jobs;
* ``runs``: training runs, their stages and metric series;
* ``evals``: eval sets and runs, the score table, held-out-edit errors and paired
  comparisons (called through the module: ``selectors.evals.score_report(...)``).

The public names are re-exported here, so callers write ``selectors.dataset_get(...)``.
"""

from training_app.selectors import evals
from training_app.selectors.datasets import (
    augmentation_job_get,
    augmentation_jobs_list,
    dataset_file_response,
    dataset_get,
    datasets_list,
    harness_versions_for_datasets,
)
from training_app.selectors.endpoints import (
    ConnectionCheck,
    endpoint_check_connection,
    endpoint_get,
    endpoint_get_by_name,
    endpoint_is_qwen_moe,
    endpoint_vllm_command,
    endpoint_vllm_profile,
    endpoints_active,
    endpoints_list,
)
from training_app.selectors.runs import (
    metric_names,
    run_can_resume,
    run_get,
    run_metric_series,
    runs_list,
    runs_metric_compare,
    stage_get,
)

__all__ = [
    "ConnectionCheck",
    "augmentation_job_get",
    "augmentation_jobs_list",
    "dataset_file_response",
    "dataset_get",
    "datasets_list",
    "endpoint_check_connection",
    "endpoint_get",
    "endpoint_get_by_name",
    "endpoint_is_qwen_moe",
    "endpoint_vllm_command",
    "endpoint_vllm_profile",
    "endpoints_active",
    "endpoints_list",
    "evals",
    "harness_versions_for_datasets",
    "metric_names",
    "run_can_resume",
    "run_get",
    "run_metric_series",
    "runs_list",
    "runs_metric_compare",
    "stage_get",
]
