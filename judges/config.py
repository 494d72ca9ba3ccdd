"""A judge is data: backend, model, prompt version and parameters (never an API key).

Two configurations that would send the same request share a fingerprint; the runner's cache is
keyed by (fingerprint, prompt), so repeating a run costs nothing.

``JudgeConfig`` is also the one declaration of a judge's settings: each field carries a
``Setting`` (help, command-line flag, widget, bounds, who may set it). The ``judge`` command's
options, the Re-judge page's form and judge files (``judge --config judge.yaml``) are all derived
from it, so a new setting is declared once.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from pathlib import Path
from typing import Any

from analysis.core.errors import InputError
from analysis.core.names import check_name, optional_name
from analysis.ingest.file_checks import regular_file

DEFAULT_PROMPT = "flask-v1"
BACKEND_NAMES = ("openai", "openai-batch", "transformers")  # = judges.backends.BACKENDS (tested)
# Another backend's way to send calls: the same judge (name, fingerprint, cache keys) either way.
SAME_JUDGE_AS = {"openai-batch": "openai"}

FIELD_DEFAULT = object()  # a Setting's visitor_value: the field's own default


@dataclass(frozen=True)
class Setting:
    """How a ``JudgeConfig`` field is set. ``label`` is the Re-judge form's; a field without a
    label is not on the form. ``visitor``: whether someone using the app may choose the value;
    when not, a configuration built for a visitor gets ``visitor_value`` (default: the field's
    default). ``cli``: the operator sets it with a flag or in a judge file."""

    help: str
    flag: str = ""  # the command-line flag without dashes (default: the field name, dashed)
    label: str = ""
    widget: str = "text"  # text | choice | number | toggle | template | file
    choices: tuple[str, ...] = ()
    min: float | None = None
    max: float | None = None
    step: float | None = None
    backend: str | None = None  # used by this backend only
    env: str | None = None  # the backend's fallback variable (the form starts from its value)
    suggest: Any = None  # the form's starting value of a field without a default
    page_help: str = ""  # the form's help, where it differs (page-only restrictions)
    metavar: str = ""
    normalize: Callable[[Any], Any] | None = None  # a typed value → the field's value
    cli: bool = True
    file: bool = True  # may come from a judge file (someone else may have written it)
    pattern: str | None = None  # a regular expression the whole value must match
    visitor: bool = True
    visitor_value: Any = FIELD_DEFAULT

    @property
    def on_page(self) -> bool:
        return bool(self.label) and self.visitor


def _rubric(value: str) -> str:
    # A rubric is given as a path; the field holds "store" or "file:PATH".
    if value in ("", "store"):  # an empty --rubric meant the store's rubric before: keep it
        return "store"
    return value if value.startswith("file:") else f"file:{value}"


def _s(help: str, **kw: Any) -> dict[str, Setting]:
    return {"setting": Setting(help, **kw)}


@dataclass(frozen=True)
class JudgeConfig:
    # The order and defaults of these fields are part of stored fingerprints: never reorder.
    backend: str = field(
        metadata=_s("the judge's backend", label="Backend", widget="choice", choices=BACKEND_NAMES)
    )
    model: str = field(
        metadata=_s(
            "API model name, or (transformers) a local model folder or a cached hub name",
            label="Model",
            suggest="gpt-4o-mini",
            page_help="API model name; for transformers a cached hub name or a model folder in "
            "the store's folder",
            metavar="NAME",
        )
    )
    prompt_version: str = field(
        default=DEFAULT_PROMPT,
        metadata=_s(
            "prompt version (a template in judges/templates), or file:PATH[#id]",
            flag="prompt",
            label="Prompt version",
            widget="template",
            metavar="VERSION",
        ),
    )
    rubric: str = field(
        default="store",
        metadata=_s(
            "rubric file (FLASK's skillset_description.json), or store: the store's skills",
            label="Rubric file (optional)",
            widget="file",
            page_help="In the store's folder: FLASK's skillset_description.json; empty: ours",
            metavar="FILE",
            normalize=_rubric,
        ),
    )
    base_url: str | None = field(
        default=None,
        metadata=_s(
            "OpenAI-compatible server (default $OPENAI_BASE_URL, else OpenAI)",
            label="Base URL (OpenAI-compatible)",
            backend="openai",
            env="OPENAI_BASE_URL",
            page_help="Empty: OpenAI itself. vLLM, Ollama, llama.cpp and Azure servers work too.",
            metavar="URL",
        ),
    )
    temperature: float = field(
        default=0.0,
        metadata=_s(
            "sampling temperature", label="Temperature", widget="number", min=0.0, max=2.0, step=0.1
        ),
    )
    max_tokens: int = field(default=1024, metadata=_s("most tokens per answer", min=1))
    use_reference: bool = field(
        default=True,
        metadata=_s(
            "show the reference answer when the instance has one",
            flag="reference",
            label="Show reference answers",
            widget="toggle",
        ),
    )
    structured: bool = field(
        default=False,
        metadata=_s("ask for a JSON object response (response_format) where supported"),
    )
    api_key_env: str = field(
        default="OPENAI_API_KEY",
        metadata=_s(
            "the environment variable that holds the API key (never the key itself)",
            backend="openai",
            metavar="VAR",
            pattern=r"[A-Za-z_][A-Za-z0-9_]*",
            # Naming another variable sends its secret to the judge's server: only the operator
            # chooses it, with the flag; never a visitor, never a judge file someone shared.
            file=False,
            visitor=False,
        ),
    )
    # Send that key to ``base_url`` even when it is not the operator's $OPENAI_BASE_URL: true
    # from the command line (the operator typed it), false from the app (a visitor typed it).
    trust_base_url: bool = field(
        default=True,
        metadata=_s(
            "send the API key to a base URL other than $OPENAI_BASE_URL",
            cli=False,
            visitor=False,
            visitor_value=False,
        ),
    )
    name: str | None = field(
        default=None,
        metadata=_s(
            "the judge's name in the store (default: derived from the settings)",
            label="Judge name (optional)",
        ),
    )
    timeout_s: float = field(default=60.0, metadata=_s("seconds per call", flag="timeout", min=0.1))
    device: str | None = field(
        default=None,
        metadata=_s(
            "cpu or cuda (default: cuda if available)", backend="transformers", metavar="DEVICE"
        ),
    )
    batch_size: int = field(
        default=8, metadata=_s("prompts per batch", backend="transformers", min=1)
    )

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
        kind = SAME_JUDGE_AS.get(self.backend, self.backend)
        return f"{self.model} ({', '.join([kind, self.prompt_version, *extra])})"

    def fingerprint(self) -> dict:
        """What changes the judge's answers: not speed settings, never credentials, and not
        the server (a local server on a new port is the same judge; give two servers that
        serve different models under one name different ``name``s)."""
        keep = ("backend", "model", "prompt_version", "rubric", "temperature")
        d = {k: getattr(self, k) for k in keep}  # not asdict(): it copies every field, per call
        d["backend"] = SAME_JUDGE_AS.get(self.backend, self.backend)
        d |= {"max_tokens": self.max_tokens, "use_reference": self.use_reference,
              "structured": self.structured}  # fmt: skip
        # Sampling: another name is another sample (self-consistency, judge-vs-itself
        # agreement), so answers are reused only under the same name.
        return d | {"name": self.judge} if self.temperature > 0 else d

    def params_json(self) -> str:
        return json.dumps(self.fingerprint(), sort_keys=True)

    @classmethod
    def from_mapping(cls, data: object, source: str, *, visitor: bool = False) -> JudgeConfig:
        """A configuration from ``{field name: value}`` (a judge file, flags, the page's form),
        checked against the declaration; ``source`` names where it came from in errors. For a
        ``visitor`` of the app, fields a visitor may not set get their ``visitor_value``."""
        values = check_settings(data, source, operator=not visitor)
        for name in required():
            if values.get(name) in (None, ""):
                raise InputError(source, None, name, "missing: a judge needs a backend and a model")
        if visitor:
            values |= {f.name: _visitor_value(f) for f, s in declared() if not s.visitor}
        values["name"] = optional_name("judge", values.get("name"), source=source, field="name")
        config = cls(**values)  # a derived name holds the model's: "kind:…" there counts too
        check_name("judge", config.judge, source=source, field="name" if config.name else "model")
        return config


def cache_key(config: JudgeConfig, messages: list[dict], repeat: int | None = None) -> str:
    """Content key of one call: the same prompt to the same configuration is never re-paid.
    ``repeat``: a repeat run's number (judges/repeat.py): keys of its own; None: the old keys."""
    extra = {} if repeat is None else {"repeat": repeat}
    blob = json.dumps([config.fingerprint() | extra, messages], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


# --- the declaration, read back ------------------------------------------------------------


def declared() -> list[tuple[Field[Any], Setting]]:
    """Every field of ``JudgeConfig`` with its ``Setting``, in declaration order."""
    return [(f, f.metadata["setting"]) for f in fields(JudgeConfig)]


def declared_setting(name: str) -> Setting:
    return next(s for f, s in declared() if f.name == name)


def operator_settings() -> list[tuple[Field[Any], Setting]]:
    """What the command line and judge files set (everything but where-it-runs fields)."""
    return [(f, s) for f, s in declared() if s.cli]


def page_settings() -> list[tuple[Field[Any], Setting]]:
    """What the Re-judge form shows: labelled fields a visitor may set."""
    return [(f, s) for f, s in declared() if s.on_page]


def required() -> list[str]:
    """The fields without a default: a judge needs them (backend and model)."""
    return [f.name for f in fields(JudgeConfig) if f.default is MISSING]


def default(name: str) -> Any:
    """A field's default (``None`` for the required backend and model)."""
    f = next(f for f in fields(JudgeConfig) if f.name == name)
    return None if f.default is MISSING else f.default


def flag(f: Field[Any], s: Setting) -> str:
    return s.flag or f.name.replace("_", "-")


def value_type(name: str) -> tuple[type, bool]:
    """A field's type and whether it may be None (``str | None`` → ``(str, True)``)."""
    hint = _HINTS[name]
    if isinstance(hint, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return args[0], True
    return hint, False


_HINTS = typing.get_type_hints(JudgeConfig)


def _visitor_value(f: Field[Any]) -> Any:
    s = f.metadata["setting"]
    return default(f.name) if s.visitor_value is FIELD_DEFAULT else s.visitor_value


# --- checking values from outside ----------------------------------------------------------

_TYPE_WORDS = {str: "a string", int: "a whole number", float: "a number", bool: "true or false"}


def check_settings(data: object, source: str, *, operator: bool = True) -> dict[str, Any]:
    """``data`` as checked field values: a mapping of known settings, each of the declared type
    and within its choices and bounds. Raises an ``InputError`` naming ``source`` and the field."""
    if not isinstance(data, Mapping):
        raise InputError(
            source, None, None,
            f"expected a mapping of settings (such as 'backend: openai'), got {_kind(data)}",
        )  # fmt: skip
    who = operator_settings() if operator else page_settings()
    allowed = {f.name: s for f, s in who}
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key not in allowed:
            raise InputError(source, None, str(key), _unknown(str(key), allowed))
        out[key] = _check_value(key, allowed[key], value, source)
    return out


def _unknown(key: str, allowed: Mapping[str, Setting]) -> str:
    if key in {f.name for f in fields(JudgeConfig)}:
        return "not a setting here: it depends on where the judge runs (command line or app)"
    near = difflib.get_close_matches(key, list(allowed), n=1)
    hint = f"did you mean '{near[0]}'? " if near else ""
    return f"unknown setting; {hint}known settings: {', '.join(allowed)}"


def _check_value(name: str, s: Setting, value: Any, source: str) -> Any:
    kind, optional = value_type(name)
    if value is None:
        if optional:
            return None
        raise InputError(source, None, name, f"expected {_TYPE_WORDS[kind]}, got nothing")
    if not _is(value, kind):
        raise InputError(source, None, name, f"expected {_TYPE_WORDS[kind]}, got {_kind(value)}")
    value = float(value) if kind is float else value
    if s.pattern and not re.fullmatch(s.pattern, value):
        # Not echoed: a key pasted where its variable's name belongs must not reach a log.
        raise InputError(source, None, name, "expected an environment variable's name")
    if s.choices and value not in s.choices:
        raise InputError(
            source, None, name, f"expected one of {', '.join(s.choices)}, got {value!r}"
        )
    low = s.min if s.min is not None else float("-inf")
    high = s.max if s.max is not None else float("inf")
    if kind in (int, float) and not low <= value <= high:
        raise InputError(source, None, name, f"expected {_range(s)}, got {value:g}")
    return s.normalize(value) if s.normalize else value


def _is(value: Any, kind: type) -> bool:
    if isinstance(value, bool) or kind is bool:  # True is an int in Python, not in a file
        return isinstance(value, bool) and kind is bool
    if kind is float:
        return isinstance(value, int | float)
    return isinstance(value, kind)


def _range(s: Setting) -> str:
    if s.min is not None and s.max is not None:
        return f"a value from {s.min:g} to {s.max:g}"
    return f"at least {s.min:g}" if s.min is not None else f"at most {s.max:g}"


def _kind(value: Any) -> str:
    words = {str: "a string", bool: "a boolean", int: "an integer", float: "a number",
             list: "a list", dict: "a mapping", type(None): "nothing"}  # fmt: skip
    word = words.get(type(value), type(value).__name__)
    return f"{value!r} ({word})" if isinstance(value, str | int | float) else word


# --- judge files ----------------------------------------------------------------------------


def load_judge_file(path: str | Path, pool: dict | None = None) -> dict[str, Any]:
    """A judge file's checked settings (YAML, or JSON / TOML by suffix). Keys are the field
    names; paths in it are as on the command line (relative to the current folder). ``pool``:
    a ``base_url`` list (several servers, judges/endpoints.py) is moved there, unchecked."""
    source = str(path)
    try:  # a FIFO would block forever and /dev/zero never end: a regular file only
        regular_file(Path(path), source, expected="a judge file (YAML, JSON or TOML)", capped=False)
    except InputError as e:
        raise InputError(source, None, None, f"cannot read the judge file: {e.problem}") from e
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise InputError(source, None, None, f"cannot read the judge file: {reason}") from e
    data = _parse(text, source, Path(path).suffix.lower())
    if pool is not None and isinstance(data, dict) and isinstance(data.get("base_url"), list):
        pool["base_url"] = data.pop("base_url")
    settings = check_settings(data, source)
    for key in settings:
        if not declared_setting(key).file:
            raise InputError(source, None, key, "not allowed in a judge file: give it as a flag")
    return settings


def _parse(text: str, source: str, suffix: str) -> object:
    if suffix == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(source, e.lineno, None, f"not valid JSON: {e.msg}") from e
    if suffix == ".toml":
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise InputError(source, None, None, f"not valid TOML: {e}") from e
    import yaml  # here, not at the top: ``finegrain --help`` stays fast

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        line = e.problem_mark.line + 1 if getattr(e, "problem_mark", None) else None
        problem = getattr(e, "problem", None) or str(e)
        raise InputError(source, line, None, f"not valid YAML: {problem}") from e
