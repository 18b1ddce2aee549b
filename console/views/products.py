"""A room's catalog: create, edit and delete a product; import a CSV/JSON catalog."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from console.forms.products import CatalogImportForm, ProductForm
from console.views.access import console_user_required
from harness_app import selectors, services
from harness_app.catalog_import import CatalogImportError
from harness_app.models import Product


@require_http_methods(["GET", "POST"])
@console_user_required
def product_create(request: HttpRequest, room_id: int) -> HttpResponse:
    room = selectors.room_get(user=request.user, room_id=room_id)
    form = ProductForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        sku = form.cleaned_data["sku"]
        if selectors.products_of_room(room).filter(sku=sku).exists():
            form.add_error("sku", f"product {sku!r} already exists in this room; edit it instead")
        elif _save(form, room=room, sku=sku):
            messages.success(request, f"Product {sku} added.")
            return redirect("console:room-detail", room_id=room.pk)
    return render(request, "harness_app/product_form.html", {"room": room, "form": form})


@require_http_methods(["GET", "POST"])
@console_user_required
def product_edit(request: HttpRequest, room_id: int, sku: str) -> HttpResponse:
    room = selectors.room_get(user=request.user, room_id=room_id)
    product = selectors.product_get(room=room, sku=sku)
    form = ProductForm(
        request.POST or None, editing=True, initial=ProductForm.initial_from(product)
    )
    if request.method == "POST" and form.is_valid() and _save(form, room=room, sku=product.sku):
        messages.success(request, f"Product {product.sku} saved.")
        return redirect("console:room-detail", room_id=room.pk)
    return render(
        request, "harness_app/product_form.html", {"room": room, "form": form, "product": product}
    )


@require_http_methods(["GET", "POST"])
@console_user_required
def product_delete(request: HttpRequest, room_id: int, sku: str) -> HttpResponse:
    room = selectors.room_get(user=request.user, room_id=room_id)
    product = selectors.product_get(room=room, sku=sku)
    if request.method == "POST":
        services.product_delete(product=product)
        messages.success(request, f"Product {product.sku} deleted.")
        return redirect("console:room-detail", room_id=room.pk)
    return render(request, "harness_app/product_delete.html", {"room": room, "product": product})


def _save(form: ProductForm, *, room: object, sku: str) -> Product | None:
    """Save through the service; model validation errors land on the form's fields."""
    try:
        return services.product_upsert(room=room, sku=sku, **form.product_fields())  # type: ignore[arg-type]
    except ValidationError as exc:
        for field, errors in exc.message_dict.items():
            form.add_error(field if field in form.fields else None, errors)
        return None


@require_http_methods(["GET", "POST"])
@console_user_required
def catalog_import(request: HttpRequest, room_id: int) -> HttpResponse:
    room = selectors.room_get(user=request.user, room_id=room_id)
    form = CatalogImportForm(request.POST or None, request.FILES or None)
    row_errors = None
    if request.method == "POST" and form.is_valid():
        try:
            result = services.products_import(
                room=room,
                data=form.cleaned_data["file"].read(),
                fmt=form.import_format(),  # type: ignore[arg-type]
            )
        except CatalogImportError as exc:
            row_errors = exc.errors
        else:
            messages.success(
                request,
                f"Catalog imported: {result.created} product(s) added, {result.updated} updated.",
            )
            return redirect("console:room-detail", room_id=room.pk)
    return render(
        request,
        "harness_app/catalog_import.html",
        {"room": room, "form": form, "row_errors": row_errors},
    )
