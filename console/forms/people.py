"""People pages (operators): invite someone, change a role, give a room to a merchant."""

from __future__ import annotations

from typing import Any

from django import forms

from console.roles import Role
from console.selectors.people import merchants_active, rooms_with_owners

ROLE_CHOICES = [
    (Role.MERCHANT.value, "Merchant: sees and edits only their own rooms"),
    (Role.OPERATOR.value, "Operator: every room, harness, experiment, training and people"),
    (Role.LABELER.value, "Labeler: only the blind labeling pages"),
]


class PersonInviteForm(forms.Form):
    username = forms.CharField(max_length=150)
    email = forms.EmailField(label="E-mail", max_length=254)
    role = forms.ChoiceField(choices=ROLE_CHOICES, initial=Role.MERCHANT.value)


class RoleChangeForm(forms.Form):
    role = forms.ChoiceField(choices=ROLE_CHOICES)


class RoomOwnerForm(forms.Form):
    room: forms.ModelChoiceField[Any] = forms.ModelChoiceField(queryset=rooms_with_owners())
    owner: forms.ModelChoiceField[Any] = forms.ModelChoiceField(
        label="New owner",
        queryset=merchants_active(),
        help_text="Active merchants only; the room's harness, products and keys go with it.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        room = self.fields["room"]
        room.queryset = rooms_with_owners()  # type: ignore[attr-defined]
        room.label_from_instance = lambda r: f"{r.name} (#{r.pk}, {r.owner.get_username()})"  # type: ignore[attr-defined]
        self.fields["owner"].queryset = merchants_active()  # type: ignore[attr-defined]
