from django.urls import path

from harness_app.api import api_keys, harnesses, live, products, rooms, webhook_secrets

urlpatterns = [
    path("rooms/", rooms.RoomListApi.as_view(), name="room-list"),
    path("rooms/<int:room_id>/", rooms.RoomDetailApi.as_view(), name="room-detail"),
    path("rooms/<int:room_id>/settings/", rooms.RoomSettingsApi.as_view(), name="room-settings"),
    path("rooms/<int:room_id>/products/", products.ProductListApi.as_view(), name="product-list"),
    path(
        "rooms/<int:room_id>/products/import/",
        products.CatalogImportApi.as_view(),
        name="product-import",
    ),
    path(
        "rooms/<int:room_id>/products/<str:sku>/",
        products.ProductDetailApi.as_view(),
        name="product-detail",
    ),
    path("rooms/<int:room_id>/api-keys/", api_keys.ApiKeyListApi.as_view(), name="api-key-list"),
    path(
        "rooms/<int:room_id>/api-keys/<int:key_id>/revoke/",
        api_keys.ApiKeyRevokeApi.as_view(),
        name="api-key-revoke",
    ),
    path(
        "rooms/<int:room_id>/webhook-secrets/",
        webhook_secrets.WebhookSecretListApi.as_view(),
        name="webhook-secret-list",
    ),
    path(
        "rooms/<int:room_id>/webhook-secrets/<int:secret_id>/",
        webhook_secrets.WebhookSecretDetailApi.as_view(),
        name="webhook-secret-detail",
    ),
    path(
        "rooms/<int:room_id>/webhook-secrets/<int:secret_id>/rotate/",
        webhook_secrets.WebhookSecretRotateApi.as_view(),
        name="webhook-secret-rotate",
    ),
    path("harnesses/", harnesses.HarnessListApi.as_view(), name="harness-list"),
    path(
        "harnesses/<int:harness_id>/", harnesses.HarnessDetailApi.as_view(), name="harness-detail"
    ),
    path(
        "harnesses/<int:harness_id>/versions/",
        harnesses.HarnessVersionListApi.as_view(),
        name="harness-version-list",
    ),
    path(
        "harnesses/<int:harness_id>/versions/<int:number>/",
        harnesses.HarnessVersionDetailApi.as_view(),
        name="harness-version-detail",
    ),
    path(
        "harnesses/<int:harness_id>/versions/<int:number>/publish/",
        harnesses.HarnessVersionPublishApi.as_view(),
        name="harness-version-publish",
    ),
    path(
        "harnesses/<int:harness_id>/versions/<int:number>/export/",
        harnesses.HarnessVersionExportApi.as_view(),
        name="harness-version-export",
    ),
    path(
        "harnesses/<int:harness_id>/rollback/",
        harnesses.HarnessRollbackApi.as_view(),
        name="harness-rollback",
    ),
    path(
        "harnesses/<int:harness_id>/diff/", harnesses.HarnessDiffApi.as_view(), name="harness-diff"
    ),
    path(
        "harnesses/<int:harness_id>/import/",
        harnesses.HarnessImportApi.as_view(),
        name="harness-import",
    ),
    path(
        "live/rooms/<int:room_id>/harness/",
        live.LiveRoomHarnessApi.as_view(),
        name="live-room-harness",
    ),
]
