"""Start the embedded model worker: convert SmolLM2 if needed, then exec ``transformers serve``.

    python -m inference.workers.serve_local --host 127.0.0.1 --port 8011 [--model-dir DIR]

The process replaces itself with the server (``os.execve``), so a process manager (honcho,
systemd) signals the server directly and sees its exit code. Point clients at
``http://HOST:PORT/v1`` with ``model`` set to the printed model id (the checkpoint's
absolute path) or left out. The server is CPU-only and fully offline.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from inference.workers.local_model import (
    DEFAULT_MODEL_DIR,
    PackagedModelMissing,
    ensure_local_checkpoint,
)
from inference.workers.profiles import OFFLINE_ENV, served_model_id, transformers_serve_command


def server_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment the server runs in: the caller's, forced offline."""
    env = dict(os.environ if base is None else base)
    env.update(OFFLINE_ENV)
    return env


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m inference.workers.serve_local",
        description="Serve SmolLM2-135M-Instruct with `transformers serve` on CPU, offline.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8011)
    parser.add_argument(
        "--model-dir",
        type=Path,
        default=Path(os.environ.get("HAT_LOCAL_MODEL_DIR") or DEFAULT_MODEL_DIR),
        help="converted checkpoint directory (default: $HAT_LOCAL_MODEL_DIR or %(default)s)",
    )
    parser.add_argument(
        "--print-command",
        action="store_true",
        help="convert if needed, print the server command, and exit without starting it",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    os.environ.update(OFFLINE_ENV)
    try:
        checkpoint = ensure_local_checkpoint(args.model_dir)
    except PackagedModelMissing as exc:
        sys.exit(f"error: {exc}")
    command = transformers_serve_command(checkpoint.path, args.host, args.port)
    verb = "converted" if checkpoint.converted_now else "reusing"
    print(
        f"model worker: {verb} {checkpoint.path} ({checkpoint.seconds:.1f} s); serving on "
        f"http://{args.host}:{args.port}/v1 as model {served_model_id(checkpoint.path)!r}",
        flush=True,
    )
    if args.print_command:
        print(" ".join(command))
        return
    os.execve(command[0], command, server_environment())


if __name__ == "__main__":
    main()
