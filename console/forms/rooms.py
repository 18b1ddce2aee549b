"""Create a room (operators) and assign the merchant who owns it."""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model
from django.core.validators import RegexValidator

from console.roles import Role


class RoomCreateForm(forms.Form):
    name = forms.CharField(max_length=120)
    owner = forms.ModelChoiceField(
        queryset=get_user_model().objects.none(),
        help_text="The merchant who owns the room; only they (and operators) will see it.",
    )
    locale = forms.CharField(
        max_length=16,
        initial="en-US",
        validators=[
            RegexValidator(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$", "use a BCP 47 tag like en-US")
        ],
    )
    currency = forms.CharField(
        max_length=3,
        initial="USD",
        validators=[RegexValidator(r"^[A-Z]{3}$", "use a 3-letter ISO 4217 code like USD")],
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        merchants = get_user_model().objects.filter(groups__name=Role.MERCHANT.value)
        self.fields["owner"].queryset = merchants.order_by("username")  # type: ignore[attr-defined]
