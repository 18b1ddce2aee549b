"""Checkpoint surgery the trainers do not do: carry the base model's MTP head into a trained
checkpoint.

Backbones served with multi-token prediction (vLLM speculative decoding, e.g. Qwen3-Next /
Qwen3.6 ``mtp.*`` tensors) keep the MTP head in their safetensors, but the transformers model
class does not load it, so a fine-tuned ``save_pretrained`` drops it and vLLM can no longer
speculate. ``copy_mtp_weights`` writes the base's ``mtp.*`` tensors, unchanged, into
``model-mtp.safetensors`` next to the trained weights and lists them in the safetensors index
(created when the trainer wrote a single file), which is what vLLM reads to find weights.
"""

from __future__ import annotations

import json
from pathlib import Path

MTP_PREFIX = "mtp."
MTP_FILE = "model-mtp.safetensors"
INDEX_FILE = "model.safetensors.index.json"
SINGLE_FILE = "model.safetensors"


def _weight_files(model_dir: Path) -> list[Path]:
    return sorted(p for p in model_dir.glob("*.safetensors") if p.name != MTP_FILE) + (
        [model_dir / MTP_FILE] if (model_dir / MTP_FILE).is_file() else []
    )


def mtp_tensor_names(model_dir: Path) -> list[str]:
    """Names of the ``mtp.*`` tensors in the checkpoint's safetensors files."""
    from safetensors import safe_open

    names: list[str] = []
    for path in _weight_files(model_dir):
        with safe_open(str(path), framework="pt") as handle:
            names.extend(k for k in handle.keys() if k.startswith(MTP_PREFIX))  # noqa: SIM118
    return sorted(set(names))


def copy_mtp_weights(base_dir: Path, target_dir: Path) -> int:
    """Copy ``base_dir``'s ``mtp.*`` tensors into ``target_dir``; returns how many (0: the
    base has none, nothing is written)."""
    from safetensors import safe_open
    from safetensors.torch import save_file

    tensors = {}
    for path in _weight_files(base_dir):
        with safe_open(str(path), framework="pt") as handle:
            for name in handle.keys():  # noqa: SIM118
                if name.startswith(MTP_PREFIX):
                    tensors[name] = handle.get_tensor(name)
    if not tensors:
        return 0
    save_file(tensors, str(target_dir / MTP_FILE), metadata={"format": "pt"})
    index_path = target_dir / INDEX_FILE
    if index_path.is_file():
        index = json.loads(index_path.read_text())
    else:
        weight_map: dict[str, str] = {}
        single = target_dir / SINGLE_FILE
        if single.is_file():
            with safe_open(str(single), framework="pt") as handle:
                weight_map = dict.fromkeys(handle.keys(), SINGLE_FILE)
        index = {"metadata": {}, "weight_map": weight_map}
    index["weight_map"].update(dict.fromkeys(tensors, MTP_FILE))
    index_path.write_text(json.dumps(index, indent=2, sort_keys=True))
    return len(tensors)
