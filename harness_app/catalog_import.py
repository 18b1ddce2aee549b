"""Parse a product catalog upload (CSV or JSON) into validated rows with row-level errors.

Parsing is separate from writing so that a file with any bad row is rejected whole, with
every bad row named, before the database is touched.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from django.utils.dateparse import parse_datetime
from django.utils.timezone import is_naive, make_aware

from harness_app.harness.json_limits import (
    NUL_MESSAGE,
    JsonLimitError,
    json_loads_bounded,
    json_value_problem,
)
from harness_app.product_attributes import attributes_problem

SKU_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
MAX_ROWS = 10_000
# What an import or an edit sets on a product, besides the sku that names it.
PRODUCT_VALUE_FIELDS = (
    "title",
    "price",
    "stock",
    "attributes",
    "image_urls",
    "sale_starts_at",
    "sale_ends_at",
)
CSV_COLUMNS = ("sku", *PRODUCT_VALUE_FIELDS)
REQUIRED = ("sku", "title", "price")

ImportFormat = Literal["csv", "json"]


@dataclass(frozen=True)
class RowError:
    row: int  # 1-based data row (CSV: excluding the header line)
    field: str
    message: str


@dataclass(frozen=True)
class ProductRow:
    sku: str
    title: str
    price: Decimal
    stock: int
    attributes: dict[str, Any] = field(default_factory=dict)
    image_urls: list[str] = field(default_factory=list)
    sale_starts_at: datetime | None = None
    sale_ends_at: datetime | None = None


class CatalogImportError(ValueError):
    def __init__(self, errors: list[RowError]) -> None:
        self.errors = errors
        first = errors[0]
        super().__init__(
            f"row {first.row}, {first.field}: {first.message} ({len(errors)} error(s))"
        )


def parse_catalog(data: bytes, fmt: ImportFormat) -> list[ProductRow]:
    """Return every row, or raise CatalogImportError listing every bad row and field."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CatalogImportError(
            [RowError(0, "file", f"file is not UTF-8 text (bad byte at offset {exc.start})")]
        ) from None
    records = _read_csv(text) if fmt == "csv" else _read_json(text)
    if len(records) > MAX_ROWS:
        raise CatalogImportError(
            [RowError(0, "file", f"{len(records)} rows; the limit is {MAX_ROWS}")]
        )
    if not records:
        raise CatalogImportError([RowError(0, "file", "the file has no product rows")])
    rows: list[ProductRow] = []
    errors: list[RowError] = []
    seen: dict[str, int] = {}
    for index, record in enumerate(records, start=1):
        row, row_errors = _parse_record(index, record)
        errors.extend(row_errors)
        if row is None:
            continue
        if row.sku in seen:
            errors.append(
                RowError(index, "sku", f"duplicate sku {row.sku!r} (also row {seen[row.sku]})")
            )
            continue
        seen[row.sku] = index
        rows.append(row)
    if errors:
        raise CatalogImportError(errors)
    return rows


def _read_csv(text: str) -> list[dict[str, Any]]:
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    unknown = [c for c in header if c not in CSV_COLUMNS]
    missing = [c for c in REQUIRED if c not in header]
    if unknown or missing:
        parts = []
        if missing:
            parts.append(f"missing column(s) {', '.join(missing)}")
        if unknown:
            parts.append(f"unknown column(s) {', '.join(unknown)}")
        raise CatalogImportError(
            [RowError(0, "header", f"{'; '.join(parts)}; allowed: {', '.join(CSV_COLUMNS)}")]
        )
    try:
        return [dict(r) for r in reader]
    except csv.Error as exc:  # e.g. a cell over the csv module's 128 KB field limit
        raise CatalogImportError(
            [RowError(0, "file", f"not valid CSV after line {reader.line_num}: {exc}")]
        ) from None


def _read_json(text: str) -> list[dict[str, Any]]:
    try:
        # U+0000 is reported per row and field by _parse_record.
        data = json_loads_bounded(text, refuse_nul=False)
    except JsonLimitError as exc:
        raise CatalogImportError([_row_error_at(exc)]) from None
    except json.JSONDecodeError as exc:
        raise CatalogImportError(
            [
                RowError(
                    0, "file", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
                )
            ]
        ) from None
    if isinstance(data, dict) and isinstance(data.get("products"), list):
        data = data["products"]
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise CatalogImportError(
            [
                RowError(
                    0, "file", 'expected a JSON list of product objects (or {"products": [...]})'
                )
            ]
        )
    return data


