"""Live replies of a room: the list (newest first, filterable), one reply's trace with its
timeline, and the harness page's try-it box that runs a comment and opens its trace."""

from __future__ import annotations

import uuid

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from console.charts import trace_timeline
from console.forms.replies import ReplyFilterForm, try_it_form
from console.views.access import console_user_required
from console.views.harnesses import _detail_context
from console.views.pagination import paginate
from experiments_app import selectors as reply_selectors
from experiments_app.models import LiveReply
from experiments_app.routing import ArmChoice
from experiments_app.services import ReplyRequest, live_reply
from harness_app import selectors

REPLIES_PER_PAGE = 30


@require_GET
@console_user_required
def reply_list(request: HttpRequest, room_id: int) -> HttpResponse:
    room = selectors.room_get(user=request.user, room_id=room_id)
    filters = ReplyFilterForm(request.GET)
    replies = reply_selectors.replies_of_room(room, **filters.filters())
    return render(
        request,
        "experiments_app/reply_list.html",
        {
            "room": room,
            "filter_form": filters,
            "filtered": any(request.GET.get(k) for k in ("fallback", "source")),
            "page_obj": paginate(request, replies, REPLIES_PER_PAGE),
        },
    )


@require_GET
@console_user_required
def reply_detail(request: HttpRequest, room_id: int, reply_id: int) -> HttpResponse:
    room = selectors.room_get(user=request.user, room_id=room_id)
    record = reply_selectors.reply_get(room=room, reply_id=reply_id)
    trace = record.trace if isinstance(record.trace, dict) else {}
    context = record.context if isinstance(record.context, dict) else {}
    return render(
        request,
        "experiments_app/reply_detail.html",
        {
            "room": room,
            "reply": record,
            "trace": trace,
            "overhead_ms": trace.get("overhead_ms"),
            "timeline": trace_timeline(trace),
            "product_sku": context.get("product_sku", ""),
            "recent_comments": context.get("recent_comments") or [],
            "extra_context": {
                k: v for k, v in context.items() if k not in ("product_sku", "recent_comments")
            },
        },
    )


@require_POST
@console_user_required
def harness_try(request: HttpRequest, harness_id: int) -> HttpResponse:
    """Run one comment through the chosen version, endpoint and agent, then open its trace.

    It goes through the live path (``live_reply``), so the trace is exactly what a viewer's
    comment would produce; it is stored with ``source=console`` and never counts as live.
    """
    harness = selectors.harness_get(user=request.user, harness_id=harness_id)
    form = try_it_form(harness, data=request.POST, user=request.user)
    if not form.is_valid():
        context = _detail_context(request, harness, try_form=form)
        return render(request, "harness_app/harness_detail.html", context, status=400)
    data = form.cleaned_data
    version = selectors.harness_version_get(harness=harness, number=data["version"])
    record = live_reply(
        room=harness.room,
        request=ReplyRequest(
            request_id=f"console-{uuid.uuid4()}",
            uv_id=f"console-{request.user.pk}",
            comment=data["comment"],
            product_sku=data["product_sku"],
        ),
        source=LiveReply.Source.CONSOLE,
        choice=ArmChoice(data["arm"], version, data["endpoint"]),
    )
    return redirect("console:reply-detail", room_id=harness.room.pk, reply_id=record.pk)
