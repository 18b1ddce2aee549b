"""Model endpoint pages: operators only, field errors, the connection test, the vllm line."""

from __future__ import annotations

import re
import shlex
import socket
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from inference.workers.profiles import qwen_moe_h20_profile, vllm_serve_command
from training_app.models import ModelEndpoint

pytestmark = pytest.mark.django_db

VALID = {
    "name": "qwen-moe-h20",
    "base_url": "http://10.0.0.5:8000/v1",
    "model_name": "Qwen/Qwen3.6-35B-A3B",
    "api_key_ref": "VLLM_KEY_PROD",
    "role": "student",
    "tool_mode": "native",
    "timeout_s": "15",
    "max_concurrency": "4",
    "max_tokens": "256",
    "is_active": "on",
}


def make_endpoint(**fields: Any) -> ModelEndpoint:
    defaults = {"name": "local", "base_url": "http://127.0.0.1:8011/v1", "model_name": ""}
    return ModelEndpoint.objects.create(**(defaults | fields))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_merchants_get_404_on_every_endpoint_page(merchant_client: Client) -> None:
    endpoint = make_endpoint()
    for url in (
        reverse("console:endpoint-list"),
        reverse("console:endpoint-create"),
        reverse("console:endpoint-edit", args=[endpoint.pk]),
    ):
        assert merchant_client.get(url).status_code == 404, url
    assert (
        merchant_client.post(reverse("console:endpoint-test", args=[endpoint.pk])).status_code
        == 404
    )
    assert merchant_client.post(reverse("console:endpoint-create"), VALID).status_code == 404
    assert not ModelEndpoint.objects.filter(name=VALID["name"]).exists()
    # and the nav does not offer it
    assert "Endpoints" not in merchant_client.get(reverse("console:room-list")).content.decode()


def test_operator_list_shows_endpoints_with_room_counts_in_flat_queries(
    operator_client: Client, room: Any, django_assert_max_num_queries: Any
) -> None:
    endpoints = [make_endpoint(name=f"ep-{i}", is_active=i % 2 == 0) for i in range(6)]
    room.reply_endpoint = endpoints[0]
    room.save()
    # session, user, groups, endpoints with their room counts
    with django_assert_max_num_queries(4):
        response = operator_client.get(reverse("console:endpoint-list"))
    html = response.content.decode()
    assert response.status_code == 200
    assert len(re.findall(r'href="/endpoints/\d+/" class="mono"', html)) == 6
    assert html.count('badge-published">active') == 3 and html.count(">inactive<") == 3
    assert '<a href="/endpoints/">Endpoints</a>' not in html  # nav link is marked active
    assert 'class="active">Endpoints</a>' in html


def test_create_an_endpoint_then_see_its_vllm_command(operator_client: Client) -> None:
    response = operator_client.post(reverse("console:endpoint-create"), VALID)
    endpoint = ModelEndpoint.objects.get(name="qwen-moe-h20")
    assert response.status_code == 302
    assert response["Location"] == reverse("console:endpoint-edit", args=[endpoint.pk])
    assert (endpoint.model_name, endpoint.api_key_ref, endpoint.max_concurrency) == (
        "Qwen/Qwen3.6-35B-A3B",
        "VLLM_KEY_PROD",
        4,
    )
    page = operator_client.get(response["Location"]).content.decode()
    expected = shlex.join(
        vllm_serve_command(
            qwen_moe_h20_profile(
                "Qwen/Qwen3.6-35B-A3B", served_model_name="Qwen/Qwen3.6-35B-A3B", port=8000
            )
        )
    )
    assert "VLLM_KEY_PROD" in page
    # HTML-escaped in the page: compare after unescaping the quotes of the JSON flag
    assert expected.replace("'", "&#x27;").replace('"', "&quot;") in page
    assert "one-H20 profile" in page


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("name", "Bad Name", "lowercase letters"),
        ("base_url", "ftp://models.example.com/v1", "must be an http:// or https:// URL"),
        ("base_url", "not a url", "Enter a valid URL"),
        ("api_key_ref", "sk-live-123", "the NAME of an environment variable"),
        ("timeout_s", "0", "greater than or equal to 0.1"),
        ("max_concurrency", "0", "greater than or equal to 1"),
        ("role", "boss", "Select a valid choice"),
    ],
)
def test_bad_input_is_an_error_at_its_field_and_saves_nothing(
    operator_client: Client, field: str, value: str, message: str
) -> None:
    response = operator_client.post(reverse("console:endpoint-create"), VALID | {field: value})
    assert response.status_code == 400
    html = response.content.decode()
    block = html.split(f'data-field="{field}"')[1].split('data-field="')[0]
    assert message in block and "field-error" in block
    assert ModelEndpoint.objects.count() == 0