_ROW_PATH = re.compile(r"^(?:products)?\[(\d+)\]\.?([^.\[]*)")


def _row_error_at(exc: JsonLimitError) -> RowError:
    """A limit broken inside the JSON file, as the error of the row (and field) it is in."""
    match = _ROW_PATH.match(exc.path)
    if match is None:
        return RowError(0, "file", str(exc))
    return RowError(int(match.group(1)) + 1, match.group(2) or "file", exc.message)


def _parse_record(index: int, record: dict[str, Any]) -> tuple[ProductRow | None, list[RowError]]:
    errors: list[RowError] = []

    def err(field_name: str, message: str) -> None:
        errors.append(RowError(index, field_name, message))

    # PostgreSQL text cannot hold U+0000: refuse it in any cell or key, naming the column.
    for key, value in record.items():
        if json_value_problem({key: value}) is not None:
            err(str(key).replace("\x00", "\\u0000"), NUL_MESSAGE)
    if errors:
        return None, errors

    unknown = sorted(set(record) - set(CSV_COLUMNS))
    if unknown:
        err(unknown[0], f"unknown field; allowed: {', '.join(CSV_COLUMNS)}")
    sku = str(record.get("sku") or "").strip()
    if not SKU_RE.match(sku):
        err("sku", "required; 1-64 letters, digits, '_', '.', '-' starting with a letter or digit")
    title = str(record.get("title") or "").strip()
    if not title or len(title) > 200:
        err("title", "required, at most 200 characters")
    price = _decimal(record.get("price"))
    if price is None or price < 0 or price >= Decimal("1e10"):
        err(
            "price",
            f"must be a non-negative number with at most 2 decimals, got {record.get('price')!r}",
        )
    stock_raw = record.get("stock")
    stock = 0
    if stock_raw not in (None, ""):
        try:
            stock = int(str(stock_raw))
            if stock < 0:
                raise ValueError
        except ValueError:
            err("stock", f"must be a whole number >= 0, got {stock_raw!r}")
    attributes = _json_field(record.get("attributes"), dict, "attributes", err) or {}
    problem = attributes_problem(attributes)
    if problem is not None:
        err("attributes", problem)
    images = _image_urls(record.get("image_urls"), err)
    starts = _datetime(record.get("sale_starts_at"), "sale_starts_at", err)
    ends = _datetime(record.get("sale_ends_at"), "sale_ends_at", err)
    if starts and ends and ends <= starts:
        err("sale_ends_at", "must be after sale_starts_at")
    if errors or price is None:
        return None, errors
    return (
        ProductRow(sku, title, price, stock, attributes, images, starts, ends),
        errors,
    )


def _decimal(value: Any) -> Decimal | None:
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        d = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    if not d.is_finite() or d.as_tuple().exponent < -2:  # type: ignore[operator]
        return None
    return d


def _json_field(value: Any, kind: type, name: str, err: Any) -> Any:
    if value in (None, ""):
        return None
    if isinstance(value, str):
        try:
            value = json_loads_bounded(value)
        except JsonLimitError as exc:
            err(name, exc.message)
            return None
        except json.JSONDecodeError:
            err(name, f"must be a JSON {kind.__name__}")
            return None
    if not isinstance(value, kind):
        err(name, f"must be a JSON {'object' if kind is dict else 'list'}")
        return None
    return value


def _image_urls(value: Any, err: Any) -> list[str]:
    if value in (None, ""):
        return []
    if isinstance(value, str):
        if value.strip().startswith("["):
            parsed = _json_field(value, list, "image_urls", err)
            if parsed is None:
                return []
            urls = parsed
        else:
            urls = [u.strip() for u in value.split(";")]
    elif isinstance(value, list):
        urls = value
    else:
        err("image_urls", "must be a list of http(s) URLs or a ';'-separated string")
        return []
    bad = [u for u in urls if not isinstance(u, str) or not re.match(r"^https?://\S+$", u)]
    if bad:
        err("image_urls", f"not an http(s) URL: {bad[0]!r}")
        return []
    return [u for u in urls if u]


def _datetime(value: Any, name: str, err: Any) -> datetime | None:
    if value in (None, ""):
        return None
    parsed = parse_datetime(str(value))
    if parsed is None:
        err(name, f"must be an ISO 8601 datetime like 2026-11-30T20:00:00Z, got {value!r}")
        return None
    return make_aware(parsed, UTC) if is_naive(parsed) else parsed
