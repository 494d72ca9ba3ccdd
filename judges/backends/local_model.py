"""A local chat model through transformers (offline: a path or a model already in the cache),
on CPU or CUDA. Concurrent calls are gathered into batches for ``generate``; torch and
transformers are imported only when this backend is created."""

from __future__ import annotations

import asyncio
import time

from analysis.core.errors import MissingExtraError
from judges.backends import CallError, Completion
from judges.config import JudgeConfig

# The local judge's packages are an extra: a README install has neither.
INSTALL_HINT = (
    "Install them with `pip install -r requirements-local-judge.txt` (in a source checkout) or "
    '`pip install "finegrain[local-judge]"`, or use the openai backend.'
)

_PLAIN_TEMPLATE = (  # for models without a chat template
    "{% for m in messages %}{{ m['role'] | capitalize }}: {{ m['content'] }}\n{% endfor %}"
    "Assistant:"
)


class LocalModelBackend:
    def __init__(self, config: JudgeConfig) -> None:
        torch, transformers = _import_torch_and_transformers()
        self.config, self.torch = config, torch
        try:
            self.tok = transformers.AutoTokenizer.from_pretrained(
                config.model, local_files_only=True
            )
            self.model = transformers.AutoModelForCausalLM.from_pretrained(
                config.model, local_files_only=True
            )
        except OSError as e:
            raise CallError(
                f"Model '{config.model}' was not found locally. Give a folder with the model, "
                "or download it once (the judge runs offline).",
                retryable=False,
            ) from e
        self.device = config.device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device).eval()
        self.tok.padding_side = "left"  # decoder-only: pad on the left for batched generation
        if self.tok.pad_token is None:
            self.tok.pad_token = self.tok.eos_token
        if not getattr(self.tok, "chat_template", None):
            self.tok.chat_template = _PLAIN_TEMPLATE
        self.queue: asyncio.Queue | None = None
        self.worker: asyncio.Task | None = None

    async def complete(self, messages: list[dict]) -> Completion:
        if self.queue is None:
            self.queue = asyncio.Queue()
            self.worker = asyncio.create_task(self._batches())
        fut = asyncio.get_running_loop().create_future()
        await self.queue.put((messages, fut))
        return await fut

    async def _batches(self) -> None:
        assert self.queue is not None
        loop = asyncio.get_running_loop()
        while True:
            batch = [await self.queue.get()]
            await asyncio.sleep(0)  # let the callers that are ready join this batch
            while len(batch) < self.config.batch_size and not self.queue.empty():
                batch.append(self.queue.get_nowait())
            live = [(m, f) for m, f in batch if not f.cancelled()]
            try:
                outs = await loop.run_in_executor(None, self.generate, [m for m, _ in live])
                for (_, f), out in zip(live, outs, strict=True):
                    if not f.done():
                        f.set_result(out)
            except Exception as e:  # noqa: BLE001 - every waiting caller gets the error
                err = CallError(f"generation failed ({type(e).__name__}: {e})", retryable=False)
                for _, f in live:
                    if not f.done():
                        f.set_exception(err)

    def generate(self, batch: list[list[dict]]) -> list[Completion]:
        """One batched ``generate`` call (blocking; runs in a worker thread)."""
        if not batch:
            return []
        c, torch = self.config, self.torch
        prompts = [
            self.tok.apply_chat_template(m, tokenize=False, add_generation_prompt=True)
            for m in batch
        ]
        enc = self.tok(prompts, return_tensors="pt", padding=True).to(self.device)
        sample = c.temperature > 0
        start = time.perf_counter()
        with torch.no_grad():
            out = self.model.generate(
                **enc,
                max_new_tokens=c.max_tokens,
                do_sample=sample,
                temperature=c.temperature if sample else None,
                top_p=None,
                top_k=None,
                pad_token_id=self.tok.pad_token_id,
            )
        latency = (time.perf_counter() - start) * 1000
        new = out[:, enc["input_ids"].shape[1] :]
        texts = self.tok.batch_decode(new, skip_special_tokens=True)
        prompt_tokens = enc["attention_mask"].sum(dim=1).tolist()
        new_tokens = (new != self.tok.pad_token_id).sum(dim=1).tolist()
        return [
            Completion(t, int(p), int(n), latency)
            for t, p, n in zip(texts, prompt_tokens, new_tokens, strict=True)
        ]

    async def aclose(self) -> None:
        if self.worker:
            self.worker.cancel()


def _import_torch_and_transformers() -> tuple:
    """Imported here, when a local judge is first used, so the rest never pays for them."""
    try:
        import torch
        import transformers
    except ImportError as e:
        raise MissingExtraError(
            f"The transformers judge backend needs torch and transformers, which could not be "
            f"imported ({e}). {INSTALL_HINT}"
        ) from e
    return torch, transformers


def create(config: JudgeConfig, *, concurrency: int = 1) -> LocalModelBackend:
    del concurrency  # one model in this process: the runner's semaphore bounds the calls
    return LocalModelBackend(config)


def check_available() -> None:
    """Before a run writes anything: torch and transformers must import (cached afterwards)."""
    _import_torch_and_transformers()
