"""URLs of the server-rendered operator console (namespace ``console``)."""

from django.urls import include, path

from console.views import (
    api_keys,
    diff,
    editor,
    harnesses,
    home,
    products,
    rooms,
    versions,
)

app_name = "console"

urlpatterns = [
    path("", home.home, name="home"),
    path("labeling/", home.labeling, name="labeling"),
    # rooms, catalog, API keys
    path("rooms/", rooms.room_list, name="room-list"),
    path("rooms/new/", rooms.room_create, name="room-create"),
    path("rooms/<int:room_id>/", rooms.room_detail, name="room-detail"),
    path("rooms/<int:room_id>/products/new/", products.product_create, name="product-create"),
    path("rooms/<int:room_id>/products/import/", products.catalog_import, name="catalog-import"),
    path(
        "rooms/<int:room_id>/products/<str:sku>/edit/", products.product_edit, name="product-edit"
    ),
    path(
        "rooms/<int:room_id>/products/<str:sku>/delete/",
        products.product_delete,
        name="product-delete",
    ),
    path("rooms/<int:room_id>/api-keys/new/", api_keys.api_key_create, name="api-key-create"),
    path(
        "rooms/<int:room_id>/api-keys/<int:key_id>/revoke/",
        api_keys.api_key_revoke,
        name="api-key-revoke",
    ),
    # harnesses and versions
    path("harnesses/", harnesses.harness_list, name="harness-list"),
    path("harnesses/<int:harness_id>/", harnesses.harness_detail, name="harness-detail"),
    path("harnesses/<int:harness_id>/edit/", editor.harness_edit, name="harness-edit"),
    path("harnesses/<int:harness_id>/import/", harnesses.harness_import, name="harness-import"),
    path("harnesses/<int:harness_id>/diff/", diff.harness_diff, name="harness-diff"),
    path(
        "harnesses/<int:harness_id>/versions/<int:number>/",
        versions.version_detail,
        name="version-detail",
    ),
    path(
        "harnesses/<int:harness_id>/versions/<int:number>/publish/",
        versions.version_publish,
        name="version-publish",
    ),
    path(
        "harnesses/<int:harness_id>/versions/<int:number>/rollback/",
        versions.version_rollback,
        name="version-rollback",
    ),
    path(
        "harnesses/<int:harness_id>/versions/<int:number>/export/",
        harnesses.version_export,
        name="version-export",
    ),
    # A/B experiments
    path("", include("console.views.experiment_urls")),
]
