"""Print the `vllm serve` command line that serves one model endpoint.

    manage.py vllm_command --endpoint qwen-moe [--gpu-memory-utilization 0.85] [--model DIR]

It only prints (shell-quoted, ready to paste on the GPU machine); it never starts anything.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from training_app import selectors


class Command(BaseCommand):
    help = "Print the shell-quoted `vllm serve` command for a model endpoint."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--endpoint", required=True, help="the model endpoint's name")
        parser.add_argument(
            "--gpu-memory-utilization",
            type=float,
            default=None,
            help="share of GPU memory vLLM may take, in (0, 1] (profile default: 0.9)",
        )
        parser.add_argument(
            "--model",
            default=None,
            help="weights to serve (hub id or local directory); default: the endpoint's model name",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["endpoint"]
        endpoint = selectors.endpoint_get_by_name(name)
        if endpoint is None:
            known = ", ".join(selectors.endpoints_list().values_list("name", flat=True))
            raise CommandError(
                f"no model endpoint named {name!r}; known endpoints: {known or 'none'}"
            )
        try:
            line = selectors.endpoint_vllm_command(
                endpoint,
                model=options["model"],
                gpu_memory_utilization=options["gpu_memory_utilization"],
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(line)
