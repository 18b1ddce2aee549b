"""Writes for datasets and HSA augmentation jobs (their reads: ``training_app.selectors``).

Gold datasets are checked line by line against their harness version before anything is
stored (all or nothing, with the line numbers of every bad line). Augmentation runs as a
Celery job: it writes the augmented JSONL to a temporary file, reports progress, checks its
cancel flag between examples, and only then stores the output dataset.
"""

from __future__ import annotations

import hashlib
import json
import logging
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.core.files import File
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from harness_app.harness.json_limits import JsonLimitError, json_loads_bounded
from harness_app.harness.model import Harness as HarnessContent
from harness_app.harness.serialization import harness_from_dict
from harness_app.hsa import (
    POLICIES,
    AugmentationError,
    GoldTrajectory,
    TrajectoryFormatError,
    augment,
    example_seed,
    trajectory_from_dict,
    verify_pair,
)
from harness_app.models import HarnessVersion
from training_app.models import AugmentationJob, Dataset

log = logging.getLogger(__name__)
MAX_GOLD_LINES = 50_000
MAX_REPORTED_ERRORS = 50
PROGRESS_EVERY = 10


@dataclass(frozen=True)
class LineError:
    line: int
    message: str


class DatasetImportError(ValueError):
    def __init__(self, errors: list[LineError]) -> None:
        self.errors = errors
        first = errors[0]
        super().__init__(f"line {first.line}: {first.message} ({len(errors)} bad line(s))")


