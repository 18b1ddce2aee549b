"""Refresh the shipped BFCL v4 copy from the official ``bfcl-eval`` wheel.

The wheel's runtime dependencies pin numpy 1.26, so it is never installed here; it is only
downloaded and read as a zip::

    pip download --no-deps bfcl-eval==2026.3.23 -d /tmp/bfcl
    python -m harness_app.hsa.bfcl_data.refresh /tmp/bfcl/bfcl_eval-2026.3.23-py3-none-any.whl

Each question file and possible-answer file of the single-turn categories is written gzipped
(``mtime=0``, no file name in the header, so the same wheel gives byte-identical files) and
``MANIFEST.json`` records the wheel, its SHA-256 and the SHA-256 of every source file, so
``sha256sum`` of the unpacked files can be checked against it.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path

from harness_app.hsa.bfcl_data import CATEGORIES, DATA_DIR, NO_CALL_CATEGORIES

_WHEEL_NAME = re.compile(r"bfcl_eval-(?P<version>[^-]+)-")


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


def refresh(wheel: Path, target: Path = DATA_DIR) -> dict[str, object]:
    match = _WHEEL_NAME.match(wheel.name)
    if match is None:
        raise ValueError(f"{wheel.name} is not a bfcl_eval wheel")
    files: dict[str, str] = {}
    with zipfile.ZipFile(wheel) as archive:
        for category in CATEGORIES:
            members = [f"bfcl_eval/data/BFCL_v4_{category}.json"]
            if category not in NO_CALL_CATEGORIES:
                members.append(f"bfcl_eval/data/possible_answer/BFCL_v4_{category}.json")
            for member in members:
                data = archive.read(member)
                relative = member.removeprefix("bfcl_eval/data/")
                out = target / (relative + ".gz")
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(_gzip(data))
                files[relative] = hashlib.sha256(data).hexdigest()
    manifest: dict[str, object] = {
        "package": "bfcl-eval",
        "version": match["version"],
        "wheel": wheel.name,
        "wheel_sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
        "licence": "Apache-2.0",
        "source_sha256": files,
    }
    (target / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
    return manifest


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness_app.hsa.bfcl_data.refresh")
    parser.add_argument("wheel", type=Path, help="bfcl_eval-*.whl from pip download --no-deps")
    parser.add_argument("--target", type=Path, default=DATA_DIR)
    args = parser.parse_args(argv)
    print(json.dumps(refresh(args.wheel, args.target), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
