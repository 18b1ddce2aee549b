"""Seed the embedded demo: users for each role, one live room with ~30 products, a realistic
live-stream harness (published), the ReAct baseline, and a running A/B experiment (ReAct vs
Harness agent, 80/20 by UV, as in the published test) with 14 days of simulated traffic so
the readout page has data; a blind test of the experiment's two arms for the demo labeler
(their replies written by the local model once the workers are up) and a judge on the local
model with a gold-pair calibration queued, both marked as a small local model. Safe to run
again: it creates what is missing and changes nothing that exists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand
from django.db import transaction

from console.roles import Role
from experiments_app import services as experiment_services
from experiments_app.models import Experiment
from experiments_app.traffic_simulation import simulate_traffic
from harness_app import services
from harness_app.harness.serialization import harness_from_yaml
from harness_app.models import Coupon, HarnessVersion, Room
from training_app.models import ModelEndpoint

DEMO_DATA = Path(__file__).resolve().parents[3] / "harness_app" / "demo_data"
DEMO_USERS = (("operator", Role.OPERATOR), ("merchant", Role.MERCHANT), ("labeler", Role.LABELER))
DEMO_ROOM = "Autumn Wardrobe Live"
DEMO_EXPERIMENT = "Harness agent vs ReAct (demo)"
# Training on 2 CPU cores: the same catalog under the compact harness (its prompt is ~450
# tokens against ~1,360), and a draft HAT run an operator starts from the console.
DEMO_TRAINING_ROOM = "Autumn Wardrobe (training, compact harness)"
DEMO_EVAL_SET = "Demo Live-Stream QA (compact harness, 1 per question type)"
DEMO_TRAINING_RUN = "Demo HAT run (CPU profile)"
DEMO_BLIND_TEST = "Harness vs ReAct replies (demo, small local model)"
DEMO_BLIND_REQUESTS = 12  # the first rows of the latency replay's viewer comments
DEMO_BLIND_GOLD_PAIRS = 4
DEMO_JUDGE = "Local judge (SmolLM2-135M, small local model)"
REPLAY_FILE = DEMO_DATA.parent.parent / "experiments_app" / "demo_data" / "replay_100.jsonl"
DEMO_TRAINING_PARAMS: dict[str, dict[str, Any]] = {
    "hsa_sft": {
        "max_steps": 12,
        "save_steps": 4,
        "max_length": 1024,
        "gradient_accumulation_steps": 2,
        "heldout_max_rows": 8,
    },
    "opd": {
        "steps": 6,
        "save_steps": 3,
        "batch_size": 2,
        "max_new_tokens": 32,
        "heldout_prompts": 8,
    },
    # an untrained 135M model writes long turns: cap them, and the reasoning-length band
    # (100-200 tokens) is for real backbones, so it is off here
    "hsa_rl": {
        "steps": 3,
        "save_steps": 1,
        "num_generations": 2,
        "prompts_per_step": 1,
        "max_turn_tokens": 96,
        "agent_max_steps": 3,
        "length_penalty": False,
    },
}
# Modest traffic keeps `make run` quick on SQLite (ingesting its ~65K events is most of its
# ~15 s on 2 cores); the lifts are the published ones.
DEMO_UVS = 12_000
DEMO_DAYS = 14
DEMO_GMV_LIFT = 0.04334
DEMO_VIEWS_LIFT = 0.00911
# At 12,000 UVs (80/20) GMV per UV is so heavy-tailed that the estimate of a true +4.3% lift
# spreads with sd ~37 points over draws (5-95%: -39% to +76%; the CI misses the truth ~10% of
# the time, mostly as a "significant" drop when the small arm happens to miss the few big
# spenders), and the 80%-power MDE is ~80%. Detecting +4.3% needs millions of UVs, so the
# demo cannot show a significant lift; it shows a typical draw instead: fixed salts (random
# ones made every fresh demo a different draw) and a seed whose readout lands near the truth
# with an interval of typical width - GMV +2.2% [-50%, +55%] (CUPED +2.6%), views +3.4%
# (CUPED +0.2%), MDE ~77%. scripts/demo_readout_spread.py shows the spread and re-picks a seed
# if the simulation changes (tests/console/test_seed_demo.py pins this draw).
DEMO_SEED = 1634
DEMO_ARM_SALT = "hat-demo-arm"
DEMO_COVERAGE_SALT = "hat-demo-coverage"
DEMO_COUPONS = (
    ("AUTUMN20", "20 off orders over 199", "20.00", "199.00", ""),
    ("KNIT10", "10 off any knitwear over 80", "10.00", "80.00", "SW-1001"),
    ("SHOES15", "15 off the Chelsea boots", "15.00", "0.00", "SH-6001"),
)


class Command(BaseCommand):
    help = "Create the demo users, room, catalog and published harness (idempotent)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--password", default="hat-demo-2026", help="password of the demo users"
        )
        parser.add_argument(
            "--no-experiment", action="store_true", help="skip the demo A/B experiment"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        room, endpoint, operator = self._seed_room(options)
        if not options["no_experiment"]:
            self._seed_experiment(room, endpoint, operator)
            self._seed_blind_test_and_judge(room, endpoint, operator)
        self._seed_training(room, operator)
        self._seed_eval_set(room, operator)
        self.stdout.write(self.style.SUCCESS("demo ready"))

    @transaction.atomic
    def _seed_room(self, options: dict[str, Any]) -> tuple[Room, ModelEndpoint, Any]:
        users = {name: self._user(name, role, options["password"]) for name, role in DEMO_USERS}
        room = Room.objects.filter(owner=users["merchant"], name=DEMO_ROOM).first()
        if room is None:
            room = services.room_create(
                owner=users["merchant"], name=DEMO_ROOM, locale="en-US", currency="USD"
            )
            result = services.products_import(
                room=room, data=(DEMO_DATA / "products.csv").read_bytes(), fmt="csv"
            )
            self.stdout.write(f"room {room.name!r}: {result.created} products")
        endpoint, created = ModelEndpoint.objects.get_or_create(
            name=settings.HAT_DEFAULT_ENDPOINT,
            defaults={
                "base_url": f"http://127.0.0.1:{settings.HAT_MODEL_PORT}/v1",
                "model_name": "",
                "role": ModelEndpoint.Role.STUDENT,
                # SmolLM2-135M has no tool-call parser: it writes JSON action blocks.
                "tool_mode": ModelEndpoint.ToolMode.TEXT,
                "timeout_s": 15.0,
                "max_tokens": 96,
                "max_concurrency": 2,
            },
        )
        if created:
            self.stdout.write(f"model endpoint {endpoint.name!r}: {endpoint.base_url}")
        for code, description, amount, threshold, sku in DEMO_COUPONS:
            Coupon.objects.get_or_create(
                room=room,
                code=code,
                defaults={
                    "description": description,
                    "amount": amount,
                    "threshold": threshold,
                    "sku": sku,
                },
            )
        harness = room.harness
        if not HarnessVersion.objects.filter(harness=harness).exists():
            content = harness_from_yaml((DEMO_DATA / "live_stream_harness.yaml").read_text("utf-8"))
            version = services.harness_version_create(
                harness=harness,
                content=content,
                base_version=None,
                author=users["operator"],
                message="Initial live-stream host harness",
            )
            services.harness_version_publish(version=version)
            self.stdout.write(f"harness {harness.name!r}: v{version.number} published")
        return room, endpoint, users["operator"]

    @transaction.atomic
    def _seed_training(self, demo_room: Room, operator: Any) -> None:
        """A room with the demo catalog and coupons under the compact harness, and a draft
        three-stage HAT run on it (tasks generated from the catalog), ready to start."""
        from training_app.models import TrainingRun
        from training_app.services.runs import run_create

        room = Room.objects.filter(owner=demo_room.owner, name=DEMO_TRAINING_ROOM).first()
        if room is None:
            room = services.room_create(
                owner=demo_room.owner, name=DEMO_TRAINING_ROOM, locale="en-US", currency="USD"
            )
            services.products_import(
                room=room, data=(DEMO_DATA / "products.csv").read_bytes(), fmt="csv"
            )
            for coupon in demo_room.coupons.all():
                Coupon.objects.create(
                    room=room,
                    code=coupon.code,
                    description=coupon.description,
                    amount=coupon.amount,
                    threshold=coupon.threshold,
                    sku=coupon.sku,
                )
            version = services.harness_version_create(
                harness=room.harness,
                content=harness_from_yaml((DEMO_DATA / "compact_harness.yaml").read_text("utf-8")),
                base_version=None,
                author=operator,
                message="Compact harness for CPU training",
            )
            services.harness_version_publish(version=version)
            self.stdout.write(f"room {room.name!r}: compact harness v{version.number} published")
        if TrainingRun.objects.filter(name=DEMO_TRAINING_RUN).exists():
            return
        room.harness.refresh_from_db()
        published = room.harness.published_version
        assert published is not None
        run = run_create(
            config={
                "name": DEMO_TRAINING_RUN,
                "harness_versions": [{"harness": room.harness.pk, "version": published.number}],
                "catalog_tasks": True,
                "hsa_policy": "hsa-train",
                "stages": ["hsa_sft", "opd", "hsa_rl"],
                "params": DEMO_TRAINING_PARAMS,
                "seed": 0,
            },
            created_by=operator,
            start=False,
        )
        self.stdout.write(f"training run {run.name!r}: a draft, start it from the console")

    @transaction.atomic
    def _seed_eval_set(self, demo_room: Room, operator: Any) -> None:
        """A small Live-Stream QA set (one item per question type) on the compact training
        room, so a new user can start an eval run of the local model at once."""
        from training_app.models import EvalSet
        from training_app.services.evals import eval_set_build_qa

        if EvalSet.objects.filter(name=DEMO_EVAL_SET).exists():
            return
        room = Room.objects.filter(owner=demo_room.owner, name=DEMO_TRAINING_ROOM).first()
        if room is None or room.harness.published_version is None:
            return
        eval_set = eval_set_build_qa(
            harness_version=room.harness.published_version,
            name=DEMO_EVAL_SET,
            per_type=1,
            seed=0,
            created_by=operator,
        )
        self.stdout.write(f"eval set {eval_set.name!r}: {eval_set.items} items")

    def _seed_experiment(self, room: Room, endpoint: ModelEndpoint, operator: Any) -> None:
        """ReAct (control) vs Harness agent on the demo room, randomized by UV like the
        published test (one demo room leaves too few room-days for a cluster design)."""
        if Experiment.objects.filter(name=DEMO_EXPERIMENT).exists():
            return
        room.harness.refresh_from_db()
        version = room.harness.published_version
        if version is None:
            return
        arms = [
            experiment_services.ArmSpec("react", "react", version, endpoint, 8000),
            experiment_services.ArmSpec("harness", "harness", version, endpoint, 2000),
        ]
        spec = experiment_services.ExperimentSpec(
            name=DEMO_EXPERIMENT,
            hypothesis="The Harness agent lifts UV-normalized confirmed-receipt GMV and "
            "item-page views over the ReAct agent (published: +4.334% GMV, +0.911% views).",
            rooms=[room],
            arms=arms,
            unit=Experiment.Unit.UV,
            secondary_metrics=[Experiment.Metric.VIEWS, Experiment.Metric.GMV_CAPPED],
            guardrails=[
                {"metric": "latency_p95_ms", "tolerance": 0.25},
                {"metric": "fallback_rate", "tolerance": 0.5},
            ],
        )
        experiment = experiment_services.experiment_create(spec=spec, created_by=operator)
        # Fixed salts, so the seed below decides the whole draw (see DEMO_SEED).
        experiment.arm_salt, experiment.coverage_salt = DEMO_ARM_SALT, DEMO_COVERAGE_SALT
        experiment.save(update_fields=["arm_salt", "coverage_salt", "updated_at"])
        experiment = experiment_services.experiment_start(experiment=experiment)
        summary = simulate_traffic(
            experiment=experiment,
            uvs=DEMO_UVS,
            days=DEMO_DAYS,
            lift=DEMO_GMV_LIFT,
            views_lift=DEMO_VIEWS_LIFT,
            seed=DEMO_SEED,
        )
        self.stdout.write(
            f"experiment {experiment.name!r}: {summary.accepted} simulated events, "
            f"{summary.exposures} exposures over {DEMO_DAYS} days"
        )

    @transaction.atomic
    def _seed_blind_test_and_judge(
        self, room: Room, endpoint: ModelEndpoint, operator: Any
    ) -> None:
        """A blind test of the demo experiment's two arms on a dozen viewer comments, the
        demo labeler assigned, k = 1 (one labeler), with gold pairs; its replies are generated
        on the ``eval`` queue by the local model (the job waits for the model worker). And a
        judge on the same local model, with a calibration on the test's gold pairs queued:
        the demo has no human labels yet, so the judge shows as uncalibrated until the
        labeler's labels calibrate it."""
        from experiments_app.models import BlindTest
        from experiments_app.services.blind_tests import (
            BlindTestSpec,
            blind_test_assign_labelers,
            blind_test_create,
        )
        from training_app.models import Judge
        from training_app.services.judges import judge_calibration_create, judge_create

        experiment = Experiment.objects.filter(name=DEMO_EXPERIMENT).first()
        if experiment is None or BlindTest.objects.filter(name=DEMO_BLIND_TEST).exists():
            return
        arms = {arm.name: arm for arm in experiment.arms.all()}
        rows = REPLAY_FILE.read_text("utf-8").splitlines()[:DEMO_BLIND_REQUESTS]
        test = blind_test_create(
            spec=BlindTestSpec(
                name=DEMO_BLIND_TEST,
                room=room,
                compare=BlindTest.Compare.EXPERIMENT_ARMS,
                experiment=experiment,
                arm_one=arms["harness"],
                arm_two=arms["react"],
                request_source=BlindTest.RequestSource.UPLOAD,
                upload=("\n".join(rows) + "\n").encode("utf-8"),
                upload_name="replay_100.jsonl",
                reply_source=BlindTest.ReplySource.GENERATED,
                labels_per_pair=1,
                gold_pairs=DEMO_BLIND_GOLD_PAIRS,
                instructions="Which reply would you rather a live-stream host gave this "
                "viewer? Judge accuracy against the product shown, helpfulness and tone. "
                "(Demo: both replies come from a small local model.)",
            ),
            created_by=operator,
        )
        labeler = get_user_model().objects.get(username="labeler")
        blind_test_assign_labelers(test=test, labelers=[labeler], assigned_by=operator)
        self.stdout.write(
            f"blind test {test.name!r}: {DEMO_BLIND_REQUESTS} pairs (+{DEMO_BLIND_GOLD_PAIRS} "
            "gold) for 'labeler'; replies are generated by the local model once it is up"
        )
        if Judge.objects.filter(name=DEMO_JUDGE).exists():
            return
        judge = judge_create(
            name=DEMO_JUDGE,
            description="A 135M-parameter CPU model: it shows the judge machinery, it is not "
            "a judge to trust. Calibrate it on human labels before reading its scores.",
            endpoint=endpoint,
            created_by=operator,
        )
        judge_calibration_create(
            version=judge.versions.get(),
            blind_test=test,
            reference="gold",
            created_by=operator,
        )
        self.stdout.write(f"judge {judge.name!r}: a gold-pair calibration is queued")

    def _user(self, username: str, role: Role, password: str) -> Any:
        user_model = get_user_model()
        user, created = user_model.objects.get_or_create(
            username=username, defaults={"email": f"{username}@demo.hat.local"}
        )
        if created:
            user.set_password(password)
            user.save()
        user.groups.add(Group.objects.get_or_create(name=role.value)[0])
        return user
