"""A room's catalog: products by sku, and bulk import from CSV or JSON."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from console.api_parsers import UPLOAD_PARSERS
from harness_app import selectors, services
from harness_app.api.errors import catalog_invalid
from harness_app.api.serializers import (
    CatalogImportInput,
    CatalogImportOutput,
    ProductCreateInput,
    ProductInput,
    ProductOutput,
)
from harness_app.catalog_import import CatalogImportError, ImportFormat
from harness_app.permissions import IsConsoleUser


class ProductListApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = ProductOutput

    @extend_schema(responses=ProductOutput(many=True))
    def get(self, request: Request, room_id: int) -> Response:
        room = selectors.room_get(user=request.user, room_id=room_id)
        page = self.paginate_queryset(selectors.products_of_room(room))
        return self.get_paginated_response(ProductOutput(page, many=True).data)

    @extend_schema(request=ProductCreateInput, responses={201: ProductOutput})
    def post(self, request: Request, room_id: int) -> Response:
        room = selectors.room_get(user=request.user, room_id=room_id)
        data = ProductCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        sku = fields.pop("sku")
        if selectors.products_of_room(room).filter(sku=sku).exists():
            return Response(
                {
                    "detail": f"sku: product {sku!r} already exists; use PUT to update it",
                    "errors": [{"field": "sku", "message": f"product {sku!r} already exists"}],
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        product = services.product_upsert(room=room, sku=sku, **fields)
        return Response(ProductOutput(product).data, status=status.HTTP_201_CREATED)


class ProductDetailApi(GenericAPIView):  # type: ignore[type-arg]
    permission_classes = [IsConsoleUser]
    serializer_class = ProductOutput

    @extend_schema(responses=ProductOutput)
    def get(self, request: Request, room_id: int, sku: str) -> Response:
        room = selectors.room_get(user=request.user, room_id=room_id)
        return Response(ProductOutput(selectors.product_get(room=room, sku=sku)).data)

    @extend_schema(request=ProductInput, responses=ProductOutput)
    def put(self, request: Request, room_id: int, sku: str) -> Response:
        room = selectors.room_get(user=request.user, room_id=room_id)
        product = selectors.product_get(room=room, sku=sku)
        data = ProductInput(data=request.data)
        data.is_valid(raise_exception=True)
        product = services.product_upsert(room=room, sku=product.sku, **data.validated_data)
        return Response(ProductOutput(product).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, room_id: int, sku: str) -> Response:
        room = selectors.room_get(user=request.user, room_id=room_id)
        services.product_delete(product=selectors.product_get(room=room, sku=sku))
        return Response(status=status.HTTP_204_NO_CONTENT)


class CatalogImportApi(GenericAPIView):  # type: ignore[type-arg]
    """Upsert products by sku from a CSV or JSON file; any bad row rejects the whole file."""

    permission_classes = [IsConsoleUser]
    parser_classes = UPLOAD_PARSERS
    serializer_class = CatalogImportInput

    @extend_schema(request=CatalogImportInput, responses=CatalogImportOutput)
    def post(self, request: Request, room_id: int) -> Response:
        room = selectors.room_get(user=request.user, room_id=room_id)
        data = CatalogImportInput(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        fmt: ImportFormat = data.validated_data.get("format") or (
            "json" if str(upload.name).lower().endswith(".json") else "csv"
        )
        try:
            result = services.products_import(room=room, data=upload.read(), fmt=fmt)
        except CatalogImportError as exc:
            raise catalog_invalid(exc) from None
        return Response(CatalogImportOutput(result).data)
