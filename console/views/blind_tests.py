"""Blind tests in the console, operators only (merchants and labelers get a 404): the list,
the create form, a test's page (generation progress, sides, labelers, results, chart, CSV),
and the labelers page (invite a labeler: a one-time set-password link)."""

from __future__ import annotations

import math
from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.views import PasswordResetConfirmView
from django.core.exceptions import ValidationError
from django.forms import Form
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console.charts import blind_test_figure
from console.forms.blind_tests import AssignLabelersForm, BlindTestForm, LabelerInviteForm
from console.roles import Role
from console.services import people as people_services
from console.views.access import operator_required
from console.views.vendor import plotly_js_url
from experiments_app.models import BlindTest
from experiments_app.selectors import blind_tests as selectors
from experiments_app.services import blind_tests as services


def add_errors(form: Form, exc: ValidationError) -> None:
    """A service's ``ValidationError`` on the form's fields (unknown names: non-field)."""
    if not hasattr(exc, "error_dict"):
        form.add_error(None, exc.messages)
        return
    for name, errors in exc.message_dict.items():
        form.add_error(name if name in form.fields else None, errors)


@require_GET
@operator_required
def blind_test_list(request: HttpRequest) -> HttpResponse:
    tests = list(selectors.blind_tests_list()[:200])
    return render(request, "experiments_app/blind_test_list.html", {"tests": tests})


@require_http_methods(["GET", "POST"])
@operator_required
def blind_test_create(request: HttpRequest) -> HttpResponse:
    initial = {
        "compare": BlindTest.Compare.EXPERIMENT_ARMS,
        "request_source": BlindTest.RequestSource.LIVE_REPLIES,
        "reply_source": BlindTest.ReplySource.STORED,
    }
    form = BlindTestForm(
        request.POST if request.method == "POST" else None,
        request.FILES if request.method == "POST" else None,
        initial=initial,
    )
    if request.method == "POST" and form.is_valid():
        try:
            test = services.blind_test_create(spec=form.spec(), created_by=request.user)
        except ValidationError as exc:
            add_errors(form, exc)
        else:
            messages.success(request, f"Blind test {test.name!r} created.")
            return redirect("console:blind-test-detail", test_id=test.pk)
    return render(
        request,
        "experiments_app/blind_test_form.html",
        {"form": form},
        status=400 if form.errors else 200,
    )


def _pct(value: float) -> str:
    return "—" if value is None or math.isnan(value) else f"{100 * value:.1f}%"


def _p(value: float) -> str:
    if value is None or math.isnan(value):
        return "—"
    return f"{value:.2g}" if value >= 0.001 else f"{value:.1e}"


def _num(value: float) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.3f}"


def results_rows(results: selectors.BlindTestResults) -> list[tuple[str, str, str]]:
    """(statistic, value, how) rows of the results table."""
    p = results.preference
    if p is None:
        return []
    one = results.label_one
    conf = f"{round(100 * p.confidence)}%"
    return [
        (
            f"{one} wins / ties / {results.label_two} wins",
            f"{p.wins} / {p.ties} / {p.losses}",
            "by pair majority; a split majority or both bad is a tie",
        ),
        (
            f"{one} win rate among decisive pairs",
            f"{_pct(p.win_rate.estimate)} "
            f"(Wilson {conf} {_pct(p.win_rate.low)}-{_pct(p.win_rate.high)})",
            "statsmodels proportion_confint, method wilson",
        ),
        ("Sign test p-value", _p(p.sign_test_p), "scipy binomtest, two-sided, p = 1/2"),
        (
            f"{one} score (wins + ties/2) / pairs",
            f"{_pct(p.score.estimate)} (bootstrap {conf} {_pct(p.score.low)}-{_pct(p.score.high)})",
            "percentile bootstrap over pairs",
        ),
        ("Tie rate", _pct(p.tie_rate), "ties and both-bad among pairs"),
        ("Both-bad rate", _pct(results.both_bad_rate), "share of labels"),
        (
            "Left reply chosen (position bias)",
            f"{_pct(p.left_share)} (p {_p(p.position_bias_p)})",
            "decisive labels choosing the left reply, scipy binomtest against 1/2",
        ),
        ("Fleiss' kappa", _num(p.fleiss_kappa), "statsmodels inter_rater.fleiss_kappa"),
        ("Krippendorff's alpha", _num(p.krippendorff_alpha), "krippendorff package, nominal"),
        ("Pairs / labels", f"{p.pairs} / {p.labels}", "non-gold pairs with a label"),
    ]


