"""Django settings for HAT Console.

Every setting that varies between machines comes from the environment through the one
``env`` below; each has a working embedded default (SQLite and a filesystem Celery broker
under var/), so ``make run`` works on a clean clone. README lists every variable.
"""

import ipaddress
from datetime import timedelta
from pathlib import Path

import environ
from csp.constants import NONE, SELF, UNSAFE_INLINE
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

VAR_DIR = Path(env.str("HAT_VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

# --- Deployment mode and security -------------------------------------------------------------
# HAT_DEPLOYMENT=embedded (default: `make run`, `make test`, CI) serves plain http on 127.0.0.1
# with a development secret key. HAT_DEPLOYMENT=production turns every secure default on
# (HTTPS only, HSTS, secure cookies), refuses the development key and needs explicit hosts;
# each DJANGO_* variable below still overrides its one setting. docs/OPERATIONS.md has the list.
HAT_DEPLOYMENT = env.str("HAT_DEPLOYMENT", default="embedded")
if HAT_DEPLOYMENT not in ("embedded", "production"):
    raise ImproperlyConfigured(
        f"HAT_DEPLOYMENT={HAT_DEPLOYMENT!r}: set it to 'embedded' (development, http) or "
        "'production' (HTTPS behind a proxy)."
    )
_PRODUCTION = HAT_DEPLOYMENT == "production"

DEV_SECRET_KEY = "dev-only-insecure-key-change-me-in-production"
# Django's own deploy check (security.W009) asks for at least 50 characters, 5 distinct.
SECRET_KEY_MIN_LENGTH = 50
SECRET_KEY = env.str("DJANGO_SECRET_KEY", default=DEV_SECRET_KEY)
if _PRODUCTION and (
    SECRET_KEY == DEV_SECRET_KEY
    or len(SECRET_KEY) < SECRET_KEY_MIN_LENGTH
    or len(set(SECRET_KEY)) < 5
    or SECRET_KEY.startswith("django-insecure-")
):
    raise ImproperlyConfigured(
        "HAT_DEPLOYMENT=production needs DJANGO_SECRET_KEY set to a random value of at least "
        f"{SECRET_KEY_MIN_LENGTH} characters (not the development key), e.g. the output of "
        "`python -c 'from django.core.management.utils import get_random_secret_key as k; "
        "print(k())'`."
    )
DEBUG = env.bool("DJANGO_DEBUG", default=False)
if _PRODUCTION:
    # No guessed default: a production console answers only the names it is deployed under.
    ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=[])
    if not ALLOWED_HOSTS:
        raise ImproperlyConfigured(
            "HAT_DEPLOYMENT=production needs DJANGO_ALLOWED_HOSTS, e.g. console.example.com."
        )
else:
    ALLOWED_HOSTS = env.list(
        "DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"]
    )
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

# HTTPS: on by default in production, off in embedded mode (`make run` serves http).
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=_PRODUCTION)
SECURE_HSTS_SECONDS = env.int(
    "DJANGO_SECURE_HSTS_SECONDS", default=31_536_000 if _PRODUCTION else 0
)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool(
    "DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", default=_PRODUCTION
)
SECURE_HSTS_PRELOAD = env.bool("DJANGO_SECURE_HSTS_PRELOAD", default=_PRODUCTION)
# Behind a TLS-terminating proxy, e.g. "HTTP_X_FORWARDED_PROTO,https". Only set it when the
# proxy always overwrites that header: a client could otherwise claim to be on HTTPS.
_proxy_ssl_header = env.list("DJANGO_SECURE_PROXY_SSL_HEADER", default=[])
if _proxy_ssl_header and len(_proxy_ssl_header) != 2:
    raise ImproperlyConfigured(
        "DJANGO_SECURE_PROXY_SSL_HEADER must be 'HEADER,value', e.g. HTTP_X_FORWARDED_PROTO,https."
    )
