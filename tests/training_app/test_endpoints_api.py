"""The model endpoint API: operators only (like the console's endpoint pages), the console's
rules and messages (one copy, in the service), the connection test against a real local
server and an unreachable one, and never a key's value in any answer."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest
from knox.models import AuthToken
from rest_framework.test import APIClient

from harness_app import services as harness_services
from tests.conftest import _client_for
from tests.inference.scripted_server import ScriptedServer
from training_app.models import ModelEndpoint

pytestmark = pytest.mark.django_db
LIST = "/api/v1/endpoints/"
VALID: dict[str, Any] = {
    "name": "qwen-moe-h20",
    "base_url": "http://10.0.0.5:8000/v1/",
    "model_name": "Qwen/Qwen3.6-35B-A3B",
    "api_key_ref": "HAT_TEST_ENDPOINT_KEY",
    "role": "student",
    "tool_mode": "native",
    "timeout_s": 15,
    "max_concurrency": 4,
    "max_tokens": 256,
    "is_active": True,
}
SECRET = "sk-live-do-not-leak-4242"


def make_endpoint(**fields: Any) -> ModelEndpoint:
    defaults = {"name": "local", "base_url": "http://127.0.0.1:8011/v1", "model_name": ""}
    return ModelEndpoint.objects.create(**(defaults | fields))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def detail(endpoint_id: int) -> str:
    return f"{LIST}{endpoint_id}/"


def test_create_read_list_and_edit(operator_api: APIClient, room: Any) -> None:
    # given: create
    created = operator_api.post(LIST, VALID, format="json")
    assert created.status_code == 201, created.json()
    body = created.json()
    endpoint = ModelEndpoint.objects.get(name="qwen-moe-h20")
    assert body["id"] == endpoint.pk
    # the service's normalization: stored and answered without the trailing slash
    assert body["base_url"] == endpoint.base_url == "http://10.0.0.5:8000/v1"
    assert (body["max_concurrency"], body["timeout_s"], body["room_count"]) == (4, 15.0, 0)
    assert body["is_default"] is False
    assert body["vllm_command"].startswith('VLLM_API_KEY="${HAT_TEST_ENDPOINT_KEY}" vllm serve')
    assert body["vllm_command_error"] == ""
    # when a room replies through it, the count follows
    room.reply_endpoint = endpoint
    room.save()
    assert operator_api.get(detail(endpoint.pk)).json()["room_count"] == 1
    listed = operator_api.get(LIST).json()
    assert listed["count"] == 1 and listed["results"][0]["name"] == "qwen-moe-h20"
    # then PATCH changes only what it sends
    patched = operator_api.patch(
        detail(endpoint.pk), {"max_tokens": 96, "is_active": False}, format="json"
    )
    assert patched.status_code == 200, patched.json()
    endpoint.refresh_from_db()
    assert (endpoint.max_tokens, endpoint.is_active, endpoint.max_concurrency) == (96, False, 4)
    assert (patched.json()["max_tokens"], patched.json()["is_active"]) == (96, False)


def test_defaults_follow_the_model_and_a_pinned_server_has_no_vllm_line(
    operator_api: APIClient,
) -> None:
    response = operator_api.post(
        LIST, {"name": "pinned", "base_url": "http://127.0.0.1:8011/v1"}, format="json"
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["role"], body["tool_mode"], body["timeout_s"], body["is_active"]) == (
        "student",
        "native",
        15.0,
        True,
    )
    assert body["vllm_command"] is None and "has no model name" in body["vllm_command_error"]


def test_list_is_flat_in_queries(
    operator_api: APIClient, django_assert_max_num_queries: Any
) -> None:
    for i in range(6):
        make_endpoint(name=f"ep-{i}")
    # user, groups, count, endpoints with their room counts
    with django_assert_max_num_queries(4):
        response = operator_api.get(LIST)
    assert response.json()["count"] == 6


def test_everyone_but_operators_is_refused_without_learning_what_exists(
    merchant_api: APIClient, labeler: Any, published_room: Any
) -> None:
    endpoint = make_endpoint()
    missing = endpoint.pk + 1000
    _, raw = harness_services.api_key_create(
        room=published_room, name="backend", scopes=["reply", "events"], created_by=None
    )
    room_key = APIClient()
    room_key.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    clients = {
        "merchant": (merchant_api, 403),
        "labeler": (_client_for(labeler), 403),
        "anonymous": (APIClient(), 401),
        "room key": (room_key, 401),
    }
    for who, (client, expected) in clients.items():
        for pk in (endpoint.pk, missing):  # the same answer whether the endpoint exists
            calls = [
                ("get", LIST, {}),
                ("post", LIST, VALID),
                ("get", detail(pk), {}),
                ("patch", detail(pk), {"max_tokens": 1}),
                ("post", f"{detail(pk)}test/", {}),
            ]
            for method, url, payload in calls:
                response = getattr(client, method)(url, payload, format="json")
                assert response.status_code in (expected, 403), (who, method, url)
                if who == "merchant":
                    assert response.status_code == 403
                    assert response.json()["detail"] == "Only operators may do this."
    endpoint.refresh_from_db()
    assert endpoint.max_tokens == 256
    assert not ModelEndpoint.objects.filter(name=VALID["name"]).exists()


def test_an_unknown_endpoint_is_404_for_operators(operator_api: APIClient) -> None:
    assert operator_api.get(detail(999_999)).status_code == 404
    assert operator_api.patch(detail(999_999), {}, format="json").status_code == 404
    assert operator_api.post(f"{detail(999_999)}test/").status_code == 404
    # beyond a 32-bit id: still a 404, not a database error
    assert operator_api.get(detail(2**70)).status_code == 404


def test_an_api_token_works_like_a_session(operator: Any) -> None:
    _, token = AuthToken.objects.create(user=operator)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.post(LIST, VALID, format="json").status_code == 201
    assert client.get(LIST).json()["count"] == 1


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("name", "Bad Name", "lowercase letters"),
        ("name", "x" * 65, "no more than 64 characters"),
        ("name", "bad\u0000name", "U+0000"),
        ("base_url", "ftp://models.example.com/v1", "must be an http:// or https:// URL"),
        ("base_url", "not a url", "Enter a valid URL"),
        ("base_url", "http://a\u0000b/v1", "U+0000"),
        ("base_url", "http://" + "a" * 300 + ".com/v1", "no more than 300 characters"),
        ("api_key_ref", "sk-live-123", "environment variable"),
        ("timeout_s", 0, "greater than or equal to 0.1"),
        ("timeout_s", 1e308, "less than or equal to 600"),
        ("timeout_s", "fast", "valid number"),
        ("max_concurrency", 0, "greater than or equal to 1"),
        ("max_concurrency", 10**30, "less than or equal to 1024"),
        ("max_tokens", 2**63, "less than or equal to 32768"),
        ("max_tokens", 1.5, "valid integer"),
        ("role", "boss", "not a valid choice"),
        ("tool_mode", None, "may not be null"),
        ("is_active", "maybe", "valid boolean"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_saves_nothing(
    operator_api: APIClient, field: str, value: Any, message: str
) -> None:
    response = operator_api.post(LIST, VALID | {field: value}, format="json")
    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    assert {e["field"] for e in errors} == {field}, errors
    assert any(message in e["message"] for e in errors), errors
    assert response.json()["detail"].startswith(f"{field}: ")
    assert ModelEndpoint.objects.count() == 0


def test_a_huge_number_in_the_raw_body_is_a_400_not_a_500(operator_api: APIClient) -> None:
    raw = json.dumps(VALID).replace('"timeout_s": 15', '"timeout_s": 1e999')
    response = operator_api.post(LIST, raw, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "timeout_s"


def test_required_fields_are_named(operator_api: APIClient) -> None:
    response = operator_api.post(LIST, {}, format="json")
    assert response.status_code == 400
    assert {e["field"] for e in response.json()["errors"]} == {"name", "base_url"}


def test_a_taken_name_is_named_on_create_and_on_edit(operator_api: APIClient) -> None:
    make_endpoint(name="qwen-moe-h20")
    other = make_endpoint(name="other")
    response = operator_api.post(LIST, VALID, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {
            "field": "name",
            "message": "an endpoint named 'qwen-moe-h20' already exists; pick another name",
        }
    ]
    response = operator_api.patch(detail(other.pk), {"name": "qwen-moe-h20"}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "name"
    other.refresh_from_db()
    assert other.name == "other"
    # keeping its own name is no conflict
    assert operator_api.patch(detail(other.pk), {"name": "other"}, format="json").status_code == 200


def test_a_rejected_edit_changes_nothing(operator_api: APIClient) -> None:
    endpoint = make_endpoint(max_tokens=128)
    response = operator_api.patch(
        detail(endpoint.pk),
        {"max_tokens": 64, "base_url": "ftp://models.example.com/v1"},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "base_url"
    endpoint.refresh_from_db()
    assert (endpoint.max_tokens, endpoint.base_url) == (128, "http://127.0.0.1:8011/v1")


def test_form_bodies_are_refused(operator_api: APIClient) -> None:
    response = operator_api.post(LIST, VALID, format="multipart")
    assert response.status_code == 415


def test_connection_test_lists_the_models_of_a_real_local_server(operator_api: APIClient) -> None:
    with ScriptedServer(models=["scripted-model", "other-model"]) as server:
        endpoint = make_endpoint(base_url=server.base_url, model_name="scripted-model")
        response = operator_api.post(f"{detail(endpoint.pk)}test/")
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True
    assert body["models"] == ["scripted-model", "other-model"]
    assert body["problem"] == "" and body["hints"] == []
    assert 0 <= body["round_trip_ms"] < 3000 and body["timeout_s"] == 3.0


def test_connection_test_warns_when_the_model_is_not_served(operator_api: APIClient) -> None:
    with ScriptedServer() as server:
        endpoint = make_endpoint(base_url=server.base_url, model_name="missing-model")
        body = operator_api.post(f"{detail(endpoint.pk)}test/").json()
    assert body["ok"] is True
    assert any("does not list 'missing-model'" in hint for hint in body["hints"])


def test_connection_test_to_nothing_is_a_named_failure_not_a_500(
    operator_api: APIClient,
) -> None:
    endpoint = make_endpoint(base_url=f"http://127.0.0.1:{free_port()}/v1")
    response = operator_api.post(f"{detail(endpoint.pk)}test/")
    assert response.status_code == 200
    body = response.json()
    assert (body["ok"], body["problem"], body["models"]) == (False, "connection refused", [])
    assert any("Nothing is listening at 127.0.0.1:" in hint for hint in body["hints"])


def test_connection_test_is_post_only(operator_api: APIClient) -> None:
    endpoint = make_endpoint()
    assert operator_api.get(f"{detail(endpoint.pk)}test/").status_code == 405


def test_the_key_itself_is_never_in_any_answer(
    operator_api: APIClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HAT_TEST_ENDPOINT_KEY", SECRET)
    with ScriptedServer() as server:
        created = operator_api.post(
            LIST,
            VALID | {"base_url": server.base_url, "model_name": "scripted-model"},
            format="json",
        )
        pk = created.json()["id"]
        answers = [
            created,
            operator_api.get(LIST),
            operator_api.get(detail(pk)),
            operator_api.patch(detail(pk), {"max_tokens": 64}, format="json"),
            operator_api.post(f"{detail(pk)}test/"),
        ]
    for answer in answers:
        assert answer.status_code in (200, 201), answer.content
        assert SECRET not in answer.content.decode()
    assert created.json()["api_key_ref"] == "HAT_TEST_ENDPOINT_KEY"  # the name, not the value
    assert answers[-1].json()["ok"] is True  # and the key variable is set: no hint about it
    assert answers[-1].json()["hints"] == []


def test_endpoints_are_in_the_openapi_schema(operator_api: APIClient) -> None:
    paths = operator_api.get("/api/v1/schema/?format=json").json()["paths"]
    assert {"get", "post"} <= set(paths["/api/v1/endpoints/"])
    assert {"get", "patch"} <= set(paths["/api/v1/endpoints/{endpoint_id}/"])
    assert "post" in paths["/api/v1/endpoints/{endpoint_id}/test/"]
