"""Seed the embedded demo: users for each role, one live room with ~30 products, a realistic
live-stream harness (published), and the ReAct baseline. Safe to run again: it creates what
is missing and changes nothing that exists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand
from django.db import transaction

from console.roles import Role
from harness_app import services
from harness_app.harness.serialization import harness_from_yaml
from harness_app.models import HarnessVersion, Room

DEMO_DATA = Path(__file__).resolve().parents[3] / "harness_app" / "demo_data"
DEMO_USERS = (("operator", Role.OPERATOR), ("merchant", Role.MERCHANT), ("labeler", Role.LABELER))
DEMO_ROOM = "Autumn Wardrobe Live"


class Command(BaseCommand):
    help = "Create the demo users, room, catalog and published harness (idempotent)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--password", default="hat-demo-2026", help="password of the demo users"
        )

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        users = {name: self._user(name, role, options["password"]) for name, role in DEMO_USERS}
        room = Room.objects.filter(owner=users["merchant"], name=DEMO_ROOM).first()
        if room is None:
            room = services.room_create(
                owner=users["merchant"], name=DEMO_ROOM, locale="en-US", currency="USD"
            )
            result = services.products_import(
                room=room, data=(DEMO_DATA / "products.csv").read_bytes(), fmt="csv"
            )
            self.stdout.write(f"room {room.name!r}: {result.created} products")
        harness = room.harness
        if not HarnessVersion.objects.filter(harness=harness).exists():
            content = harness_from_yaml((DEMO_DATA / "live_stream_harness.yaml").read_text("utf-8"))
            version = services.harness_version_create(
                harness=harness,
                content=content,
                base_version=None,
                author=users["operator"],
                message="Initial live-stream host harness",
            )
            services.harness_version_publish(version=version)
            self.stdout.write(f"harness {harness.name!r}: v{version.number} published")
        self.stdout.write(self.style.SUCCESS("demo ready"))

    def _user(self, username: str, role: Role, password: str) -> Any:
        user_model = get_user_model()
        user, created = user_model.objects.get_or_create(
            username=username, defaults={"email": f"{username}@demo.hat.local"}
        )
        if created:
            user.set_password(password)
            user.save()
        user.groups.add(Group.objects.get_or_create(name=role.value)[0])
        return user