SECURE_PROXY_SSL_HEADER = (
    (_proxy_ssl_header[0], _proxy_ssl_header[1]) if _proxy_ssl_header else None
)
SESSION_COOKIE_SECURE = env.bool("DJANGO_SESSION_COOKIE_SECURE", default=_PRODUCTION)
CSRF_COOKIE_SECURE = env.bool("DJANGO_CSRF_COOKIE_SECURE", default=_PRODUCTION)
SESSION_COOKIE_HTTPONLY = env.bool("DJANGO_SESSION_COOKIE_HTTPONLY", default=True)
# No script reads the CSRF cookie: forms carry the token and Swagger UI gets it from its page.
CSRF_COOKIE_HTTPONLY = env.bool("DJANGO_CSRF_COOKIE_HTTPONLY", default=True)
SESSION_COOKIE_SAMESITE = env.str("DJANGO_SESSION_COOKIE_SAMESITE", default="Lax")
CSRF_COOKIE_SAMESITE = env.str("DJANGO_CSRF_COOKIE_SAMESITE", default="Lax")
SECURE_CONTENT_TYPE_NOSNIFF = env.bool("DJANGO_SECURE_CONTENT_TYPE_NOSNIFF", default=True)
SECURE_REFERRER_POLICY = env.str("DJANGO_SECURE_REFERRER_POLICY", default="same-origin")
SECURE_CROSS_ORIGIN_OPENER_POLICY = env.str(
    "DJANGO_SECURE_CROSS_ORIGIN_OPENER_POLICY", default="same-origin"
)
X_FRAME_OPTIONS = env.str("DJANGO_X_FRAME_OPTIONS", default="DENY")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "knox",
    "axes",
    "csp",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_results",
    "console",
    "harness_app",
    "experiments_app",
    "training_app",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "console.middleware.ApiPayloadLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: turns a locked-out login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "console.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "console.roles.roles_context",
            ],
        },
    },
]

WSGI_APPLICATION = "console.wsgi.application"

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}"),
}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "console" / "static"]
# Serve straight from app folders (incl. plotly.js and Swagger UI from installed packages):
# no collectstatic step and no CDN.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

# Artifacts (datasets, reports) live under var/; they are served only through authenticated
# views, never as public media.
MEDIA_ROOT = Path(env.str("HAT_ARTIFACT_DIR", default=str(VAR_DIR / "artifacts")))
MEDIA_URL = "/artifacts/"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "console:home"
LOGOUT_REDIRECT_URL = "login"

# Login throttling (django-axes): after HAT_LOGIN_FAILURE_LIMIT wrong passwords for one
# (username, client address) that pair is refused, right password included, for
# HAT_LOGIN_COOLOFF_MIN minutes; every failure while locked restarts the cool-off. Applies to
# the console login form, the admin and POST /api/v1/auth/token/.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("HAT_LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.float("HAT_LOGIN_COOLOFF_MIN", default=15.0))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "console.login_lockout.lockout_response"

# API tokens for console users (django-rest-knox): only a SHA-512 digest is stored; each token
# expires after HAT_API_TOKEN_TTL_H hours and can be revoked (docs/API.md).
REST_KNOX = {
    "TOKEN_TTL": timedelta(hours=env.float("HAT_API_TOKEN_TTL_H", default=720.0)),
    "TOKEN_LIMIT_PER_USER": env.int("HAT_API_TOKEN_LIMIT_PER_USER", default=20),
    # Tells a console token apart from a live-room key (hat_...) in logs and secret scanners.
    "TOKEN_PREFIX": "hatu_",
    "AUTH_HEADER_PREFIX": "Token",
    "AUTO_REFRESH": False,
}