@require_GET
@operator_required
def blind_test_detail(request: HttpRequest, test_id: int) -> HttpResponse:
    test = selectors.blind_test_get(test_id=test_id)
    results = selectors.blind_test_results(test)
    assigned = list(selectors.blind_test_labelers(test))
    assign_form = AssignLabelersForm(initial={"labelers": [a.labeler_id for a in assigned]})
    figures: dict[str, Any] = {}
    if results.preference is not None:
        p = results.preference
        figures["figure-blind"] = blind_test_figure(
            label_one=results.label_one,
            label_two=results.label_two,
            wins=p.wins,
            ties=p.ties,
            losses=p.losses,
            win_rate=p.win_rate,
        )
    context = {
        "test": test,
        "sides": selectors.blind_test_sides(test),
        "results": results,
        "rows": results_rows(results),
        "assigned": assigned,
        "assign_form": assign_form,
        "figures": figures,
        "plotly_js_url": plotly_js_url(),
        "finished": test.status != BlindTest.Status.GENERATING,
    }
    return render(request, "experiments_app/blind_test_detail.html", context)


@require_GET
@operator_required
def blind_test_status(request: HttpRequest, test_id: int) -> JsonResponse:
    """Generation progress for the test page's progress bar."""
    test = get_object_or_404(BlindTest, pk=test_id)
    return JsonResponse(
        {
            "status": test.status,
            "status_display": test.get_status_display(),  # type: ignore[attr-defined]
            "progress_done": test.progress_done,
            "progress_total": test.progress_total,
            "percent": test.progress_percent,
            "finished": test.status != BlindTest.Status.GENERATING,
            "error": test.error,
        }
    )


@require_GET
@operator_required
def blind_test_labels_csv(request: HttpRequest, test_id: int) -> StreamingHttpResponse:
    test = get_object_or_404(BlindTest, pk=test_id)
    response = StreamingHttpResponse(
        selectors.blind_test_labels_csv(test), content_type="text/csv; charset=utf-8"
    )
    name = selectors.labels_csv_file_name(test)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@require_POST
@operator_required
def blind_test_assign(request: HttpRequest, test_id: int) -> HttpResponse:
    test = get_object_or_404(BlindTest, pk=test_id)
    form = AssignLabelersForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Pick at least one labeler.")
    else:
        try:
            added = services.blind_test_assign_labelers(
                test=test, labelers=list(form.cleaned_data["labelers"]), assigned_by=request.user
            )
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.success(request, f"{added} labeler{'s' if added != 1 else ''} assigned.")
    return redirect("console:blind-test-detail", test_id=test.pk)


@require_POST
@operator_required
def blind_test_unassign(request: HttpRequest, test_id: int, labeler_id: int) -> HttpResponse:
    test = get_object_or_404(BlindTest, pk=test_id)
    labeler = get_object_or_404(get_user_model(), pk=labeler_id)
    services.blind_test_unassign_labeler(test=test, labeler=labeler)
    messages.success(request, f"{labeler.get_username()} unassigned; their labels are kept.")
    return redirect("console:blind-test-detail", test_id=test.pk)


@require_POST
@operator_required
def blind_test_close(request: HttpRequest, test_id: int) -> HttpResponse:
    test = get_object_or_404(BlindTest, pk=test_id)
    try:
        services.blind_test_close(test=test)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, "Test closed: no more labels are taken.")
    return redirect("console:blind-test-detail", test_id=test.pk)


@require_POST
@operator_required
def blind_test_open(request: HttpRequest, test_id: int) -> HttpResponse:
    test = get_object_or_404(BlindTest, pk=test_id)
    try:
        test = services.blind_test_open(test=test)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, f"Test {test.get_status_display().lower()}.")  # type: ignore[attr-defined]
    return redirect("console:blind-test-detail", test_id=test.pk)


@require_http_methods(["GET", "POST"])
@operator_required
def labeler_list(request: HttpRequest) -> HttpResponse:
    """Invite a labeler (the People invite: a one-time link shown once, on this response,
    and an audit row) and list the labelers."""
    form = LabelerInviteForm(request.POST if request.method == "POST" else None)
    invite = None
    if request.method == "POST" and form.is_valid():
        try:
            invite = people_services.person_invite(
                username=form.cleaned_data["username"],
                email=form.cleaned_data["email"],
                role=Role.LABELER,
                invited_by=request.user,
            )
        except ValidationError as exc:
            add_errors(form, exc)
        else:
            form = LabelerInviteForm()
    context = {
        "form": form,
        "invite": invite,
        "invite_url": request.build_absolute_uri(invite.path) if invite else "",
        "labelers": list(selectors.labelers_all()),
        "role": Role.LABELER.value,
    }
    response = render(
        request,
        "experiments_app/blind_test_labelers.html",
        context,
        status=400 if form.errors else 200,
    )
    if invite is not None:
        response["Cache-Control"] = "no-store"  # the one-time link is not kept by caches
    return response


class SetPasswordView(PasswordResetConfirmView):
    """Only for set-password links ``POST /api/v1/labelers/`` handed out before it moved to
    the People invite (Django's password-reset confirm view; the token dies once the password
    is set, or after ``PASSWORD_RESET_TIMEOUT``, 3 days by default). Nothing issues these
    links any more: once that time has passed since the change, this view and its URL go."""

    template_name = "experiments_app/blind_test_set_password.html"
    success_url = reverse_lazy("login")
    post_reset_login = False
