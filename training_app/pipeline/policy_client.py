"""The policy being trained, as the agent runtime's ``ChatModel``, recording the rollout as
one token sequence for GRPO.

``PolicyChatModel`` answers the agent's ``complete(messages, ...)`` calls with the HF model
and tokenizer (the chat template renders the conversation), sampling plain temperature
softmax (no top-k/top-p) so the recorded log-probabilities are the ones GRPO recomputes.

One instance serves one rollout. The first call fixes the prompt (system + viewer comment,
rendered with the generation prompt). Every later call must extend the previous
conversation by the assistant message the agent appended plus what came after it (a tool
observation, retry feedback); the model is then fed *exactly* the previous tokens + its own
generated tokens + the template's bridge tokens (end of turn, the new messages, the next
generation prompt), never a re-tokenisation of its own text, so the flattened sequence is
the one it sampled from. ``completion_ids`` holds everything after the prompt; ``env_mask``
is 1 on tokens the model generated and 0 on bridge tokens (observations, template markup),
which GRPO keeps out of the loss; ``logprobs`` is the sampling log-probability of each
generated token (0.0 on bridge tokens).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inference.agents.model_answer import AnswerUsage, ModelAnswer
from inference.agents.model_port import ModelCallFailed

_SENTINEL = "\u2063SENTINEL\u2063"


def turn_closing_text(tokenizer: Any) -> str:
    """What the chat template writes after an assistant message's content (ChatML:
    ``<|im_end|>\\n``), found by rendering a probe conversation."""
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": "x"}, {"role": "assistant", "content": _SENTINEL}],
        tokenize=False,
    )
    index = text.rfind(_SENTINEL)
    if index < 0:
        raise ValueError("the chat template does not render assistant content verbatim")
    return str(text[index + len(_SENTINEL) :])


class PolicyChatModel:
    name = "policy"

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        max_completion_tokens: int,
        max_prompt_tokens: int = 4096,
        closing_ids: Sequence[int] | None = None,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.max_completion_tokens = max_completion_tokens
        self.max_prompt_tokens = max_prompt_tokens
        if closing_ids is None:
            closing_ids = self._encode(turn_closing_text(tokenizer))
        self._closing_ids = list(closing_ids)
        self.prompt_ids: list[int] = []
        self.completion_ids: list[int] = []
        self.env_mask: list[int] = []
        self.logprobs: list[float] = []
        self.turn_texts: list[str] = []
        self._assistant_index: int | None = None

    # --- helpers ---------------------------------------------------------------------------

    def _encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _render(self, messages: list[dict[str, Any]], *, generation_prompt: bool) -> str:
        plain = [{"role": m["role"], "content": m.get("content") or ""} for m in messages]
        return str(
            self.tokenizer.apply_chat_template(
                plain, tokenize=False, add_generation_prompt=generation_prompt
            )
        )

    def _append(
        self, ids: Sequence[int], *, generated: bool, logprobs: Sequence[float] = ()
    ) -> None:
        self.completion_ids.extend(ids)
        self.env_mask.extend([1 if generated else 0] * len(ids))
        self.logprobs.extend(logprobs if generated else [0.0] * len(ids))

    def _bridge(self, messages: list[dict[str, Any]]) -> list[int]:
        """Tokens between the end of the last generation and the next one."""
        index = self._assistant_index
        if (
            index is None
            or len(messages) <= index + 1
            or messages[index].get("role") != "assistant"
        ):
            raise ModelCallFailed(
                "protocol",
                "a later call must extend the conversation by the assistant's answer and what "
                "followed it",
            )
        before = self._render(messages[: index + 1], generation_prompt=False)
        full = self._render(messages, generation_prompt=True)
        if not full.startswith(before):
            raise ModelCallFailed("protocol", "the chat template does not preserve prefixes")
        closing = list(self._closing_ids)
        last_turn = self.completion_ids[-1:] if self.completion_ids else []
        if closing and last_turn == closing[:1]:
            closing = closing[1:]  # the model ended its turn itself
        return closing + self._encode(full[len(before) :])

    # --- ChatModel -------------------------------------------------------------------------

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None,
        max_tokens: int,
        temperature: float,
        timeout_s: float,
    ) -> ModelAnswer:
        import torch

        if tools:
            raise ModelCallFailed("protocol", "the training policy runs in text tool mode only")
        if not self.prompt_ids:
            self.prompt_ids = self._encode(self._render(messages, generation_prompt=True))
            if len(self.prompt_ids) > self.max_prompt_tokens:
                raise ModelCallFailed(
                    "protocol",
                    f"the prompt has {len(self.prompt_ids)} tokens, over {self.max_prompt_tokens}",
                )
        else:
            bridge = self._bridge(messages)
            room = self.max_completion_tokens - len(self.completion_ids)
            # Never past the budget: an observation that does not fit is cut and ends the
            # rollout (the agent falls back), so the completion stays within GRPO's length.
            self._append(bridge[:room], generated=False)
        budget = self.max_completion_tokens - len(self.completion_ids)
        if budget <= 0:
            raise ModelCallFailed("protocol", "the rollout's token budget is spent")
        context = torch.tensor([self.prompt_ids + self.completion_ids], device=self.model.device)
        sampling = temperature > 0
        with torch.no_grad():
            out = self.model.generate(
                context,
                attention_mask=torch.ones_like(context),
                max_new_tokens=min(max_tokens, budget),
                do_sample=sampling,
                temperature=temperature if sampling else None,
                top_k=0 if sampling else None,
                top_p=1.0 if sampling else None,
                output_scores=True,
                return_dict_in_generate=True,
                pad_token_id=self.tokenizer.pad_token_id,
                eos_token_id=self.tokenizer.eos_token_id,
                use_cache=True,
            )
        generated = out.sequences[0, context.shape[1] :].tolist()
        logprobs = [
            float(torch.log_softmax(score[0].float(), dim=-1)[token])
            for score, token in zip(out.scores, generated, strict=False)
        ]
        # generate may pad after EOS: keep up to and including the first EOS
        eos = self.tokenizer.eos_token_id
        if eos in generated:
            cut = generated.index(eos) + 1
            generated, logprobs = generated[:cut], logprobs[:cut]
        self._append(generated, generated=True, logprobs=logprobs)
        self._assistant_index = len(messages)
        text = self.tokenizer.decode(generated, skip_special_tokens=True)
        self.turn_texts.append(text)
        return ModelAnswer(
            content=text,
            finish_reason="stop" if generated and generated[-1] == eos else "length",
            usage=AnswerUsage(int(context.shape[1]), len(generated)),
        )
