"""Writes of the training app, one module per concern:

* ``endpoints``: model endpoints (create, update);
* ``datasets``: gold datasets (checked line by line against their harness version) and HSA
  augmentation jobs (create, cancel, and the run the Celery task calls);
* ``run_config`` / ``runs``: training runs (config validation and YAML; create, cancel,
  resume, the stage lease, heartbeat and watchdog, the stage body the Celery task runs);
* ``evals``: eval sets (built from a room, uploaded, IFEval) and eval runs (create, cancel,
  the body the ``eval`` task runs);
* ``hsa_preview``: one HSA augmentation of a harness, for people to look at before training.

The endpoint and dataset names are re-exported here (``services.dataset_create_gold(...)``);
the preview is called through its module (``hsa_preview.preview(...)``), whose short names
only read well with it.
"""

from training_app.services import evals, hsa_preview, run_config, runs
from training_app.services.datasets import (
    DatasetImportError,
    LineError,
    augmentation_job_cancel,
    augmentation_job_create,
    augmentation_job_run,
    dataset_create_gold,
    parse_gold_lines,
)
from training_app.services.endpoints import endpoint_create, endpoint_update

__all__ = [
    "DatasetImportError",
    "LineError",
    "augmentation_job_cancel",
    "augmentation_job_create",
    "augmentation_job_run",
    "dataset_create_gold",
    "endpoint_create",
    "endpoint_update",
    "evals",
    "hsa_preview",
    "parse_gold_lines",
    "run_config",
    "runs",
]
