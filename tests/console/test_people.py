"""People (issue #15 part 1): invite with a one-time link, accept it once, expiry, role
changes, deactivate rules, room owners, the audit log; the pages are operators' only and
tenancy holds (merchant A never sees merchant B's rooms or any people)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from console.models import Invitation, PeopleAuditEvent
from console.roles import Role, user_roles
from console.services import people as services
from tests.factories import RoomFactory, UserFactory

pytestmark = pytest.mark.django_db
NEW_PASSWORD = "a-long-new-password-7"
User = get_user_model()


def logs_in(username: str, password: str) -> bool:
    """Through the login form (django-axes needs a request)."""
    response = Client().post(reverse("login"), {"username": username, "password": password})
    return response.status_code == 302


def token_of(path: str) -> str:
    match = re.fullmatch(r"/invite/([A-Za-z0-9_-]+)/", path)
    assert match, path
    return match.group(1)


def actions(target: Any = None) -> list[str]:
    events = PeopleAuditEvent.objects.all()
    if target is not None:
        events = events.filter(target=target)
    return list(events.order_by("id").values_list("action", flat=True))


def fresh(user: Any) -> Any:
    return User.objects.get(pk=user.pk)


# --- services: invite and accept ------------------------------------------------------------


def test_invite_creates_a_person_without_password_and_stores_only_the_hash(
    operator: Any,
) -> None:
    link = services.person_invite(
        username="shop-b", email="b@example.test", role="Merchant", invited_by=operator
    )
    user = link.user
    assert user_roles(fresh(user)) == {Role.MERCHANT}
    assert not user.has_usable_password() and user.is_active
    token = token_of(link.path)
    invitation = Invitation.objects.get(user=user)
    assert invitation.token_hash == services.token_hash(token) != token
    assert token not in str(list(Invitation.objects.values()))
    expected = timezone.now() + timedelta(hours=72)
    assert abs((invitation.expires_at - expected).total_seconds()) < 60
    event = PeopleAuditEvent.objects.get()
    assert (event.actor, event.target, event.action) == (operator, user, "invited")
    assert "merchant" in event.detail and token not in event.detail


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"username": ""}, "username", "Required."),
        ({"username": "bad name!"}, "username", "Enter a valid username"),
        ({"username": "OP"}, "username", "is taken"),
        ({"email": "nope"}, "email", "valid e-mail"),
        ({"email": "OP@example.test"}, "email", "exists"),
        ({"role": "Admin"}, "role", "Unknown role 'Admin'"),
    ],
)
def test_bad_invites_name_the_field_and_save_nothing(
    operator: Any, fields: dict[str, str], field: str, message: str
) -> None:
    data = {"username": "new-one", "email": "new@example.test", "role": "Labeler"} | fields
    with pytest.raises(ValidationError) as caught:
        services.person_invite(invited_by=operator, **data)
    assert any(message in m for m in caught.value.message_dict[field])
    assert User.objects.count() == 1 and Invitation.objects.count() == 0
    assert PeopleAuditEvent.objects.count() == 0


def test_the_link_sets_the_password_once(operator: Any) -> None:
    link = services.person_invite(
        username="shop-b", email="b@example.test", role="Merchant", invited_by=operator
    )
    token = token_of(link.path)
    user = services.invitation_accept(token=token, password=NEW_PASSWORD)
    assert fresh(user).check_password(NEW_PASSWORD)
    assert services.invitation_valid(token) is None
    with pytest.raises(ValidationError) as caught:
        services.invitation_accept(token=token, password="another-long-password-8")
    assert "used already" in caught.value.message_dict["token"][0]
    assert fresh(user).check_password(NEW_PASSWORD)
    assert actions(user) == ["invited", "invite_accepted"]


def test_an_expired_or_replaced_link_does_not_work(operator: Any) -> None:
    link = services.person_invite(
        username="shop-b", email="b@example.test", role="Merchant", invited_by=operator
    )
    token = token_of(link.path)
    now = timezone.now()
    Invitation.objects.update(
        created_at=now - timedelta(days=3), expires_at=now - timedelta(seconds=1)
    )
    assert services.invitation_valid(token) is None
    with pytest.raises(ValidationError):
        services.invitation_accept(token=token, password=NEW_PASSWORD)
    # a re-issued link works, and revokes the older ones
    again = services.invitation_reissue(user=link.user, actor=operator)
    second = token_of(again.path)
    assert services.invitation_valid(second) is not None
    third = token_of(services.invitation_reissue(user=link.user, actor=operator).path)
    assert services.invitation_valid(second) is None
    services.invitation_accept(token=third, password=NEW_PASSWORD)
    with pytest.raises(ValidationError) as caught:
        services.invitation_reissue(user=fresh(link.user), actor=operator)
    assert "chosen a password" in caught.value.message_dict["user"][0]
    assert actions(link.user) == [
        "invited",
        "invite_reissued",
        "invite_reissued",
        "invite_accepted",
    ]


def test_a_weak_password_is_refused_and_the_link_stays_valid(operator: Any) -> None:
    link = services.person_invite(
        username="shop-b", email="b@example.test", role="Merchant", invited_by=operator
    )
    token = token_of(link.path)
    with pytest.raises(ValidationError) as caught:
        services.invitation_accept(token=token, password="123")
    assert caught.value.message_dict["new_password1"]
    assert services.invitation_valid(token) is not None
    assert not fresh(link.user).has_usable_password()


def test_a_deactivated_persons_link_dies(operator: Any) -> None:
    link = services.person_invite(
        username="lab-2", email="l2@example.test", role="Labeler", invited_by=operator
    )
    services.person_deactivate(user=link.user, actor=operator)
    assert services.invitation_valid(token_of(link.path)) is None
    services.person_reactivate(user=fresh(link.user), actor=operator)
    # reactivation does not bring the old link back
    assert services.invitation_valid(token_of(link.path)) is None


# --- services: roles, deactivation, room owners -------------------------------------------


def test_role_change_replaces_the_role_and_is_audited(operator: Any, labeler: Any) -> None:
    services.person_role_change(user=labeler, role="Operator", actor=operator)
    assert user_roles(fresh(labeler)) == {Role.OPERATOR}
    event = PeopleAuditEvent.objects.get()
    assert event.action == "role_changed" and event.actor == operator
    assert event.detail == "Role changed from labeler to operator."


def test_role_change_rules(operator: Any, merchant: Any, room: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        services.person_role_change(user=operator, role="Merchant", actor=operator)
    assert "your own role" in caught.value.message_dict["role"][0]
    other_op = UserFactory(username="op-2", role=Role.OPERATOR)
    # op-2 demoting the only other operator works; then op-2 is the last one
    services.person_role_change(user=operator, role="Labeler", actor=other_op)
    third = UserFactory(username="op-3", role=Role.OPERATOR)
    services.person_deactivate(user=third, actor=other_op)
    with pytest.raises(ValidationError) as caught:
        services.person_role_change(user=other_op, role="Merchant", actor=fresh(operator))
    assert "last active operator" in caught.value.message_dict["role"][0]
    # a merchant who owns rooms keeps the role until the rooms are given away
    with pytest.raises(ValidationError) as caught:
        services.person_role_change(user=merchant, role="Labeler", actor=other_op)
    assert "owns 1 room" in caught.value.message_dict["role"][0]
    assert user_roles(fresh(merchant)) == {Role.MERCHANT}
    with pytest.raises(ValidationError) as caught:
        services.person_role_change(user=merchant, role="Merchant", actor=other_op)
    assert "is a merchant" in caught.value.message_dict["role"][0]


def test_deactivate_rules(operator: Any, merchant: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        services.person_deactivate(user=operator, actor=operator)
    assert "yourself" in caught.value.message_dict["user"][0]
    # a superuser counts as an operator: with one active, the operator may go
    root = User.objects.create_superuser("root", "root@example.test", "pw-root-123456")
    services.person_deactivate(user=operator, actor=root)
    services.person_reactivate(user=fresh(operator), actor=root)
    services.person_deactivate(user=merchant, actor=operator)
    assert not fresh(merchant).is_active
    with pytest.raises(ValidationError) as caught:
        services.person_deactivate(user=fresh(merchant), actor=operator)
    assert "deactivated already" in caught.value.message_dict["user"][0]
    services.person_reactivate(user=fresh(merchant), actor=operator)
    assert fresh(merchant).is_active
    assert actions(merchant) == ["deactivated", "reactivated"]
    assert actions(operator) == ["deactivated", "reactivated"]


def test_the_last_active_operator_cannot_be_deactivated(operator: Any) -> None:
    other = UserFactory(username="op-2", role=Role.OPERATOR)
    services.person_deactivate(user=other, actor=operator)
    # only `operator` is active now; an (inactive-proof) second actor tries
    with pytest.raises(ValidationError) as caught:
        services.person_deactivate(user=operator, actor=other)
    assert caught.value.message_dict["user"] == ["This is the last active operator."]
    assert fresh(operator).is_active


def test_room_owner_assign(operator: Any, room: Any, merchant: Any, other_merchant: Any) -> None:
    services.room_owner_assign(room=room, owner=other_merchant, actor=operator)
    room.refresh_from_db()
    assert room.owner == other_merchant
    assert actions(other_merchant) == ["room_owner_changed"] == actions(merchant)
    detail = PeopleAuditEvent.objects.first().detail  # type: ignore[union-attr]
    assert detail == f"Room 'Room A' (#{room.pk}) given from merchant-a to merchant-b."
    labeler = UserFactory(username="lab", role=Role.LABELER)
    for owner, message in [
        (labeler, "active merchant"),
        (other_merchant, "owns 'Room A' already"),
    ]:
        with pytest.raises(ValidationError) as caught:
            services.room_owner_assign(room=room, owner=owner, actor=operator)
        assert message in caught.value.message_dict["owner"][0]
    RoomFactory(owner=merchant, name="Room A")
    with pytest.raises(ValidationError) as caught:
        services.room_owner_assign(room=room, owner=merchant, actor=operator)
    assert "already has a room named 'Room A'" in caught.value.message_dict["owner"][0]
    services.person_deactivate(user=merchant, actor=operator)
    with pytest.raises(ValidationError):
        services.room_owner_assign(room=room, owner=fresh(merchant), actor=operator)
    room.refresh_from_db()
    assert room.owner == other_merchant


# --- views -----------------------------------------------------------------------------------

PEOPLE_GETS = ["console:people-list"]
PEOPLE_POSTS = [
    ("console:people-list", False),
    ("console:people-room-owner", False),
    ("console:person-role", True),
    ("console:person-deactivate", True),
    ("console:person-reactivate", True),
    ("console:person-invite", True),
]


def test_merchants_and_labelers_get_404_on_people_pages(
    merchant_client: Client, labeler_client: Client, operator: Any, other_merchant: Any
) -> None:
    for client in (merchant_client, labeler_client):
        assert client.get(reverse("console:people-list")).status_code == 404
        detail = reverse("console:person-detail", args=[other_merchant.pk])
        assert client.get(detail).status_code == 404
        for name, with_id in PEOPLE_POSTS:
            url = reverse(name, args=[other_merchant.pk] if with_id else [])
            data = {"role": "Operator", "username": "x", "email": "x@example.test"}
            assert client.post(url, data).status_code == 404
    assert user_roles(fresh(other_merchant)) == {Role.MERCHANT}
    assert fresh(other_merchant).is_active and User.objects.filter(username="x").count() == 0
    assert PeopleAuditEvent.objects.count() == 0
    # no People link in a merchant's navigation
    assert "/people/" not in merchant_client.get(reverse("console:room-list")).content.decode()


def test_anonymous_is_sent_to_login(operator: Any) -> None:
    response = Client().get(reverse("console:people-list"))
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_operator_invites_from_the_page_and_the_link_is_shown_once(
    operator_client: Client, operator: Any
) -> None:
    response = operator_client.post(
        reverse("console:people-list"),
        {"username": "shop-b", "email": "b@example.test", "role": "Merchant"},
    )
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    html = response.content.decode()
    link = re.search(r"data-invite-link>(http://testserver/invite/[A-Za-z0-9_-]+/)<", html)
    assert link
    page = operator_client.get(reverse("console:people-list")).content.decode()
    assert link.group(1) not in page and "shop-b" in page and "invited" in page
    assert 'data-audit-action="invited"' in page


def test_invite_form_errors_are_at_the_field(operator_client: Client, operator: Any) -> None:
    response = operator_client.post(
        reverse("console:people-list"), {"username": "op", "email": "bad", "role": "Root"}
    )
    assert response.status_code == 400
    html = response.content.decode()
    for field, message in [
        ("email", "Enter a valid email address"),
        ("role", "Select a valid choice"),
    ]:
        block = html.split(f'data-field="{field}"')[1].split('data-field="')[0]
        assert message in block
    response = operator_client.post(
        reverse("console:people-list"),
        {"username": "op", "email": "z@example.test", "role": "Merchant"},
    )
    block = response.content.decode().split('data-field="username"')[1].split('data-field="')[0]
    assert "The username &#x27;op&#x27; is taken." in block
    assert User.objects.count() == 1


def test_accept_page_sets_the_password_then_logs_in(operator: Any) -> None:
    link = services.person_invite(
        username="shop-b", email="b@example.test", role="Merchant", invited_by=operator
    )
    client = Client()
    page = client.get(link.path)
    assert page.status_code == 200 and "Welcome, shop-b" in page.content.decode()
    assert page["Referrer-Policy"] == "same-origin"
    mismatch = client.post(
        link.path, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD + "x"}
    )
    assert mismatch.status_code == 400
    done = client.post(link.path, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert done.status_code == 302 and done["Location"] == reverse("login")
    gone = client.get(link.path)
    assert gone.status_code == 410 and "no longer works" in gone.content.decode()
    assert client.post(link.path, {"new_password1": "x", "new_password2": "x"}).status_code == 410
    assert logs_in("shop-b", NEW_PASSWORD)
    assert Client().get("/invite/not-a-token/").status_code == 410


def test_person_page_changes_role_and_shows_errors(
    operator_client: Client, operator: Any, labeler: Any, merchant: Any, room: Any
) -> None:
    url = reverse("console:person-role", args=[labeler.pk])
    response = operator_client.post(url, {"role": "Merchant"})
    assert response.status_code == 302
    assert user_roles(fresh(labeler)) == {Role.MERCHANT}
    response = operator_client.post(
        reverse("console:person-role", args=[merchant.pk]), {"role": "Labeler"}
    )
    assert response.status_code == 400
    block = response.content.decode().split('data-field="role"')[1]
    assert "owns 1 room" in block
    # yourself: no role form, and the POST is refused
    page = operator_client.get(reverse("console:person-detail", args=[operator.pk]))
    assert "data-role-form" not in page.content.decode()
    response = operator_client.post(reverse("console:person-deactivate", args=[operator.pk]))
    assert response.status_code == 400 and "deactivate yourself" in response.content.decode()
    assert fresh(operator).is_active
    assert operator_client.get(reverse("console:person-detail", args=[999999])).status_code == 404


def test_deactivated_people_cannot_log_in_and_lose_their_session(
    operator_client: Client, merchant: Any, merchant_client: Client, room: Any
) -> None:
    assert merchant_client.get(reverse("console:room-list")).status_code == 200
    response = operator_client.post(reverse("console:person-deactivate", args=[merchant.pk]))
    assert response.status_code == 302
    assert merchant_client.get(reverse("console:room-list")).status_code == 302  # to login
    assert not logs_in("merchant-a", "pw-for-tests-1")
    operator_client.post(reverse("console:person-reactivate", args=[merchant.pk]))
    assert logs_in("merchant-a", "pw-for-tests-1")
    page = operator_client.get(reverse("console:people-list")).content.decode()
    assert 'data-audit-action="deactivated"' in page and 'data-audit-action="reactivated"' in page


def test_operator_gives_a_room_and_tenancy_follows(
    operator_client: Client,
    merchant_client: Client,
    other_merchant_client: Client,
    room: Any,
    other_room: Any,
    other_merchant: Any,
) -> None:
    rooms = reverse("console:room-list")
    assert "Room A" in merchant_client.get(rooms).content.decode()
    assert "Room A" not in other_merchant_client.get(rooms).content.decode()
    assert "Room B" not in merchant_client.get(rooms).content.decode()
    response = operator_client.post(
        reverse("console:people-room-owner"), {"room": room.pk, "owner": other_merchant.pk}
    )
    assert response.status_code == 302
    assert "Room A" not in merchant_client.get(rooms).content.decode()
    assert "Room A" in other_merchant_client.get(rooms).content.decode()
    assert merchant_client.get(reverse("console:room-detail", args=[room.pk])).status_code == 404
    bad = operator_client.post(
        reverse("console:people-room-owner"), {"room": room.pk, "owner": other_merchant.pk}
    )
    assert bad.status_code == 400
    block = bad.content.decode().split('data-field="owner"')[1].split('data-field="')[0]
    assert "owns &#x27;Room A&#x27; already" in block


def test_room_create_lists_every_active_merchant(
    operator_client: Client, operator: Any, merchant: Any, other_merchant: Any
) -> None:
    link = services.person_invite(
        username="shop-c", email="c@example.test", role="Merchant", invited_by=operator
    )
    services.person_deactivate(user=other_merchant, actor=operator)
    html = operator_client.get(reverse("console:room-create")).content.decode()
    assert ">merchant-a<" in html and ">shop-c<" in html and ">merchant-b<" not in html
    response = operator_client.post(
        reverse("console:room-create"),
        {"name": "C's room", "owner": link.user.pk, "locale": "en-US", "currency": "USD"},
    )
    assert response.status_code == 302


def test_people_page_query_count_does_not_grow_with_people(
    operator_client: Client, operator: Any, django_assert_max_num_queries: Any
) -> None:
    for i in range(3):
        services.person_invite(
            username=f"p{i}", email=f"p{i}@example.test", role="Merchant", invited_by=operator
        )
    with django_assert_max_num_queries(14) as few:
        operator_client.get(reverse("console:people-list"))
    for i in range(3, 12):
        services.person_invite(
            username=f"p{i}", email=f"p{i}@example.test", role="Labeler", invited_by=operator
        )
    with django_assert_max_num_queries(len(few.captured_queries)):
        operator_client.get(reverse("console:people-list"))