def parse_gold_lines(data: bytes, harness: HarnessContent) -> list[GoldTrajectory]:
    """Every line as a gold trajectory verified against ``harness``, or DatasetImportError."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetImportError(
            [LineError(0, f"file is not UTF-8 (bad byte at {exc.start})")]
        ) from None
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if not lines:
        raise DatasetImportError([LineError(0, "the file has no examples")])
    if len(lines) > MAX_GOLD_LINES:
        raise DatasetImportError(
            [LineError(0, f"{len(lines)} lines; the limit is {MAX_GOLD_LINES}")]
        )
    trajectories: list[GoldTrajectory] = []
    errors: list[LineError] = []
    for number, line in lines:
        try:
            document = json_loads_bounded(line)
            if not isinstance(document, dict):
                raise TrajectoryFormatError("each line must be a JSON object")
            trajectory = trajectory_from_dict(document)
        except (json.JSONDecodeError, JsonLimitError, TrajectoryFormatError) as exc:
            errors.append(LineError(number, str(exc)))
            continue
        problems = verify_pair(harness, trajectory)
        if problems:
            errors.append(LineError(number, "; ".join(problems[:3])))
            continue
        trajectories.append(trajectory)
        if len(errors) >= MAX_REPORTED_ERRORS:
            break
    if errors:
        raise DatasetImportError(errors)
    return trajectories


@transaction.atomic
def dataset_create_gold(
    *, harness_version: HarnessVersion, name: str, data: bytes, created_by: Any
) -> Dataset:
    harness = harness_from_dict(harness_version.content)
    trajectories = parse_gold_lines(data, harness)
    dataset = Dataset(
        name=name,
        kind=Dataset.Kind.GOLD,
        harness_version=harness_version,
        examples=len(trajectories),
        sha256=hashlib.sha256(data).hexdigest(),
        created_by=created_by,
    )
    dataset.file.save(f"{_slug(name)}.jsonl", ContentFile(data), save=False)
    dataset.save()
    return dataset


@transaction.atomic
def augmentation_job_create(
    *, source: Dataset, policy: str, seed: int, variants: int, created_by: Any
) -> AugmentationJob:
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; policies: {', '.join(sorted(POLICIES))}")
    job = AugmentationJob.objects.create(
        source=source,
        policy=policy,
        seed=seed,
        variants=variants,
        created_by=created_by,
        progress_total=source.examples * variants,
    )
    from training_app.tasks import run_augmentation_job

    transaction.on_commit(lambda: run_augmentation_job.delay(job.pk))
    return job


def augmentation_job_cancel(*, job: AugmentationJob) -> AugmentationJob:
    """Ask a job to stop; it stops between two examples (never killed mid-write)."""
    if not job.is_finished:
        AugmentationJob.objects.filter(pk=job.pk).update(cancel_requested=True)
        job.refresh_from_db()
        if job.status == AugmentationJob.Status.QUEUED:
            _finish(job, AugmentationJob.Status.CANCELLED)
    return job


def augmentation_job_run(
    job_id: int, *, on_progress: Callable[[int, int], None] | None = None
) -> None:
    """Run one job to the end (called by the Celery task)."""
    job = AugmentationJob.objects.select_related("source", "source__harness_version").get(pk=job_id)
    if job.is_finished or job.cancel_requested:
        if not job.is_finished:
            _finish(job, AugmentationJob.Status.CANCELLED)
        return
    AugmentationJob.objects.filter(pk=job.pk).update(
        status=AugmentationJob.Status.RUNNING, started_at=timezone.now(), progress_done=0
    )
    try:
        _augment(job, on_progress)
    except Exception as exc:  # recorded on the job for the operator; the worker lives on
        log.exception("augmentation job %s failed", job.pk)
        job.error = f"{type(exc).__name__}: {exc}"
        _finish(job, AugmentationJob.Status.FAILED)


def _augment(job: AugmentationJob, on_progress: Callable[[int, int], None] | None) -> None:
    source = job.source
    harness = harness_from_dict(source.harness_version.content)
    with source.file.open("rb") as handle:
        trajectories = parse_gold_lines(handle.read(), harness)
    policy = POLICIES[job.policy]
    total = len(trajectories) * job.variants
    done = failures = 0
    digest = hashlib.sha256()
    with tempfile.NamedTemporaryFile("w+", encoding="utf-8", suffix=".jsonl", delete=False) as out:
        for index, trajectory in enumerate(trajectories):
            for variant in range(job.variants):
                seed = example_seed(job.seed, index, variant)
                try:
                    example = augment(harness, trajectory, policy, seed)
                except AugmentationError as exc:  # a transform bug: count it, keep going
                    failures += 1
                    log.warning("job %s example %s/%s: %s", job.pk, index, variant, exc)
                else:
                    example.provenance["source_index"] = index
                    line = example.to_json() + "\n"
                    out.write(line)
                    digest.update(line.encode())
                done += 1
                if done % PROGRESS_EVERY == 0 or done == total:
                    if _progress(job, done, failures):
                        out.close()
                        Path(out.name).unlink(missing_ok=True)
                        _finish(job, AugmentationJob.Status.CANCELLED)
                        return
                    if on_progress:
                        on_progress(done, total)
        path = Path(out.name)
    try:
        with transaction.atomic(), path.open("rb") as handle:
            output = Dataset(
                name=f"{source.name} · {job.policy} · seed {job.seed}",
                kind=Dataset.Kind.AUGMENTED,
                harness_version=source.harness_version,
                source=source,
                examples=done - failures,
                sha256=digest.hexdigest(),
                created_by=job.created_by,
                provenance={
                    "policy": job.policy,
                    "split": policy.split,
                    "seed": job.seed,
                    "variants": job.variants,
                    "job": job.pk,
                    "failures": failures,
                },
            )
            output.file.save(
                f"{_slug(source.name)}-{job.policy}-{job.seed}.jsonl", File(handle), save=False
            )
            output.save()
            job.output = output
            job.failures = failures
            job.save(update_fields=["output", "failures", "updated_at"])
            _finish(job, AugmentationJob.Status.SUCCEEDED)
    finally:
        path.unlink(missing_ok=True)


def _progress(job: AugmentationJob, done: int, failures: int) -> bool:
    """Store progress; True when an operator asked the job to stop."""
    AugmentationJob.objects.filter(pk=job.pk).update(
        progress_done=done, failures=failures, updated_at=timezone.now()
    )
    return bool(
        AugmentationJob.objects.filter(pk=job.pk).values_list("cancel_requested", flat=True)[0]
    )


def _finish(job: AugmentationJob, status: str) -> None:
    job.status = status
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "finished_at", "error", "updated_at"])


def _slug(name: str) -> str:
    cleaned = "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")
    return "-".join(part for part in cleaned.split("-") if part)[:60] or "dataset"