# Content-Security-Policy (django-csp). Every script is a file from 'self' (console JS, plotly.js
# and Swagger UI from their packages via WhiteNoise): no inline script, no eval. Styles allow
# 'unsafe-inline' because plotly.js injects a <style> element and sets style attributes on its
# SVG, Swagger UI ships an inline <style>, and the console sizes progress bars and trace
# timelines with style attributes; CSS cannot run script, and img/connect/font stay on 'self'.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, UNSAFE_INLINE],
        # plotly's mode-bar icons and Swagger UI's icons are data: SVGs.
        "img-src": [SELF, "data:"],
        "font-src": [SELF, "data:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}
_csp_report_uri = env.str("HAT_CSP_REPORT_URI", default="")
if _csp_report_uri:
    CONTENT_SECURITY_POLICY["DIRECTIVES"]["report-uri"] = _csp_report_uri

# Request bodies over this size are refused with a 400 naming the limit (API and console).
# The model endpoint a room uses when it names none (seeded by `seed_demo`).
HAT_DEFAULT_ENDPOINT = env.str("HAT_DEFAULT_ENDPOINT", default="local-smollm2")
# How long a People invite link (one-time, stored hashed) works, in hours.
HAT_INVITE_TTL_H = env.float("HAT_INVITE_TTL_H", default=72.0)
# How long a web process may reuse a live-room key lookup (key, room, harness, endpoint);
# saves clear it at once in the saving process. 0 turns the cache off.
HAT_LIVE_CONFIG_TTL_S = env.float("HAT_LIVE_CONFIG_TTL_S", default=2.0)
# Where `make run` starts the embedded `transformers serve` worker.
HAT_MODEL_PORT = env.int("HAT_MODEL_PORT", default=8011)

HAT_MAX_UPLOAD_BYTES = env.int("HAT_MAX_UPLOAD_BYTES", default=1_048_576)
# POST /api/v1/events takes batches of up to HAT_EVENT_BATCH_MAX events (~2 MB at 10,000), so
# that one path gets its own body limit; the middleware enforces both.
HAT_EVENT_BATCH_MAX = env.int("HAT_EVENT_BATCH_MAX", default=10_000)
HAT_MAX_EVENT_BATCH_BYTES = env.int("HAT_MAX_EVENT_BATCH_BYTES", default=8_388_608)
DATA_UPLOAD_MAX_MEMORY_SIZE = max(HAT_MAX_UPLOAD_BYTES, HAT_MAX_EVENT_BATCH_BYTES)
FILE_UPLOAD_MAX_MEMORY_SIZE = HAT_MAX_UPLOAD_BYTES
# Experiments: how long a web process caches a room's running experiments (reply routing),
# and how often Celery beat brings the rollups up to date.
HAT_EXPERIMENT_CACHE_S = env.float("HAT_EXPERIMENT_CACHE_S", default=5.0)
HAT_ROLLUP_INTERVAL_S = env.float("HAT_ROLLUP_INTERVAL_S", default=60.0)
# Parallel workers per rollup statement beside the leader (PostgreSQL): one per spare core.
HAT_ROLLUP_PARALLEL_WORKERS = env.int("HAT_ROLLUP_PARALLEL_WORKERS", default=1)
# Blind tests: how long a pair shown to a labeler keeps its slot reserved (docs/LABELING.md).
HAT_BLIND_ASSIGNMENT_TTL_S = env.float("HAT_BLIND_ASSIGNMENT_TTL_S", default=900.0)

REST_FRAMEWORK = {
    # Token first: an API client without valid credentials gets 401 with
    # `WWW-Authenticate: Token` (DRF takes that header from the first class); the console's
    # browser session comes second.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "knox.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # JSON only: Swagger UI at /api/v1/docs/ is the API explorer.
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # OPTIONS metadata would introspect serializers against objects the caller may not see.
    "DEFAULT_METADATA_CLASS": None,
    # limit 1..500, offset 0..1,000,000; anything else is a 400 naming the parameter.
    "DEFAULT_PAGINATION_CLASS": "console.api_pagination.BoundedLimitOffsetPagination",
    "PAGE_SIZE": 50,
    # DRF's parsers plus a JSON nesting limit (64) and no U+0000 in any field.
    "DEFAULT_PARSER_CLASSES": [
        "console.api_parsers.BoundedJSONParser",
        "console.api_parsers.NulFreeFormParser",
        "console.api_parsers.NulFreeMultiPartParser",
    ],
    "EXCEPTION_HANDLER": "console.api_errors.exception_handler",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "HAT Console API",
    "DESCRIPTION": "Harness registry, live-room and operator API of HAT Console.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The API's surface is for signed-in users and key holders, not the public.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Choice sets shared by several fields get one name each in the schema.
    "ENUM_NAME_OVERRIDES": {
        "AgentKindEnum": "experiments_app.models.experiments.ExperimentArm.Kind",
        "ExperimentMetricEnum": "experiments_app.models.experiments.Experiment.Metric",
        "ExperimentStatusEnum": "experiments_app.models.experiments.Experiment.Status",
        # Without a name `manage.py check --deploy` warns (drf_spectacular.W001) and the
        # schema calls it StatusDaeEnum.
        "HarnessVersionStatusEnum": "harness_app.models.HarnessVersion.Status",
        "TrainingRunStatusEnum": "training_app.models.TrainingRun.Status",
        "StageRunStatusEnum": "training_app.models.StageRun.Status",
        "StageKindEnum": "training_app.models.StageRun.Kind",
        "EvalRunStatusEnum": "training_app.models.EvalRun.Status",
        "EvalVariantSetEnum": "training_app.models.EvalSet.VariantSet",
        "JudgeScoreKindEnum": "training_app.models.JudgeScore.Kind",
        "JudgeCalibrationStatusEnum": "training_app.models.JudgeCalibration.Status",
        "JudgeTrustStateEnum": [
            ("calibrated", "calibrated"),
            ("uncalibrated", "uncalibrated"),
            ("below_min_kappa", "below_min_kappa"),
        ],
        "HeldOutVariantSetEnum": [("t1", "t1"), ("t2", "t2")],
        "BlindTestCompareEnum": "experiments_app.models.blind_tests.BlindTest.Compare",
        "BlindTestRequestSourceEnum": "experiments_app.models.blind_tests.BlindTest.RequestSource",
        "BlindTestReplySourceEnum": "experiments_app.models.blind_tests.BlindTest.ReplySource",
        "BlindTestStatusEnum": "experiments_app.models.blind_tests.BlindTest.Status",
        "BlindTestStratifyByEnum": [("", "none"), ("skill", "skill"), ("product", "product")],
        # The labeler's verdict in screen terms (a = left reply, b = right reply).
        "LabelingChoiceEnum": "experiments_app.services.blind_labeling.ScreenChoice",
    },
}

# Celery: embedded default is kombu's filesystem transport under var/ with results in the
# Django database; production and CI point CELERY_BROKER_URL at Redis or RabbitMQ.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://")
CELERY_RESULT_BACKEND = env.str("CELERY_RESULT_BACKEND", default="django-db")
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TRACK_STARTED = True
# Training runs (docs/TRAINING_RUNS.md): a running stage renews its lease every
# HAT_TRAIN_HEARTBEAT_INTERVAL_S; the watchdog (every HAT_TRAIN_WATCHDOG_INTERVAL_S, on beat)
# requeues a running stage whose heartbeat is older than HAT_TRAIN_HEARTBEAT_TIMEOUT_S.
HAT_TRAIN_DIR = Path(env.str("HAT_TRAIN_DIR", default=str(VAR_DIR / "training")))
HAT_TRAIN_HEARTBEAT_TIMEOUT_S = env.float("HAT_TRAIN_HEARTBEAT_TIMEOUT_S", default=120.0)
HAT_TRAIN_HEARTBEAT_INTERVAL_S = env.float(
    "HAT_TRAIN_HEARTBEAT_INTERVAL_S", default=min(5.0, HAT_TRAIN_HEARTBEAT_TIMEOUT_S / 4)
)
HAT_TRAIN_WATCHDOG_INTERVAL_S = env.float("HAT_TRAIN_WATCHDOG_INTERVAL_S", default=30.0)
HAT_TRAIN_STAGE_TIME_LIMIT_S = env.int("HAT_TRAIN_STAGE_TIME_LIMIT_S", default=24 * 3600)
HAT_EVAL_RUN_TIME_LIMIT_S = env.int("HAT_EVAL_RUN_TIME_LIMIT_S", default=6 * 3600)
# Blind-test replies and judge calibrations wait this long for a model endpoint that does
# not answer yet (retrying every 15 s) before they run anyway and record the failures.
HAT_JOB_ENDPOINT_WAIT_S = env.int("HAT_JOB_ENDPOINT_WAIT_S", default=600)
# The promotion gate (docs/EVALUATION.md): a trained checkpoint backs an experiment arm only
# when its IFEval lower bound against its base model is within this many points, and its
# T1/T2 gap is at most this many points.
HAT_PROMOTION_IFEVAL_MARGIN_POINTS = env.float("HAT_PROMOTION_IFEVAL_MARGIN_POINTS", default=2.0)
HAT_PROMOTION_T1_T2_GAP_POINTS = env.float("HAT_PROMOTION_T1_T2_GAP_POINTS", default=2.0)
# Stage runners by kind, "kind=module.function,..."; unset kinds use the pipeline's own
# (training_app.pipeline.contract.stage_runner). A seam for tests and custom stages.
HAT_TRAIN_STAGE_RUNNERS = dict(
    item.split("=", 1) for item in env.list("HAT_TRAIN_STAGE_RUNNERS", default=[]) if "=" in item
)
# How a train worker runs a stage: in_process (the CPU profile), process (stage_cli in a child
# process, followed through its events file) or accelerate (the GPU profile in
# HAT_TRAIN_GPU_PROFILE, a YAML of training_app.pipeline.gpu_profile.GpuProfile fields:
# the generated launch.sh, one process per GPU). See docs/TRAINING.md.
HAT_TRAIN_LAUNCH = env.str("HAT_TRAIN_LAUNCH", default="in_process")
if HAT_TRAIN_LAUNCH not in ("in_process", "process", "accelerate"):
    raise ImproperlyConfigured("HAT_TRAIN_LAUNCH must be in_process, process or accelerate")
HAT_TRAIN_GPU_PROFILE = env.str("HAT_TRAIN_GPU_PROFILE", default="")
if HAT_TRAIN_LAUNCH == "accelerate" and not HAT_TRAIN_GPU_PROFILE:
    raise ImproperlyConfigured("HAT_TRAIN_LAUNCH=accelerate needs HAT_TRAIN_GPU_PROFILE (a file)")
# Endpoints registered from finished runs serve on HAT_TRAIN_SERVE_PORT + run id.
HAT_TRAIN_SERVE_PORT = env.int("HAT_TRAIN_SERVE_PORT", default=8100)

CELERY_BEAT_SCHEDULE = {
    "experiment-rollups": {
        "task": "experiments_app.tasks.update_rollups",
        "schedule": HAT_ROLLUP_INTERVAL_S,
    },
    "training-watchdog": {
        "task": "training_app.requeue_stale_stages",
        "schedule": HAT_TRAIN_WATCHDOG_INTERVAL_S,
    },
    "latency-replay-watchdog": {
        "task": "experiments_app.tasks.requeue_stale_latency_replays",
        "schedule": HAT_TRAIN_WATCHDOG_INTERVAL_S,
    },
}
CELERY_TASK_ROUTES = {
    "training_app.run_stage": {"queue": "train"},
    "training_app.run_eval": {"queue": "eval"},
    "training_app.run_judge_calibration": {"queue": "eval"},
    "experiments_app.tasks.generate_blind_replies": {"queue": "eval"},
    "experiments_app.tasks.run_latency_replay": {"queue": "eval"},
}
if CELERY_BROKER_URL.startswith("filesystem://"):
    _broker_dir = VAR_DIR / "celery-broker"
    for _sub in ("out", "processed", "control"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "out"),
        "data_folder_out": str(_broker_dir / "out"),
        "processed_folder": str(_broker_dir / "processed"),
        # Exchange tables; kombu's default is ./control in the working directory.
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
    }

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("HAT_LOG_LEVEL", default="INFO")},
    # One line per model request at INFO would drown the worker's log.
    "loggers": {"httpx": {"level": "WARNING"}, "httpcore": {"level": "WARNING"}},
}

# --- Webhook tools (issue 9 §3): which networks they may reach, and the key that encrypts
# the rooms' webhook secrets. Kept in one block; see docs/RUNTIME.md and docs/OPERATIONS.md.
# CIDRs a webhook may reach although they are internal (a production service network);
# empty: public addresses only. A bad CIDR stops the start here, not on the first call.
HAT_WEBHOOK_ALLOWED_NETWORKS = [
    str(ipaddress.ip_network(_cidr.strip(), strict=False))
    for _cidr in env.list("HAT_WEBHOOK_ALLOWED_NETWORKS", default=[])
    if _cidr.strip()
]
# Fernet keys, comma-separated: the first encrypts, every one decrypts (rotation). Unset, embedded
# mode (HAT_DEPLOYMENT=embedded) derives one from SECRET_KEY; in production storing or using a
# webhook secret fails until it is set.
HAT_SECRETS_KEY = env.list("HAT_SECRETS_KEY", default=[])
HAT_SECRETS_DEV_KEY_ALLOWED = not _PRODUCTION
