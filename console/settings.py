"""Django settings for HAT Console.

Every setting that varies between machines comes from the environment through the one
``env`` below; each has a working embedded default (SQLite and a filesystem Celery broker
under var/), so ``make run`` works on a clean clone. README lists every variable.
"""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

VAR_DIR = Path(env.str("HAT_VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="dev-only-insecure-key-change-me-in-production")
DEBUG = env.bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
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
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "console.middleware.ApiPayloadLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
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

# Request bodies over this size are refused with a 400 naming the limit (API and console).
# The model endpoint a room uses when it names none (seeded by `seed_demo`).
HAT_DEFAULT_ENDPOINT = env.str("HAT_DEFAULT_ENDPOINT", default="local-smollm2")
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

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
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
CELERY_BEAT_SCHEDULE = {
    "experiment-rollups": {
        "task": "experiments_app.tasks.update_rollups",
        "schedule": HAT_ROLLUP_INTERVAL_S,
    },
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
