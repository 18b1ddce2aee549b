"""A training run's config: one dict (or YAML file) that says everything a run does, checked
field by field. The console form, the API and ``manage.py train --config run.yaml`` all go
through ``run_config_validate``; ``run_config_export`` writes the same dict back from a stored
run, so exporting and re-importing reproduces it.

Format (YAML)::

    name: sft-then-rl
    base_model_dir: var/models/smollm2-135m-instruct   # default: the embedded SmolLM2
    teacher: gold                     # or the name of a model endpoint
    harness_versions:                 # harness id and version number
      - {harness: 3, version: 2}
    datasets: [7]                     # dataset ids (of those harness versions)
    catalog_tasks: false              # also generate tasks from the rooms' catalogs
    hsa_policy: hsa-train             # a *training* policy, or "" for Fixed-Harness
    stages: [hsa_sft, hsa_rl]         # ordered subset of hsa_sft, opd, hsa_rl
    params: {hsa_sft: {max_steps: 60}}
    seed: 0
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from django.conf import settings

from harness_app.hsa import POLICIES
from harness_app.models import HarnessVersion
from training_app.models import Dataset, ModelEndpoint, TrainingRun
from training_app.pipeline.contract import STAGE_ORDER

GOLD_TEACHER = "gold"
CONFIG_KEYS = (
    "name",
    "base_model_dir",
    "teacher",
    "harness_versions",
    "datasets",
    "catalog_tasks",
    "hsa_policy",
    "stages",
    "params",
    "seed",
)
# Each stage's parameters are its runner's params dataclass (SftParams, OpdParams, RlParams):
# the defaults shown and stored are that dataclass's, and a config is checked with its
# ``from_mapping`` when the run is queued, so a typo fails then, not hours into training. A
# kind whose runner is overridden (HAT_TRAIN_STAGE_RUNNERS) takes any JSON parameters.
PARAMS_CLASSES = {
    "hsa_sft": "training_app.pipeline.sft.SftParams",
    "opd": "training_app.pipeline.opd.OpdParams",
    "hsa_rl": "training_app.pipeline.rl.RlParams",
}
MAX_NAME = 120


class RunConfigError(ValueError):
    """Every problem in a config, keyed by field path (``params.hsa_sft.max_steps``)."""

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))


@dataclass
class RunConfig:
    name: str
    base_model_dir: str
    teacher: ModelEndpoint | None
    harness_versions: list[HarnessVersion]
    datasets: list[Dataset]
    catalog_tasks: bool
    hsa_policy: str
    stages: list[str]
    params: dict[str, dict[str, Any]]
    seed: int
    raw: dict[str, Any] = field(default_factory=dict)


def training_policies() -> list[str]:
    return sorted(name for name, policy in POLICIES.items() if policy.split == "train")


def default_base_model_dir() -> str:
    from inference.workers.local_model import DEFAULT_MODEL_DIR

    return str(DEFAULT_MODEL_DIR)


def run_config_validate(config: Any) -> RunConfig:
    """The checked config, or RunConfigError naming every bad field. Reads only."""
    errors: dict[str, str] = {}
    if not isinstance(config, Mapping):
        raise RunConfigError({"config": "must be a mapping of the run's fields"})
    for key in config:
        if key not in CONFIG_KEYS:
            errors[str(key)] = f"unknown field; fields: {', '.join(CONFIG_KEYS)}"

    name = config.get("name")
    if not isinstance(name, str) or not name.strip():
        errors["name"] = "required: a non-empty string"
    elif len(name) > MAX_NAME:
        errors["name"] = f"at most {MAX_NAME} characters"
    base_model_dir = config.get("base_model_dir") or default_base_model_dir()
    if not isinstance(base_model_dir, str) or len(base_model_dir) > 500:
        errors["base_model_dir"] = "a directory path of at most 500 characters"

    teacher: ModelEndpoint | None = None
    teacher_name = config.get("teacher", GOLD_TEACHER) or GOLD_TEACHER
    if not isinstance(teacher_name, str):
        errors["teacher"] = f"'{GOLD_TEACHER}' or a model endpoint name"
    elif teacher_name != GOLD_TEACHER:
        teacher = ModelEndpoint.objects.filter(name=teacher_name, is_active=True).first()
        if teacher is None:
            errors["teacher"] = (
                f"no active model endpoint {teacher_name!r}; use '{GOLD_TEACHER}' for the gold "
                "trajectories"
            )

    versions = _harness_versions(config.get("harness_versions"), errors)
    datasets = _datasets(config.get("datasets", []), versions, errors)
    catalog_tasks = config.get("catalog_tasks", False)
    if not isinstance(catalog_tasks, bool):
        errors["catalog_tasks"] = "true or false"
        catalog_tasks = False

    hsa_policy = config.get("hsa_policy", "") or ""
    allowed = training_policies()
    if not isinstance(hsa_policy, str):
        errors["hsa_policy"] = f"a policy name; training policies: {', '.join(allowed)}"
    elif hsa_policy and hsa_policy not in POLICIES:
        errors["hsa_policy"] = (
            f"unknown policy {hsa_policy!r}; training policies: {', '.join(allowed)} "
            "(or empty for Fixed-Harness)"
        )
    elif hsa_policy and hsa_policy not in allowed:
        errors["hsa_policy"] = (
            f"{hsa_policy!r} is a held-out policy, kept for evaluation only; training "
            f"policies: {', '.join(allowed)}"
        )

    stages = _stages(config.get("stages"), errors)
    params = _params(config.get("params", {}), stages, errors)
    needs_tasks = any(kind in ("hsa_sft", "hsa_rl") for kind in stages)
    if needs_tasks and not datasets and not catalog_tasks and "datasets" not in errors:
        errors["datasets"] = (
            "HSA-SFT and HSA-RL need tasks: choose datasets or turn on catalog_tasks"
        )

    seed = config.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63:
        errors["seed"] = "an integer from 0 to 2**63-1"
        seed = 0
    if errors:
        raise RunConfigError(errors)
    return RunConfig(
        name=str(name).strip(),
        base_model_dir=str(base_model_dir),
        teacher=teacher,
        harness_versions=versions,
        datasets=datasets,
        catalog_tasks=bool(catalog_tasks),
        hsa_policy=str(hsa_policy),
        stages=stages,
        params=params,
        seed=int(seed),
        raw=dict(config),
    )


def _harness_versions(value: Any, errors: dict[str, str]) -> list[HarnessVersion]:
    if not isinstance(value, list) or not value:
        errors["harness_versions"] = "required: a list of {harness: <id>, version: <number>}"
        return []
    found: list[HarnessVersion] = []
    for index, item in enumerate(value):
        path = f"harness_versions[{index}]"
        if not isinstance(item, Mapping) or set(item) != {"harness", "version"}:
            errors[path] = "must be {harness: <id>, version: <number>}"
            continue
        harness, number = item["harness"], item["version"]
        if not all(_db_id(x) for x in (harness, number)):
            errors[path] = "harness and version are positive integers"
            continue
        version = (
            HarnessVersion.objects.select_related("harness")
            .filter(harness_id=harness, number=number)
            .first()
        )
        if version is None:
            errors[path] = f"no version {number} of harness {harness}"
        elif version in found:
            errors[path] = "listed twice"
        else:
            found.append(version)
    return found


def _datasets(value: Any, versions: list[HarnessVersion], errors: dict[str, str]) -> list[Dataset]:
    if not isinstance(value, list):
        errors["datasets"] = "a list of dataset ids"
        return []
    found: list[Dataset] = []
    version_ids = {v.pk for v in versions}
    for index, item in enumerate(value):
        path = f"datasets[{index}]"
        if not _db_id(item):
            errors[path] = "a dataset id (a positive integer)"
            continue
        dataset = Dataset.objects.filter(pk=item).first()
        if dataset is None:
            errors[path] = f"no dataset {item}"
        elif versions and dataset.harness_version_id not in version_ids:
            errors[path] = f"dataset {item} is for another harness version than the run's"
        elif dataset in found:
            errors[path] = "listed twice"
        else:
            found.append(dataset)
    return found


def _db_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**31


def _stages(value: Any, errors: dict[str, str]) -> list[str]:
    order = ", ".join(STAGE_ORDER)
    if not isinstance(value, list) or not value:
        errors["stages"] = f"required: an ordered, non-empty subset of {order}"
        return []
    if any(kind not in STAGE_ORDER for kind in value):
        bad = [k for k in value if k not in STAGE_ORDER]
        errors["stages"] = f"unknown stage(s) {bad}; stages: {order}"
        return []
    if len(set(value)) != len(value):
        errors["stages"] = "each stage at most once"
        return []
    if list(value) != sorted(value, key=STAGE_ORDER.index):
        errors["stages"] = f"stages run in the order {order}"
        return []
    return list(value)


def stage_params_class(kind: str) -> Any:
    module, _, name = PARAMS_CLASSES[kind].rpartition(".")
    return getattr(importlib.import_module(module), name)


def default_stage_params(kind: str) -> dict[str, Any]:
    """The runner's defaults as plain JSON values (tuples as lists)."""
    defaults = dataclasses.asdict(stage_params_class(kind)())
    value: dict[str, Any] = json.loads(json.dumps(defaults, default=list))
    return value


