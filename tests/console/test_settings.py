"""console/settings.py: production security settings from the environment, `check --deploy`
clean with them, the development secret key refused outside embedded mode, and embedded mode
(`make run`, `make test`, CI) still serving plain http.

Each case imports the settings in a fresh interpreter with exactly the environment given, so
nothing of this process's environment or settings leaks in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.test import Client, override_settings

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION_KEY = "q8Vw-3nL_zR7tY1pK9sX4cM2bN6hJ0fD5gA8eU3iO7lT1wQ9yZ4vB6nC2xS0mP5"
SETTINGS_SHOWN = (
    "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "SECURE_PROXY_SSL_HEADER",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SESSION_COOKIE_HTTPONLY",
    "CSRF_COOKIE_HTTPONLY",
    "SESSION_COOKIE_SAMESITE",
    "SECURE_CONTENT_TYPE_NOSNIFF",
    "SECURE_REFERRER_POLICY",
    "X_FRAME_OPTIONS",
    "ALLOWED_HOSTS",
)
# Imports the settings, runs Django's checks with the deployment checks, prints both as JSON.
PROBE = f"""
import json, django
from django.conf import settings
django.setup()
from django.core.checks import run_checks
messages = run_checks(include_deployment_checks=True)
print(json.dumps({{
    "settings": {{name: getattr(settings, name) for name in {SETTINGS_SHOWN!r}}},
    "messages": [f"{{m.id}}: {{m.msg}}" for m in messages if m.level >= 30],
}}))
"""


def production_env(**overrides: str) -> dict[str, str]:
    return {
        "HAT_DEPLOYMENT": "production",
        "DJANGO_SECRET_KEY": PRODUCTION_KEY,
        "DJANGO_ALLOWED_HOSTS": "console.example.com",
        "DJANGO_CSRF_TRUSTED_ORIGINS": "https://console.example.com",
        "DJANGO_SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO,https",
    } | overrides


def probe(env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    # Only what an interpreter needs, plus the given variables: no DJANGO_*/HAT_* from here.
    base = {k: os.environ[k] for k in ("PATH", "HOME", "LANG") if k in os.environ}
    full = base | {
        "DJANGO_SETTINGS_MODULE": "console.settings",
        "HAT_VAR_DIR": str(tmp_path / "var"),
        "PYTHONPATH": str(ROOT),
    }
    return subprocess.run(
        [sys.executable, "-c", PROBE],
        env=full | env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def probed(env: dict[str, str], tmp_path: Path) -> dict[str, Any]:
    done = probe(env, tmp_path)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_check_deploy_is_clean_with_the_production_environment(tmp_path: Path) -> None:
    result = probed(production_env(), tmp_path)
    assert result["messages"] == []
    shown = result["settings"]
    assert shown["SECURE_SSL_REDIRECT"] is True
    assert shown["SECURE_HSTS_SECONDS"] == 31_536_000
    assert shown["SECURE_HSTS_INCLUDE_SUBDOMAINS"] is True
    assert shown["SECURE_HSTS_PRELOAD"] is True
    assert shown["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert shown["SESSION_COOKIE_SECURE"] is True and shown["CSRF_COOKIE_SECURE"] is True
    assert shown["SESSION_COOKIE_HTTPONLY"] is True and shown["CSRF_COOKIE_HTTPONLY"] is True
    assert shown["SESSION_COOKIE_SAMESITE"] == "Lax"
    assert shown["SECURE_CONTENT_TYPE_NOSNIFF"] is True
    assert shown["SECURE_REFERRER_POLICY"] == "same-origin"
    assert shown["X_FRAME_OPTIONS"] == "DENY"
    assert shown["ALLOWED_HOSTS"] == ["console.example.com"]


def test_each_production_default_can_be_overridden(tmp_path: Path) -> None:
    shown = probed(
        production_env(
            DJANGO_SECURE_SSL_REDIRECT="false",
            DJANGO_SECURE_HSTS_SECONDS="3600",
            DJANGO_SECURE_HSTS_PRELOAD="false",
            DJANGO_SESSION_COOKIE_SAMESITE="Strict",
            DJANGO_SECURE_REFERRER_POLICY="no-referrer",
            DJANGO_X_FRAME_OPTIONS="SAMEORIGIN",
        ),
        tmp_path,
    )["settings"]
    assert shown["SECURE_SSL_REDIRECT"] is False
    assert shown["SECURE_HSTS_SECONDS"] == 3600
    assert shown["SECURE_HSTS_PRELOAD"] is False
    assert shown["SESSION_COOKIE_SAMESITE"] == "Strict"
    assert shown["SECURE_REFERRER_POLICY"] == "no-referrer"
    assert shown["X_FRAME_OPTIONS"] == "SAMEORIGIN"
    # ...and the one still on stays on
    assert shown["SESSION_COOKIE_SECURE"] is True


def test_embedded_mode_keeps_plain_http_for_make_run(tmp_path: Path) -> None:
    shown = probed({}, tmp_path)["settings"]
    assert shown["SECURE_SSL_REDIRECT"] is False
    assert shown["SECURE_HSTS_SECONDS"] == 0
    assert shown["SESSION_COOKIE_SECURE"] is False and shown["CSRF_COOKIE_SECURE"] is False
    assert shown["SECURE_PROXY_SSL_HEADER"] is None
    assert shown["ALLOWED_HOSTS"] == ["127.0.0.1", "localhost", "testserver"]


@pytest.mark.parametrize(
    ("env", "says"),
    [
        (production_env(DJANGO_SECRET_KEY=""), "DJANGO_SECRET_KEY"),
        (
            {k: v for k, v in production_env().items() if k != "DJANGO_SECRET_KEY"},
            "DJANGO_SECRET_KEY",
        ),
        (
            production_env(DJANGO_SECRET_KEY="dev-only-insecure-key-change-me-in-production"),
            "DJANGO_SECRET_KEY",
        ),
        (production_env(DJANGO_SECRET_KEY="short-but-random-8fj3k"), "at least 50 characters"),
        (production_env(DJANGO_SECRET_KEY="a" * 60), "DJANGO_SECRET_KEY"),
        (production_env(DJANGO_ALLOWED_HOSTS=""), "DJANGO_ALLOWED_HOSTS"),
        (production_env(DJANGO_SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO"), "HEADER,value"),
        ({"HAT_DEPLOYMENT": "prod"}, "'embedded'"),
    ],
    ids=[
        "empty-key",
        "no-key",
        "dev-key",
        "short-key",
        "one-char-key",
        "no-hosts",
        "bad-proxy-header",
        "unknown-mode",
    ],
)
def test_production_refuses_to_start_without_what_it_needs(
    env: dict[str, str], says: str, tmp_path: Path
) -> None:
    done = probe(env, tmp_path)
    assert done.returncode != 0
    assert "ImproperlyConfigured" in done.stderr and says in done.stderr


def test_the_test_suite_runs_in_embedded_mode_without_new_variables() -> None:
    """CI (`.ci/run` -> `make test`) sets no HAT_DEPLOYMENT: the suite must import as is."""
    from django.conf import settings

    assert settings.HAT_DEPLOYMENT == "embedded"
    assert settings.SECURE_SSL_REDIRECT is False


@pytest.mark.django_db
def test_pages_carry_the_security_headers_and_cookies_are_httponly(operator: Any) -> None:
    client = Client()
    login = client.get("/login/")
    assert login.status_code == 200  # plain http works in embedded mode
    assert login["X-Frame-Options"] == "DENY"
    assert login["X-Content-Type-Options"] == "nosniff"
    assert login["Referrer-Policy"] == "same-origin"
    csrf = login.cookies["csrftoken"]
    assert csrf["httponly"] is True and csrf["samesite"] == "Lax"

    response = client.post("/login/", {"username": "op", "password": "pw-for-tests-1"})
    assert response.status_code == 302
    session = response.cookies["sessionid"]
    assert session["httponly"] is True and session["samesite"] == "Lax"
    assert not session["secure"]  # embedded: http


@pytest.mark.django_db
@override_settings(
    SECURE_SSL_REDIRECT=True,
    SECURE_HSTS_SECONDS=31_536_000,
    SECURE_HSTS_INCLUDE_SUBDOMAINS=True,
    SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https"),
    SESSION_COOKIE_SECURE=True,
    CSRF_COOKIE_SECURE=True,
)
def test_behind_the_proxy_http_redirects_and_https_gets_hsts_and_secure_cookies() -> None:
    client = Client()
    plain = client.get("/login/")
    assert plain.status_code == 301 and plain["Location"] == "https://testserver/login/"

    secure = client.get("/login/", headers={"X-Forwarded-Proto": "https"})
    assert secure.status_code == 200
    assert secure["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"
    assert secure.cookies["csrftoken"]["secure"] is True
