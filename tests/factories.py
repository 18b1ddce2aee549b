"""factory_boy factories; rooms are made through the service so they get a harness."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from console.roles import Role
from harness_app import services
from harness_app.models import Product, Room


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.test")
    password = factory.PostGenerationMethodCall("set_password", "pw-for-tests-1")

    @factory.post_generation
    def role(self, create: bool, extracted: Role | None, **kwargs: Any) -> None:
        if extracted is not None:
            self.groups.add(Group.objects.get_or_create(name=extracted.value)[0])  # type: ignore[attr-defined]
        self.save()  # type: ignore[attr-defined]


class RoomFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Room

    owner = factory.SubFactory(UserFactory, role=Role.MERCHANT)
    name = factory.Sequence(lambda n: f"Room {n}")
    locale = "en-US"
    currency = "USD"

    @classmethod
    def _create(cls, model_class: type[Room], *args: Any, **kwargs: Any) -> Room:
        return services.room_create(**kwargs)


class ProductFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Product

    room = factory.SubFactory(RoomFactory)
    sku = factory.Sequence(lambda n: f"SKU-{n:04d}")
    title = factory.Sequence(lambda n: f"Product {n}")
    price = Decimal("19.90")
    stock = 10
