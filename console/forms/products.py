"""Catalog forms: one product, and a CSV/JSON catalog upload."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.validators import RegexValidator, URLValidator

from console.forms.fields import JsonObjectField
from harness_app.catalog_import import PRODUCT_VALUE_FIELDS
from harness_app.product_attributes import validate_attributes

SKU_VALIDATOR = RegexValidator(
    r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
    "1-64 letters, digits, '_', '.' or '-', starting with a letter or digit",
)
MAX_IMAGE_URLS = 20
DATETIME_LOCAL = "%Y-%m-%dT%H:%M"


class DateTimeLocalInput(forms.DateTimeInput):
    input_type = "datetime-local"

    def __init__(self) -> None:
        super().__init__(format=DATETIME_LOCAL)


class ProductForm(forms.Form):
    """Create (with ``sku``) or edit (sku fixed) a product of one room's catalog."""

    sku = forms.CharField(
        max_length=64,
        validators=[SKU_VALIDATOR],
        help_text="Unique in this room; cannot be changed later.",
    )
    title = forms.CharField(max_length=200)
    price = forms.DecimalField(max_digits=12, decimal_places=2, min_value=0)
    stock = forms.IntegerField(min_value=0, max_value=2_147_483_647, initial=0)
    attributes = JsonObjectField(
        required=False,
        rows=5,
        validators=[validate_attributes],
        help_text='Facts the host may quote, as a JSON object, e.g. {"material": "wool"}.',
    )
    image_urls = forms.CharField(
        label="Image URLs",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=f"One http(s) URL per line, at most {MAX_IMAGE_URLS}.",
    )
    sale_starts_at = forms.DateTimeField(
        required=False,
        widget=DateTimeLocalInput(),
        input_formats=[DATETIME_LOCAL],
        help_text="UTC. Leave empty for no sale window.",
    )
    sale_ends_at = forms.DateTimeField(
        required=False,
        widget=DateTimeLocalInput(),
        input_formats=[DATETIME_LOCAL],
        help_text="UTC. Must be after the start.",
    )

    def __init__(self, *args: Any, editing: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if editing:
            del self.fields["sku"]

    def clean_image_urls(self) -> list[str]:
        lines = [line.strip() for line in self.cleaned_data["image_urls"].splitlines()]
        urls = [line for line in lines if line]
        if len(urls) > MAX_IMAGE_URLS:
            raise forms.ValidationError(f"{len(urls)} URLs; at most {MAX_IMAGE_URLS} are allowed")
        check = URLValidator(schemes=["http", "https"])
        for number, url in enumerate(urls, start=1):
            try:
                check(url)
            except forms.ValidationError:
                raise forms.ValidationError(f"line {number} is not an http(s) URL: {url}") from None
        return urls

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        starts, ends = data.get("sale_starts_at"), data.get("sale_ends_at")
        if starts and ends and ends <= starts:
            self.add_error("sale_ends_at", "must be after the sale start")
        if "attributes" in data and data["attributes"] is None:
            data["attributes"] = {}
        return data

    def product_fields(self) -> dict[str, Any]:
        """The cleaned values as ``services.product_upsert`` keyword arguments (no sku)."""
        return {name: self.cleaned_data[name] for name in PRODUCT_VALUE_FIELDS}

    @staticmethod
    def initial_from(product: Any) -> dict[str, Any]:
        return {
            "title": product.title,
            "price": product.price,
            "stock": product.stock,
            "attributes": product.attributes,
            "image_urls": "\n".join(product.image_urls),
            "sale_starts_at": product.sale_starts_at,
            "sale_ends_at": product.sale_ends_at,
        }


class CatalogImportForm(forms.Form):
    FORMAT_CHOICES = [("", "From the file name (.csv / .json)"), ("csv", "CSV"), ("json", "JSON")]

    file = forms.FileField(help_text="CSV with a header row, or a JSON list of products.")
    format = forms.ChoiceField(choices=FORMAT_CHOICES, required=False)

    def import_format(self) -> str:
        chosen = self.cleaned_data.get("format")
        if chosen:
            return str(chosen)
        name = str(self.cleaned_data["file"].name).lower()
        return "json" if name.endswith(".json") else "csv"
