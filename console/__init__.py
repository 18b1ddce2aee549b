"""HAT Console: the Django project package and the operator UI."""

from console.celery import app as celery_app

__all__ = ("celery_app",)
