"""Cost of checking and storing a harness edit, beside the floor of merely copying it.

Figure: validate + hash + canonical dict of the demo harness (what every save does before the
database write), and a zip export/import round trip. Baseline: a JSON round trip of the same
content (the least any save must do).
"""

from __future__ import annotations

import json
from pathlib import Path

from bench.timing import measure
from harness_app.harness.archive import export_harness_zip, import_harness_zip
from harness_app.harness.serialization import (
    component_hashes,
    harness_from_dict,
    harness_from_yaml,
    harness_to_dict,
)
from harness_app.harness.validation import validate_harness

DEMO = (
    Path(__file__).resolve().parent.parent
    / "harness_app"
    / "demo_data"
    / "live_stream_harness.yaml"
)


def run() -> None:
    harness = harness_from_yaml(DEMO.read_text("utf-8"))
    as_dict = harness_to_dict(harness)
    text = json.dumps(as_dict)

    baseline = measure(
        "baseline: JSON round trip of the content", lambda: json.loads(json.dumps(as_dict))
    )
    parse = measure("parse dict -> Harness", lambda: harness_from_dict(json.loads(text)))
    save_checks = measure(
        "save checks: validate + hashes + canonical dict",
        lambda: (validate_harness(harness), component_hashes(harness), harness_to_dict(harness)),
    )
    archive = export_harness_zip(harness)
    zip_rt = measure(
        "zip export + import (validated)", lambda: import_harness_zip(export_harness_zip(harness))
    )
    for t in (baseline, parse, save_checks, zip_rt):
        print(t.line())
    print(
        f"demo harness: {len(harness.skills)} skills, {len(harness.tools)} tools, "
        f"{len(harness.hooks)} hooks; zip {len(archive)} bytes"
    )
    print(f"save checks cost {save_checks.p50_us / baseline.p50_us:.1f}x the JSON round-trip floor")
