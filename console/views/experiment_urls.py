"""Console URLs of A/B experiments (included into the ``console`` namespace)."""

from django.urls import path

from console.views import experiments

urlpatterns = [
    path("experiments/", experiments.experiment_list, name="experiment-list"),
    path("experiments/new/", experiments.experiment_create, name="experiment-create"),
    path(
        "experiments/<int:experiment_id>/", experiments.experiment_detail, name="experiment-detail"
    ),
    path(
        "experiments/<int:experiment_id>/edit/", experiments.experiment_edit, name="experiment-edit"
    ),
    path(
        "experiments/<int:experiment_id>/start/",
        experiments.experiment_start,
        name="experiment-start",
    ),
    path(
        "experiments/<int:experiment_id>/stop/", experiments.experiment_stop, name="experiment-stop"
    ),
    path(
        "experiments/<int:experiment_id>/allocation/",
        experiments.experiment_allocation,
        name="experiment-allocation",
    ),
    path(
        "experiments/<int:experiment_id>/readout.csv",
        experiments.experiment_csv,
        name="experiment-csv",
    ),
]
