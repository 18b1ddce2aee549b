"""People (operators only; merchants and labelers get a 404 like every operator page):
invite with a one-time link, change roles, deactivate/reactivate, give rooms to merchants,
and the audit log. The invite link page (``invite/<token>/``) is public: the token is the
credential."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.forms import SetPasswordForm
from django.core.exceptions import ValidationError
from django.forms import Form
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console.forms.people import PersonInviteForm, RoleChangeForm, RoomOwnerForm
from console.selectors import people as selectors
from console.services import people as services
from console.views.access import operator_required
from console.views.pagination import paginate
from harness_app.models import Room

AUDIT_PER_PAGE = 50


def _add_errors(form: Form, exc: ValidationError) -> None:
    if not hasattr(exc, "error_dict"):
        form.add_error(None, exc.messages)
        return
    for name, errors in exc.message_dict.items():
        form.add_error(name if name in form.fields else None, errors)


def _list_context(request: HttpRequest, **extra: Any) -> dict[str, Any]:
    context: dict[str, Any] = {
        "people": list(selectors.people_list()),
        "rooms": list(selectors.rooms_with_owners()[:500]),
        "audit": paginate(request, selectors.audit_events(), AUDIT_PER_PAGE),
        "invite_form": PersonInviteForm(),
        "owner_form": RoomOwnerForm(),
    }
    context.update(extra)
    return context


def _no_store(response: HttpResponse) -> HttpResponse:
    """A page showing a one-time link is never cached."""
    response["Cache-Control"] = "no-store"
    return response


@require_http_methods(["GET", "POST"])
@operator_required
def people_list(request: HttpRequest) -> HttpResponse:
    """Everyone with their role and state, the invite form (POST: the link is shown once, on
    this response), the room-owner form and the audit log."""
    if request.method == "GET":
        return render(request, "console/people_list.html", _list_context(request))
    form = PersonInviteForm(request.POST)
    if form.is_valid():
        try:
            link = services.person_invite(invited_by=request.user, **form.cleaned_data)
        except ValidationError as exc:
            _add_errors(form, exc)
        else:
            context = _list_context(
                request, invite=link, invite_url=request.build_absolute_uri(link.path)
            )
            return _no_store(render(request, "console/people_list.html", context))
    context = _list_context(request, invite_form=form)
    return render(request, "console/people_list.html", context, status=400)


@require_POST
@operator_required
def room_owner_assign(request: HttpRequest) -> HttpResponse:
    form = RoomOwnerForm(request.POST)
    if form.is_valid():
        room: Room = form.cleaned_data["room"]
        owner = form.cleaned_data["owner"]
        try:
            services.room_owner_assign(room=room, owner=owner, actor=request.user)
        except ValidationError as exc:
            _add_errors(form, exc)
        else:
            messages.success(request, f"{room.name} now belongs to {owner.get_username()}.")
            return redirect("console:people-list")
    context = _list_context(request, owner_form=form)
    return render(request, "console/people_list.html", context, status=400)


def _detail(request: HttpRequest, person: Any, *, status: int = 200, **extra: Any) -> HttpResponse:
    context: dict[str, Any] = {
        "person": person,
        "role": services.person_role(person),
        "rooms": list(selectors.rooms_of(person)),
        "audit": paginate(request, selectors.audit_events(target=person), AUDIT_PER_PAGE),
        "role_form": RoleChangeForm(
            initial={"role": getattr(services.person_role(person), "value", None)}
        ),
        "is_self": person.pk == request.user.pk,
    }
    context.update(extra)
    return render(request, "console/person_detail.html", context, status=status)


@require_GET
@operator_required
def person_detail(request: HttpRequest, user_id: int) -> HttpResponse:
    return _detail(request, selectors.person_get(user_id=user_id))


@require_POST
@operator_required
def person_role_change(request: HttpRequest, user_id: int) -> HttpResponse:
    person = selectors.person_get(user_id=user_id)
    form = RoleChangeForm(request.POST)
    if form.is_valid():
        try:
            services.person_role_change(
                user=person, role=form.cleaned_data["role"], actor=request.user
            )
        except ValidationError as exc:
            _add_errors(form, exc)
        else:
            messages.success(
                request, f"{person.get_username()} is now a {form.cleaned_data['role'].lower()}."
            )
            return redirect("console:person-detail", user_id=person.pk)
    return _detail(request, person, status=400, role_form=form)


def _state_change(request: HttpRequest, user_id: int, change: Any, done: str) -> HttpResponse:
    person = selectors.person_get(user_id=user_id)
    try:
        change(user=person, actor=request.user)
    except ValidationError as exc:
        return _detail(request, person, status=400, state_errors=exc.messages)
    messages.success(request, f"{person.get_username()} {done}.")
    return redirect("console:person-detail", user_id=person.pk)


@require_POST
@operator_required
def person_deactivate(request: HttpRequest, user_id: int) -> HttpResponse:
    return _state_change(request, user_id, services.person_deactivate, "is deactivated")


@require_POST
@operator_required
def person_reactivate(request: HttpRequest, user_id: int) -> HttpResponse:
    return _state_change(request, user_id, services.person_reactivate, "is active again")


@require_POST
@operator_required
def person_invite_reissue(request: HttpRequest, user_id: int) -> HttpResponse:
    person = selectors.person_get(user_id=user_id)
    try:
        link = services.invitation_reissue(user=person, actor=request.user)
    except ValidationError as exc:
        return _detail(request, person, status=400, state_errors=exc.messages)
    response = _detail(
        request,
        selectors.person_get(user_id=user_id),
        invite=link,
        invite_url=request.build_absolute_uri(link.path),
    )
    return _no_store(response)


@never_cache
@require_http_methods(["GET", "POST"])
def invite_accept(request: HttpRequest, token: str) -> HttpResponse:
    """The invited person chooses their password (no login needed: the link is the key)."""
    invitation = services.invitation_valid(token)
    if invitation is None:
        response = render(request, "console/invite_accept.html", {"validlink": False}, status=410)
    else:
        form = SetPasswordForm(invitation.user, request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                user = services.invitation_accept(
                    token=token, password=form.cleaned_data["new_password1"]
                )
            except ValidationError as exc:
                _add_errors(form, exc)
            else:
                messages.success(request, f"Password set. Log in as {user.get_username()}.")
                return redirect("login")
        response = render(
            request,
            "console/invite_accept.html",
            {"validlink": True, "form": form, "invited": invitation.user},
            status=400 if form.errors else 200,
        )
    # The token is in this page's URL: never send it to another site as a Referer.
    # ("no-referrer" would also make the browser send "Origin: null" with the form's POST,
    # which Django's CSRF check refuses.)
    response["Referrer-Policy"] = "same-origin"
    return response
