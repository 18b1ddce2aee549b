"""Experiment pages: list, create with the arms formset, start/stop confirmation, new
phases, the readout page (tables, charts, banners), CSV export, tenancy."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from console import charts
from experiments_app.models import ArmDayStats, Experiment, ExperimentPhase, LiveReply
from experiments_app.readouts import experiment_readout
from experiments_app.traffic_simulation import simulate_traffic
from harness_app import services as harness_services
from tests.experiments_app.conftest import endpoint, make_experiment  # noqa: F401 (fixtures)
from tests.factories import RoomFactory

pytestmark = pytest.mark.django_db


def form_data(room: Any, endpoint: Any, weights=("80", "20"), **extra: Any) -> dict[str, Any]:  # noqa: F811
    version = room.harness.published_version
    data = {
        "name": "Harness vs ReAct",
        "hypothesis": "",
        "rooms": [room.pk],
        "unit": "room_day",
        "primary_metric": "gmv",
        "secondary_metrics": ["views"],
        "coverage": "100",
        "layer": "default",
        "layer_start": "0",
        "layer_end": "10000",
        "cuped": "on",
        "alpha": "0.05",
        "guard_latency_p95_ms": "25",
        "arms-TOTAL_FORMS": str(len(weights)),
        "arms-INITIAL_FORMS": "0",
        "arms-MIN_NUM_FORMS": "2",
        "arms-MAX_NUM_FORMS": "8",
    }
    for i, weight in enumerate(weights):
        data |= {
            f"arms-{i}-name": "control" if i == 0 else f"treatment{i}",
            f"arms-{i}-kind": "react" if i == 0 else "harness",
            f"arms-{i}-harness_version": str(version.pk),
            f"arms-{i}-endpoint": str(endpoint.pk),
            f"arms-{i}-weight": weight,
        }
    return data | extra


def test_list_shows_operators_everything_and_merchants_their_own(
    operator_client: Client,
    merchant_client: Client,
    labeler_client: Client,
    published_room: Any,
    other_merchant: Any,
    make_experiment: Any,  # noqa: F811
) -> None:
    make_experiment([published_room], name="Mine")
    theirs = RoomFactory(owner=other_merchant, name="B")
    # an experiment on merchant B's room only (set directly: the helper pins room A's harness)
    experiment = make_experiment([published_room], name="Theirs", start=False)
    experiment.rooms.set([theirs])
    url = reverse("console:experiment-list")
    everything = operator_client.get(url).content.decode()
    own = merchant_client.get(url).content.decode()
    assert "Mine" in everything and "Theirs" in everything and "+ New experiment" in everything
    assert "Mine" in own and "Theirs" not in own and "+ New experiment" not in own
    assert labeler_client.get(url).status_code == 404


def test_create_form_puts_the_weight_error_at_the_weight_fields(
    operator_client: Client,
    published_room: Any,
    endpoint: Any,  # noqa: F811
) -> None:
    response = operator_client.post(
        reverse("console:experiment-create"), form_data(published_room, endpoint, ("70", "20"))
    )
    assert response.status_code == 400
    page = response.content.decode()
    errors = re.findall(
        r'data-field="arms-\d-weight">.*?<p class="field-error" role="alert">([^<]+)</p>',
        page,
        re.S,
    )
    assert errors == ["Weights sum to 90%; they must sum to 100%."] * 2
    assert not Experiment.objects.exists()


def test_create_then_start_with_confirmation(
    operator_client: Client,
    published_room: Any,
    endpoint: Any,  # noqa: F811
) -> None:
    response = operator_client.post(
        reverse("console:experiment-create"), form_data(published_room, endpoint)
    )
    experiment = Experiment.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse(
        "console:experiment-detail", args=[experiment.pk]
    )
    assert experiment.guardrails == [{"metric": "latency_p95_ms", "tolerance": 0.25}]
    assert list(experiment.arms.values_list("name", "weight")) == [
        ("control", 8000),
        ("treatment1", 2000),
    ]
    start_url = reverse("console:experiment-start", args=[experiment.pk])
    confirm = operator_client.get(start_url).content.decode()
    assert "Start “Harness vs ReAct”?" in confirm and "80%" in confirm
    assert operator_client.post(start_url).status_code == 302
    experiment.refresh_from_db()
    assert experiment.status == "running"


def test_start_refused_for_an_unpublished_version_shows_the_reason(
    operator_client: Client,
    published_room: Any,
    endpoint: Any,  # noqa: F811
    operator: Any,
    demo_harness: Any,
) -> None:
    draft = harness_services.harness_version_create(
        harness=published_room.harness, content=demo_harness, base_version=1, author=operator
    )
    data = form_data(published_room, endpoint) | {"arms-1-harness_version": str(draft.pk)}
    operator_client.post(reverse("console:experiment-create"), data)
    experiment = Experiment.objects.get()
    response = operator_client.post(reverse("console:experiment-start", args=[experiment.pk]))
    assert response.status_code == 400
    assert "never published" in response.content.decode()
    experiment.refresh_from_db()
    assert experiment.status == "draft"


def test_merchants_cannot_create_or_start(
    merchant_client: Client,
    published_room: Any,
    make_experiment: Any,  # noqa: F811
) -> None:
    experiment = make_experiment([published_room], start=False)
    assert merchant_client.get(reverse("console:experiment-create")).status_code == 404
    start = reverse("console:experiment-start", args=[experiment.pk])
    assert merchant_client.post(start).status_code == 404
    # but the readout of their own room's experiment is theirs to read
    detail = reverse("console:experiment-detail", args=[experiment.pk])
    assert merchant_client.get(detail).status_code == 200


@pytest.fixture
def live_experiment(published_room: Any, make_experiment: Any) -> Experiment:  # noqa: F811
    experiment = make_experiment(
        [published_room],
        secondary_metrics=["views"],
        guardrails=[{"metric": "fallback_rate", "tolerance": 0.2}],
    )
    simulate_traffic(experiment=experiment, uvs=2500, days=5, lift=0.1, seed=8)
    return experiment


def test_readout_page_has_tables_charts_and_phase_notes(
    operator_client: Client, live_experiment: Experiment
) -> None:
    response = operator_client.get(reverse("console:experiment-detail", args=[live_experiment.pk]))
    assert response.status_code == 200
    page = response.content.decode()
    assert "Confirmed-receipt GMV per UV" in page and "Item-page views per UV" in page
    assert "CUPED relative lift" in page and "Holm p" in page and "Cochran" in page
    assert "Phase 1 from" in page and "Randomized by UV" in page
    assert "MDE: the smallest true lift" in page and "per-UV variance after CUPED" in page
    for figure in ("figure-ci", "figure-cumulative-gmv", "figure-daily-views"):
        payload = re.search(
            rf'<script id="{figure}" type="application/json">(.*?)</script>', page, re.S
        )
        assert payload is not None, figure
        assert json.loads(payload.group(1))["data"]
    plotly_url = re.search(r'<script src="(/vendor/plotly-[^"]+)"', page)
    assert plotly_url is not None
    js = operator_client.get(plotly_url.group(1))
    assert js.status_code == 200 and js["Content-Type"].startswith("text/javascript")
    # every script and stylesheet is served by this server (a bare "cdn" search also hit
    # random CSRF tokens and CSP nonces now and then)
    sources = re.findall(r'<(?:script|link)[^>]+(?:src|href)="([^"]+)"', page)
    assert sources and all(s.startswith("/") and not s.startswith("//") for s in sources)


def test_srm_and_guardrail_banners(
    operator_client: Client, live_experiment: Experiment, published_room: Any
) -> None:
    # given an observed split far from the configured weights, and a treatment arm that
    # falls back much more often than control
    phase = ExperimentPhase.objects.get(experiment=live_experiment)
    phase.weights = {k: 5000 for k in phase.weights}
    phase.save()
    control, treatment = live_experiment.arms.order_by("position")
    for i, (arm, fallback) in enumerate([(control, False), (control, True), (treatment, True)]):
        LiveReply.objects.create(
            room=published_room,
            request_id=f"r{i}",
            uv_id=f"u{i}",
            comment="hi",
            status="done",
            experiment=live_experiment,
            experiment_arm=arm,
            arm=arm.kind,
            fallback=fallback,
        )
    page = operator_client.get(
        reverse("console:experiment-detail", args=[live_experiment.pk])
    ).content.decode()
    assert "Sample ratio mismatch." in page and "expected 50.00%" in page
    assert "Guardrail breached." in page
    assert "fallback rate: treatment 100.0% vs control 50.0% (+100.0%; tolerance +20%)" in page


def _rollup_one_day(experiment: Experiment, means: tuple[float, float], *, n: int = 1_000) -> None:
    """What the rollups would write after one day: per arm, n UVs with the given mean (sd 2)
    and an uncorrelated pre-period covariate (so CUPED changes nothing)."""
    phase = ExperimentPhase.objects.get(experiment=experiment)
    assert experiment.started_at is not None
    rows = []
    for arm, mean in zip(experiment.arms.order_by("position"), means, strict=True):
        sum_y, sum_y2 = n * mean, (n - 1) * 4.0 + n * mean * mean
        for scope in ("daily", "cumulative"):
            for metric in ("gmv", "views"):
                rows.append(
                    ArmDayStats(
                        experiment_id=experiment.pk,
                        phase_id=phase.pk,
                        arm_id=arm.pk,
                        day=experiment.started_at.date(),
                        scope=scope,
                        metric=metric,
                        n=n,
                        sum_y=sum_y,
                        sum_y2=sum_y2,
                        sum_x=n,
                        sum_x2=n,
                        sum_xy=sum_y,
                        sum_c=n,
                        sum_c2=(n - 1) + n,
                        sum_yc=sum_y,
                        sum_xc=n,
                    )
                )
    ArmDayStats.objects.bulk_create(rows)


@pytest.mark.parametrize(
    ("treatment_mean", "tone"),
    [
        (9.0, "bad"),  # -10%, z ~ -11: a significant drop is red, not green
        (11.0, "good"),  # +10%, significant
        (10.05, "neutral"),  # +0.5%, p ~ 0.58
    ],
)
def test_readout_colours_a_significant_lift_by_its_direction(
    operator_client: Client,
    published_room: Any,
    make_experiment: Any,  # noqa: F811
    treatment_mean: float,
    tone: str,
) -> None:
    # given GMV and views per UV of 10.0 in control and treatment_mean in treatment
    experiment = make_experiment([published_room], secondary_metrics=["views"])
    _rollup_one_day(experiment, (10.0, treatment_mean))
    # when the readout page renders
    page = operator_client.get(
        reverse("console:experiment-detail", args=[experiment.pk])
    ).content.decode()
    # then the relative and CUPED relative lifts of both metrics carry the tone of the result
    cells = re.findall(r'<td class="lift lift-(\w+)" title="([^"]+)"><b>([^<]+)</b>', page)
    expected = f"{(treatment_mean / 10.0 - 1) * 100:+.2f}%"
    words = {"good": "significant improvement", "bad": "significant deterioration"}
    assert cells == [(tone, words.get(tone, "not significant"), expected)] * 4


def test_csv_export(
    operator_client: Client, other_merchant_client: Client, live_experiment: Experiment
) -> None:
    url = reverse("console:experiment-csv", args=[live_experiment.pk])
    response = operator_client.get(url)
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    summary = [r for r in rows if r["section"] == "summary" and r["metric"] == "gmv"]
    assert [r["method"] for r in summary] == [
        "welch",
        "welch-delta",
        "fieller",
        "cuped",
        "cuped-delta",
    ]
    assert summary[-1]["p_holm"] != "" and float(summary[1]["ci_low"]) < float(
        summary[1]["ci_high"]
    )
    assert {r["section"] for r in rows} == {"summary", "daily", "cumulative"}
    assert len([r for r in rows if r["section"] == "daily" and r["metric"] == "views"]) == 5
    assert other_merchant_client.get(url).status_code == 404


def test_other_merchant_gets_404_on_every_experiment_page(
    other_merchant_client: Client, live_experiment: Experiment
) -> None:
    for name in ("experiment-detail", "experiment-csv", "experiment-stop", "experiment-allocation"):
        url = reverse(f"console:{name}", args=[live_experiment.pk])
        assert other_merchant_client.get(url).status_code == 404, name


def test_allocation_change_starts_a_phase_and_errors_sit_at_the_fields(
    operator_client: Client,
    published_room: Any,
    make_experiment: Any,  # noqa: F811
) -> None:
    experiment = make_experiment([published_room])
    url = reverse("console:experiment-allocation", args=[experiment.pk])
    bad = operator_client.post(
        url, {"weight_control": "60", "weight_treatment": "30", "coverage": "100"}
    )
    assert bad.status_code == 400
    assert bad.content.decode().count("Weights sum to 90%; they must sum to 100%.") == 2
    good = operator_client.post(
        url, {"weight_control": "50", "weight_treatment": "50", "coverage": "100"}
    )
    assert good.status_code == 302
    phase = ExperimentPhase.objects.get(experiment=experiment, number=2)
    assert phase.note == "weights control 80% / treatment 20% -> control 50% / treatment 50%"
    page = operator_client.get(reverse("console:experiment-detail", args=[experiment.pk]))
    assert "Phase 2 from" in page.content.decode()


def test_stop_with_confirmation(
    operator_client: Client,
    published_room: Any,
    make_experiment: Any,  # noqa: F811
) -> None:
    experiment = make_experiment([published_room])
    url = reverse("console:experiment-stop", args=[experiment.pk])
    assert "Stop experiment" in operator_client.get(url).content.decode()
    assert operator_client.post(url).status_code == 302
    experiment.refresh_from_db()
    assert experiment.status == "stopped"


def _extents(figure: dict[str, Any]) -> list[float]:
    """Every plotted y value, error-bar ends included."""
    out: list[float] = []
    for trace in figure["data"]:
        error = trace.get("error_y", {})
        for k, y in enumerate(trace["y"]):
            if y is None:
                continue
            out.append(y)
            for arm, sign in (("array", 1), ("arrayminus", -1)):
                if error.get(arm) and error[arm][k] is not None:
                    out.append(y + sign * error[arm][k])
    return out


def test_lift_charts_cut_only_runaway_intervals_and_say_so(live_experiment: Experiment) -> None:
    readout = experiment_readout(experiment=live_experiment)
    for metric in ("gmv", "views"):
        for figure in (
            charts.daily_effects(readout, metric),
            charts.cumulative_lift(readout, metric),
        ):
            extents = _extents(figure)
            estimates = [v for v in figure["data"][-1]["y"] if v is not None]
            cut = figure["layout"].get("yaxis", {}).get("range")
            notes = [
                a["text"] for a in figure["layout"].get("annotations", []) if "cut" in a["text"]
            ]
            if cut is None:  # plotly's own range: nothing runs off, nothing said
                assert not notes
                continue
            # a cut keeps every estimate on the chart, is needed, and is named on the chart
            assert all(cut[0] <= v <= cut[1] for v in estimates)
            assert max(extents) > cut[1] or min(extents) < cut[0]
            assert len(notes) == 1 and notes[0].startswith("axis cut at")


def test_readout_charts_plot_the_readout_numbers(live_experiment: Experiment) -> None:
    # given the readout of an experiment with simulated traffic
    readout = experiment_readout(experiment=live_experiment)
    gmv = next(m for m in readout.metrics if m.metric == "gmv").comparisons[0].readout
    assert gmv.daily is not None
    # when the daily-effect and cumulative charts are built
    daily = charts.daily_effects(readout, "gmv")["data"][0]
    cumulative = charts.cumulative_lift(readout, "gmv")["data"][-1]
    # then every point and error bar is the readout's relative effect, in percent
    for i, day in enumerate(gmv.daily.days):
        effect = day.relative
        if not math.isfinite(effect.estimate):  # an arm's mean is 0 that day: no point
            assert daily["y"][i] is None
            continue
        assert daily["y"][i] == pytest.approx(100 * effect.estimate)
        assert daily["error_y"]["array"][i] == pytest.approx(
            100 * (effect.ci_high - effect.estimate)
        )
        assert daily["error_y"]["arrayminus"][i] == pytest.approx(
            100 * (effect.estimate - effect.ci_low)
        )
        assert effect.ci_low >= -1  # the log-ratio interval never reaches below -100%
    # (a cut-off where an arm's mean is 0 has no relative lift: no point, not NaN)
    assert cumulative["y"] == [
        pytest.approx(100 * p.relative.estimate) if math.isfinite(p.relative.estimate) else None
        for p in gmv.daily.cumulative
    ]
    assert len(cumulative["x"]) == len(gmv.daily.cumulative)