def default_params() -> dict[str, dict[str, Any]]:
    return {kind: default_stage_params(kind) for kind in STAGE_ORDER}


def _params(value: Any, stages: list[str], errors: dict[str, str]) -> dict[str, dict[str, Any]]:
    if not isinstance(value, Mapping):
        errors["params"] = "a mapping of stage kind to its parameters"
        return {}
    params: dict[str, dict[str, Any]] = {}
    for kind in value:
        if kind not in STAGE_ORDER:
            errors[f"params.{kind}"] = f"not a stage; stages: {', '.join(STAGE_ORDER)}"
        elif stages and kind not in stages:
            errors[f"params.{kind}"] = "parameters for a stage the run does not have"
    for kind in stages:
        given = value.get(kind, {}) or {}
        if not isinstance(given, Mapping):
            errors[f"params.{kind}"] = "a mapping of parameter name to value"
            continue
        checked = kind not in settings.HAT_TRAIN_STAGE_RUNNERS
        defaults = default_stage_params(kind)
        merged = dict(defaults)
        bad = False
        for key, item in given.items():
            path = f"params.{kind}.{key}"
            if not isinstance(key, str) or not key.isidentifier():
                errors[path] = "parameter names are identifiers"
            elif checked and key not in defaults:
                errors[path] = f"unknown parameter; allowed: {', '.join(sorted(defaults))}"
            elif not _json_value(item):
                errors[path] = "a number, string, boolean, or a list or mapping of them"
            else:
                merged[key] = item
                continue
            bad = True
        if checked and not bad:
            try:
                stage_params_class(kind).from_mapping(merged)
            except (ValueError, TypeError) as exc:
                message = str(exc)
                named = [k for k in given if isinstance(k, str) and k in message]
                path = f"params.{kind}.{max(named, key=len)}" if named else f"params.{kind}"
                errors[path] = message
        params[kind] = merged
    return params


