"""The People API (operators only): list, invite (the one-time link accepted once through the
console's /invite/ page), read, change role / deactivate / reactivate, re-issue the link, the
audit log, give a room to a merchant; every rule is the service's, as a 400 naming the field."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from console.models import Invitation, PeopleAuditEvent
from console.roles import Role, user_roles
from console.services import people as services
from harness_app import services as harness_services
from tests.conftest import _client_for
from tests.factories import RoomFactory, UserFactory

pytestmark = pytest.mark.django_db
User = get_user_model()
URL = "/api/v1/people/"
PASSWORD = "a-long-new-password-7"


def invite(api: APIClient, **overrides: Any) -> Any:
    body = {"username": "shop-c", "email": "c@example.test", "role": "Merchant", **overrides}
    return api.post(URL, body, format="json")


def field_errors(response: Any) -> list[str]:
    assert response.status_code == 400, response.content[:300]
    return [e["field"] for e in response.json()["errors"]]


def actions(target: Any = None) -> list[str]:
    events = PeopleAuditEvent.objects.order_by("id")
    if target is not None:
        events = events.filter(target=target)
    return list(events.values_list("action", flat=True))


def accept(url: str, password: str = PASSWORD) -> Any:
    path = url.removeprefix("http://testserver")
    return Client().post(path, {"new_password1": password, "new_password2": password})


# --- invite and accept ------------------------------------------------------------------------


def test_invite_returns_the_link_once_and_it_is_accepted_once(
    operator_api: APIClient, operator: Any
) -> None:
    response = invite(operator_api)
    assert response.status_code == 201
    assert response["Cache-Control"] == "no-store"
    body = response.json()
    assert re.fullmatch(r"http://testserver/invite/[A-Za-z0-9_-]{40,}/", body["invite_url"])
    assert body["expires_at"]
    assert {k: body[k] for k in ("username", "email", "role", "is_active")} == {
        "username": "shop-c",
        "email": "c@example.test",
        "role": "Merchant",
        "is_active": True,
    }
    assert (body["has_password"], body["invite_pending"], body["rooms"]) == (False, True, 0)
    token = body["invite_url"].rstrip("/").rsplit("/", 1)[1]
    assert token not in str(list(Invitation.objects.values()))  # only the hash is stored
    # the link is not in any later response
    detail = operator_api.get(f"{URL}{body['id']}/")
    assert "invite_url" not in detail.json() and token not in detail.content.decode()
    # accepted once through the console's page
    assert accept(body["invite_url"]).status_code == 302
    user = User.objects.get(pk=body["id"])
    assert user.check_password(PASSWORD)
    assert accept(body["invite_url"], "another-long-pass-8").status_code == 410
    assert actions(user) == ["invited", "invite_accepted"]
    assert PeopleAuditEvent.objects.filter(action="invited").get().actor == operator
    after = operator_api.get(f"{URL}{user.pk}/").json()
    assert (after["has_password"], after["invite_pending"]) == (True, False)


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"role": "Admin"}, "role", "Unknown role 'Admin'"),
        ({"role": ""}, "role", ""),
        ({"username": "OP"}, "username", "is taken"),
        ({"username": "bad name!"}, "username", "Enter a valid username"),
        ({"username": ""}, "username", "Required."),
        ({"username": "x" * 151}, "username", ""),
        ({"email": "OP@example.test"}, "email", "e-mail address exists"),
        ({"email": "nope"}, "email", "valid e-mail"),
        ({"username": "a\u0000b"}, "username", ""),
        ({"email": "c\u0000@example.test"}, "email", ""),
        ({"role": ["Merchant"]}, "role", ""),
        ({"username": {"a": {"b": 1}}}, "username", ""),
    ],
)
def test_bad_invites_are_400_naming_the_field_and_save_nothing(
    operator_api: APIClient, overrides: dict[str, Any], field: str, message: str
) -> None:
    response = invite(operator_api, **overrides)
    assert field in field_errors(response)
    assert message in " ".join(e["message"] for e in response.json()["errors"])
    assert not User.objects.filter(username="shop-c").exists()
    assert PeopleAuditEvent.objects.count() == 0


def test_missing_fields_and_deep_nesting_are_400(operator_api: APIClient) -> None:
    assert set(field_errors(operator_api.post(URL, {}, format="json"))) == {
        "username",
        "email",
        "role",
    }
    deep: Any = "x"
    for _ in range(200):
        deep = [deep]
    response = operator_api.post(
        URL, {"username": deep, "email": "a@b.test", "role": "Merchant"}, format="json"
    )
    assert response.status_code == 400


# --- list, detail, edit -------------------------------------------------------------------------


def test_list_is_paginated_and_shows_each_persons_state(
    operator_api: APIClient, operator: Any, merchant: Any, labeler: Any, room: Any
) -> None:
    invite(operator_api)
    body = operator_api.get(f"{URL}?limit=2").json()
    assert body["count"] == 4 and len(body["results"]) == 2
    rows = {p["username"]: p for p in operator_api.get(URL).json()["results"]}
    assert {u: (p["role"], p["has_password"], p["invite_pending"]) for u, p in rows.items()} == {
        "op": ("Operator", True, False),
        "merchant-a": ("Merchant", True, False),
        "labeler": ("Labeler", True, False),
        "shop-c": ("Merchant", False, True),
    }
    assert rows["merchant-a"]["rooms"] == 1
    assert set(rows["op"]) == {
        "id",
        "username",
        "email",
        "role",
        "is_active",
        "has_password",
        "invite_pending",
        "rooms",
        "date_joined",
        "last_login",
    }


def test_list_query_count_does_not_grow_with_people(
    operator_api: APIClient, operator: Any, django_assert_max_num_queries: Any
) -> None:
    for i in range(3):
        services.person_invite(
            username=f"p{i}", email=f"p{i}@example.test", role="Merchant", invited_by=operator
        )
    with django_assert_max_num_queries(10) as few:
        assert operator_api.get(URL).status_code == 200
    for i in range(3, 15):
        services.person_invite(
            username=f"p{i}", email=f"p{i}@example.test", role="Labeler", invited_by=operator
        )
    with django_assert_max_num_queries(len(few.captured_queries)):
        assert len(operator_api.get(URL).json()["results"]) == 16


def test_unknown_person_is_404(operator_api: APIClient) -> None:
    for url in (f"{URL}999999/", f"{URL}99999999999999999999/"):
        assert operator_api.get(url).status_code == 404, url
        assert operator_api.patch(url, {"role": "Merchant"}, format="json").status_code == 404
        assert operator_api.post(f"{url}invite/").status_code == 404


def test_patch_role_and_is_active_through_the_services(
    operator_api: APIClient, labeler: Any
) -> None:
    url = f"{URL}{labeler.pk}/"
    changed = operator_api.patch(url, {"role": "Merchant"}, format="json")
    assert changed.status_code == 200 and changed.json()["role"] == "Merchant"
    assert user_roles(User.objects.get(pk=labeler.pk)) == {Role.MERCHANT}
    # a value the person already has changes nothing (no audit row)
    assert operator_api.patch(url, {"role": "Merchant"}, format="json").status_code == 200
    assert operator_api.patch(url, {"is_active": True}, format="json").status_code == 200
    assert actions(labeler) == ["role_changed"]
    off = operator_api.patch(url, {"is_active": False}, format="json")
    assert off.status_code == 200 and off.json()["is_active"] is False
    both = operator_api.patch(url, {"is_active": True, "role": "Labeler"}, format="json")
    assert both.status_code == 200
    assert (both.json()["is_active"], both.json()["role"]) == (True, "Labeler")
    assert actions(labeler) == ["role_changed", "deactivated", "reactivated", "role_changed"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, ""),
        ({"role": "Boss"}, "role"),
        ({"role": "a\u0000"}, "role"),
        ({"is_active": "maybe"}, "is_active"),
        ({"is_active": 10**30}, "is_active"),
        ({"role": None}, "role"),
    ],
)
def test_bad_patches_are_400_naming_the_field(
    operator_api: APIClient, labeler: Any, body: dict[str, Any], field: str
) -> None:
    assert field in field_errors(operator_api.patch(f"{URL}{labeler.pk}/", body, format="json"))
    assert actions() == []


def test_deactivating_yourself_or_the_last_operator_is_a_400_with_the_services_message(
    operator_api: APIClient, operator: Any
) -> None:
    # given a second operator, so `op` is not the last one
    other = UserFactory(username="op2", role=Role.OPERATOR)
    response = operator_api.patch(f"{URL}{operator.pk}/", {"is_active": False}, format="json")
    assert response.json()["errors"] == [
        {"field": "is_active", "message": "You cannot deactivate yourself."}
    ]
    own_role = operator_api.patch(f"{URL}{operator.pk}/", {"role": "Merchant"}, format="json")
    assert own_role.json()["errors"] == [
        {"field": "role", "message": "You cannot change your own role."}
    ]
    # op2 deactivates op (allowed); op2 is then the last active operator
    op2_api = _client_for(other)
    assert (
        op2_api.patch(f"{URL}{operator.pk}/", {"is_active": False}, format="json").status_code
        == 200
    )
    # A signed-in operator always counts as another active one, so only a caller who is not
    # (here the deactivated `op`; force_authenticate skips the is_active check that token and
    # session login make) reaches the last-operator rule: it holds whoever asks.
    response = operator_api.patch(f"{URL}{other.pk}/", {"is_active": False}, format="json")
    assert field_errors(response) == ["is_active"]
    assert response.json()["detail"] == "is_active: This is the last active operator."
    demote = operator_api.patch(f"{URL}{other.pk}/", {"role": "Labeler"}, format="json")
    assert field_errors(demote) == ["role"]
    assert "last active operator" in demote.json()["detail"]
    assert User.objects.get(pk=other.pk).is_active
    assert actions(other) == []


def test_a_rejected_patch_changes_nothing(
    operator_api: APIClient, merchant: Any, room: Any
) -> None:
    # reactivate would pass, the role change fails (the merchant owns a room): neither is kept
    services.person_deactivate(user=merchant, actor=User.objects.get(username="op"))
    response = operator_api.patch(
        f"{URL}{merchant.pk}/", {"is_active": True, "role": "Labeler"}, format="json"
    )
    assert field_errors(response) == ["role"]
    assert "owns 1 room" in response.json()["detail"]
    assert not User.objects.get(pk=merchant.pk).is_active
    assert actions(merchant) == ["deactivated"]


# --- re-issue -----------------------------------------------------------------------------------


def test_reissue_gives_a_new_link_and_the_old_one_dies(operator_api: APIClient) -> None:
    first = invite(operator_api).json()
    response = operator_api.post(f"{URL}{first['id']}/invite/")
    assert response.status_code == 201 and response["Cache-Control"] == "no-store"
    body = response.json()
    assert body["invite_url"] != first["invite_url"] and body["person"]["id"] == first["id"]
    assert accept(first["invite_url"]).status_code == 410
    assert accept(body["invite_url"]).status_code == 302
    again = operator_api.post(f"{URL}{first['id']}/invite/")
    assert field_errors(again) == ["user"]
    assert "has chosen a password already" in again.json()["detail"]
    assert actions() == ["invited", "invite_reissued", "invite_accepted"]


# --- audit log ----------------------------------------------------------------------------------


def test_audit_log_is_paginated_newest_first_and_filters_by_person(
    operator_api: APIClient, labeler: Any, merchant: Any
) -> None:
    operator_api.patch(f"{URL}{labeler.pk}/", {"is_active": False}, format="json")
    operator_api.patch(f"{URL}{merchant.pk}/", {"role": "Labeler"}, format="json")
    body = operator_api.get(f"{URL}audit/?limit=1").json()
    assert body["count"] == 2
    (newest,) = body["results"]
    assert (newest["action"], newest["actor"], newest["target"]) == (
        "role_changed",
        "op",
        "merchant-a",
    )
    assert newest["target_id"] == merchant.pk
    assert "from merchant to labeler" in newest["detail"]
    mine = operator_api.get(f"{URL}audit/?person={labeler.pk}").json()["results"]
    assert [e["action"] for e in mine] == ["deactivated"]
    for bad in ("abc", "0", "99999999999999999999", "999999"):
        assert field_errors(operator_api.get(f"{URL}audit/?person={bad}")) == ["person"]


# --- room owner ---------------------------------------------------------------------------------


def test_room_owner_assign(
    operator_api: APIClient, room: Any, merchant: Any, other_merchant: Any, labeler: Any
) -> None:
    url = f"/api/v1/rooms/{room.pk}/owner/"
    response = operator_api.post(url, {"owner": "merchant-b"}, format="json")
    assert response.status_code == 200 and response.json()["owner"] == "merchant-b"
    assert actions(other_merchant) == ["room_owner_changed"]
    assert actions(merchant) == ["room_owner_changed"]
    same = operator_api.post(url, {"owner": "merchant-b"}, format="json")
    assert field_errors(same) == ["owner"] and "owns 'Room A' already" in same.json()["detail"]
    for owner in ("labeler", "nobody", "a\u0000"):
        assert field_errors(operator_api.post(url, {"owner": owner}, format="json")) == ["owner"]
    assert field_errors(operator_api.post(url, {}, format="json")) == ["owner"]
    assert (
        operator_api.post("/api/v1/rooms/999999/owner/", {"owner": "merchant-b"}).status_code == 404
    )
    # tenancy follows the room
    assert _client_for(other_merchant).get(f"/api/v1/rooms/{room.pk}/").status_code == 200
    assert _client_for(merchant).get(f"/api/v1/rooms/{room.pk}/").status_code == 404


# --- who may call ---------------------------------------------------------------------------------


def people_urls(user_id: int, room_id: int) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        ("get", URL, {}),
        ("post", URL, {"username": "x1", "email": "x1@example.test", "role": "Operator"}),
        ("get", f"{URL}{user_id}/", {}),
        ("patch", f"{URL}{user_id}/", {"role": "Operator"}),
        ("post", f"{URL}{user_id}/invite/", {}),
        ("get", f"{URL}audit/", {}),
        ("post", f"/api/v1/rooms/{room_id}/owner/", {"owner": "merchant-b"}),
    ]


def test_merchants_labelers_room_keys_and_anonymous_are_refused(
    merchant: Any, labeler: Any, room: Any, other_merchant: Any
) -> None:
    _, raw = harness_services.api_key_create(
        room=room, name="backend", scopes=["reply", "events"], created_by=None
    )
    room_key = APIClient()
    room_key.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    clients = {
        "merchant": (_client_for(merchant), {403}),
        "labeler": (_client_for(labeler), {403}),
        "room key": (room_key, {401, 403}),
        "anonymous": (APIClient(), {401, 403}),
    }
    for who, (client, refused) in clients.items():
        for method, url, body in people_urls(labeler.pk, room.pk):
            response = getattr(client, method)(url, body, format="json")
            assert response.status_code in refused, (who, method, url, response.status_code)
    assert user_roles(User.objects.get(pk=labeler.pk)) == {Role.LABELER}
    assert RoomFactory._meta.model.objects.get(pk=room.pk).owner == merchant
    assert not User.objects.filter(username="x1").exists()
    assert PeopleAuditEvent.objects.count() == 0


def test_the_schema_lists_the_people_endpoints(operator_api: APIClient) -> None:
    paths = operator_api.get("/api/v1/schema/?format=json").json()["paths"]
    expected = {
        "/api/v1/people/": {"get", "post"},
        "/api/v1/people/{user_id}/": {"get", "patch"},
        "/api/v1/people/{user_id}/invite/": {"post"},
        "/api/v1/people/audit/": {"get"},
        "/api/v1/rooms/{room_id}/owner/": {"post"},
    }
    for path, methods in expected.items():
        assert methods <= set(paths[path]), path
    schemas = operator_api.get("/api/v1/schema/?format=json").json()["components"]["schemas"]
    assert {"invite_url", "expires_at"} <= set(schemas["InvitedPersonOutput"]["properties"])
