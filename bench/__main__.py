"""Run every benchmark module (or the ones named on the command line)."""

from __future__ import annotations

import importlib
import os
import platform
import sys

BENCHMARKS = (
    "bench.harness_registry",
    "bench.hsa",
    "bench.runtime_overhead",
    "bench.readout",
    "bench.ingestion",
    "bench.rollups",
    "bench.training",
    "bench.ifeval_scoring",
    "bench.bfcl_scoring",
    "bench.eval_run",
    "bench.blind_labeling",
)


def main(argv: list[str]) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    for name in argv or BENCHMARKS:
        module = importlib.import_module(name if name.startswith("bench.") else f"bench.{name}")
        print(f"\n== {module.__name__} ==")
        module.run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