def test_a_taken_name_is_reported_on_the_name_field(operator_client: Client) -> None:
    make_endpoint(name="qwen-moe-h20")
    response = operator_client.post(reverse("console:endpoint-create"), VALID)
    assert response.status_code == 400
    assert "an endpoint named &#x27;qwen-moe-h20&#x27; already exists" in response.content.decode()
    assert ModelEndpoint.objects.count() == 1


def test_edit_saves_changes_and_rejects_a_taken_name(operator_client: Client) -> None:
    endpoint = make_endpoint(name="a")
    make_endpoint(name="b")
    url = reverse("console:endpoint-edit", args=[endpoint.pk])
    response = operator_client.post(url, VALID | {"name": "a", "max_tokens": "96"})
    assert response.status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.max_tokens == 96 and endpoint.base_url == "http://10.0.0.5:8000/v1"
    response = operator_client.post(url, VALID | {"name": "b"})
    assert response.status_code == 400
    endpoint.refresh_from_db()
    assert endpoint.name == "a"
    assert '<h1><span class="mono">a</span>' in response.content.decode()  # not the bad name


def test_connection_test_lists_the_served_models(
    operator_client: Client, scripted_server: Any
) -> None:
    scripted_server.models = ["scripted-model", "other-model"]
    endpoint = make_endpoint(base_url=scripted_server.base_url, model_name="scripted-model")
    url = reverse("console:endpoint-test", args=[endpoint.pk])
    edit_url = reverse("console:endpoint-edit", args=[endpoint.pk])

    # post/redirect/get: the POST answers a redirect to the endpoint page...
    response = operator_client.post(url)
    assert response.status_code == 302 and response["Location"] == edit_url
    # ...which shows the outcome once, as messages
    html = operator_client.get(edit_url).content.decode()
    assert re.search(r'class="message success"[^>]*>✓ Connected in \d+ ms: GET ', html)
    assert "lists 2 models: scripted-model (this endpoint&#x27;s model), other-model." in html
    assert "Connected in" not in operator_client.get(edit_url).content.decode()


def test_connection_test_warns_when_the_model_name_is_not_served(
    operator_client: Client, scripted_server: Any
) -> None:
    endpoint = make_endpoint(base_url=scripted_server.base_url, model_name="missing-model")
    html = operator_client.post(
        reverse("console:endpoint-test", args=[endpoint.pk]), follow=True
    ).content.decode()
    assert "does not list &#x27;missing-model&#x27;" in html


def test_connection_refused_is_a_specific_error_not_a_500(operator_client: Client) -> None:
    endpoint = make_endpoint(base_url=f"http://127.0.0.1:{free_port()}/v1")
    response = operator_client.post(
        reverse("console:endpoint-test", args=[endpoint.pk]), follow=True
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert response.redirect_chain == [(reverse("console:endpoint-edit", args=[endpoint.pk]), 302)]
    assert re.search(r'class="message error"[^>]*>✗ Connection refused after \d+ ms', html)
    assert "Nothing is listening at 127.0.0.1:" in html


def test_an_http_error_status_is_named(operator_client: Client, scripted_server: Any) -> None:
    endpoint = make_endpoint(base_url=scripted_server.base_url.replace("/v1", "/v2"))
    html = operator_client.post(
        reverse("console:endpoint-test", args=[endpoint.pk]), follow=True
    ).content.decode()
    assert "✗ HTTP 404" in html and "usually ends with /v1" in html


def test_a_missing_api_key_variable_is_pointed_out(
    operator_client: Client, scripted_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HAT_TEST_KEY_UNSET", raising=False)
    endpoint = make_endpoint(base_url=scripted_server.base_url, api_key_ref="HAT_TEST_KEY_UNSET")
    html = operator_client.post(
        reverse("console:endpoint-test", args=[endpoint.pk]), follow=True
    ).content.decode()
    assert "HAT_TEST_KEY_UNSET is not set" in html


def test_connection_test_is_post_only(operator_client: Client) -> None:
    endpoint = make_endpoint()
    assert (
        operator_client.get(reverse("console:endpoint-test", args=[endpoint.pk])).status_code == 405
    )


def test_endpoint_without_model_name_explains_how_to_get_the_command(
    operator_client: Client,
) -> None:
    endpoint = make_endpoint(name="pinned", model_name="")
    html = operator_client.get(
        reverse("console:endpoint-edit", args=[endpoint.pk])
    ).content.decode()
    assert "has no model name" in html
    assert "manage.py vllm_command --endpoint pinned --model /path/to/weights" in html