def _json_value(item: Any) -> bool:
    if isinstance(item, Mapping):
        return all(isinstance(k, str) and _json_scalar_or_list(v) for k, v in item.items())
    return _json_scalar_or_list(item)


def _json_scalar_or_list(item: Any) -> bool:
    scalar = (str, int, float, bool, type(None))
    return isinstance(item, scalar) or (
        isinstance(item, list) and all(isinstance(x, scalar) for x in item)
    )


def run_config_export(run: TrainingRun) -> dict[str, Any]:
    """The config that reproduces ``run`` (same shape as the input, defaults filled in)."""
    return {
        "name": run.name,
        "base_model_dir": run.base_model_dir,
        "teacher": run.teacher.name if run.teacher else GOLD_TEACHER,
        "harness_versions": [
            {"harness": v.harness_id, "version": v.number}
            for v in run.harness_versions.order_by("harness_id", "number")
        ],
        "datasets": sorted(run.datasets.values_list("pk", flat=True)),
        "catalog_tasks": run.catalog_tasks,
        "hsa_policy": run.hsa_policy,
        "stages": list(run.stages),
        "params": {kind: dict(run.params.get(kind, {})) for kind in run.stages},
        "seed": run.seed,
    }


def run_config_yaml(run: TrainingRun) -> str:
    header = f"# HAT training run {run.pk}: reproduce with `manage.py train --config <this file>`\n"
    return header + yaml.safe_dump(run_config_export(run), sort_keys=False)


def run_config_from_yaml(text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise RunConfigError({"config": f"not valid YAML: {exc}"}) from None
