"""A judge is data: backend, model, prompt version and parameters (never an API key).

Two configurations that would send the same request share a fingerprint; the runner's cache is
keyed by (fingerprint, prompt), so repeating a run costs nothing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

DEFAULT_PROMPT = "flask-v1"


@dataclass(frozen=True)
class JudgeConfig:
    backend: str  # a name in judges.backends.BACKENDS: "openai" or "transformers"
    model: str  # API model name, or a local path / cached hub name for transformers
    prompt_version: str = DEFAULT_PROMPT  # a file in judges/templates, or "file:PATH[#id]"
    rubric: str = "store"  # the store's skills table, or "file:PATH" (FLASK's skillset JSON)
    base_url: str | None = None  # openai: else $OPENAI_BASE_URL, else the SDK's default
    temperature: float = 0.0
    max_tokens: int = 1024
    use_reference: bool = True  # give the reference answer when the instance has one
    structured: bool = False  # ask for a JSON object (response_format) where supported
    api_key_env: str = "OPENAI_API_KEY"  # the variable that holds the key, not the key
    # Send that key to ``base_url`` even when it is not the operator's $OPENAI_BASE_URL: true
    # from the command line (the operator typed it), false from the app (a visitor typed it).
    trust_base_url: bool = True
    name: str | None = None  # the judge's name in the store (default: derived)
    timeout_s: float = 60.0  # per call
    device: str | None = None  # transformers: "cpu", "cuda" or None (cuda when available)
    batch_size: int = 8  # transformers: prompts per generate() call

    @property
    def judge(self) -> str:
        if self.name:
            return self.name
        extra = [] if self.rubric == "store" else [f"rubric {Path(self.rubric[5:]).name}"]
        extra += [] if self.use_reference else ["no reference"]
        # Settings that change answers are in the name, so one name means one configuration.
        extra += [f"t={self.temperature:g}"] if self.temperature else []
        extra += [] if self.max_tokens == 1024 else [f"max {self.max_tokens} tokens"]
        extra += ["json"] if self.structured else []
        return f"{self.model} ({', '.join([self.backend, self.prompt_version, *extra])})"

    def fingerprint(self) -> dict:
        """What changes the judge's answers: not speed settings, never credentials, and not
        the server (a local server on a new port is the same judge; give two servers that
        serve different models under one name different ``name``s)."""
        keep = ("backend", "model", "prompt_version", "rubric", "temperature")
        d = {k: v for k, v in asdict(self).items() if k in keep}
        extra = {"max_tokens": self.max_tokens, "use_reference": self.use_reference}
        d = d | extra | {"structured": self.structured}
        # Sampling: another name is another sample (self-consistency, judge-vs-itself
        # agreement), so answers are reused only under the same name.
        return d | {"name": self.judge} if self.temperature > 0 else d

    def params_json(self) -> str:
        return json.dumps(self.fingerprint(), sort_keys=True)


def cache_key(config: JudgeConfig, messages: list[dict]) -> str:
    """Content key of one call: the same prompt to the same configuration is never re-paid."""
    blob = json.dumps([config.fingerprint(), messages], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()
