"""The transformers backend with tiny chat models built offline in a fixture: prompt → batched
generate → parse, both a parsed answer and a recorded parse failure; heavy imports stay lazy.
Needs the local-judge extra (torch, transformers): without it these tests skip, under CI=true
they fail. Without them the backend's own error is tested in test_local_judge_missing.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from analysis.core.store import Store
from analysis.ingest.score_files import import_scores
from judges.config import JudgeConfig
from judges.plan import Selection
from judges.runner import RunOptions, run
from tests.conftest import require_modules

REPO = Path(__file__).resolve().parents[2]
ANSWER = '{"correctness": 4}'  # what the answering model always says (its token id 0)
WORDS = "the a is of to and what add sum answer score response instruction reference".split()
LOCAL_JUDGE_FIX = "pip install -r requirements-local-judge.txt"


@pytest.fixture(scope="module")
def local_judge() -> None:
    """torch and transformers, an optional extra: skip without them (fail under CI=true)."""
    require_modules("torch", "transformers", fix=LOCAL_JUDGE_FIX)


def _build(folder: Path, *, first: str) -> Path:
    """A 1-layer Llama whose zeroed output layer makes greedy decoding repeat token 0,
    ``first``: a score object (parsed) or a plain word (a parse failure)."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {first: 0, "<pad>": 1, "<eos>": 2, "<unk>": 3}
    for w in WORDS:
        vocab.setdefault(w, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", eos_token="<eos>"
    )
    fast.chat_template = (
        "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}assistant:"
    )
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=len(vocab), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=4096,
        pad_token_id=1, bos_token_id=2, eos_token_id=2,
    )  # fmt: skip
    model = LlamaForCausalLM(cfg)
    with torch.no_grad():
        model.lm_head.weight.zero_()  # every logit 0: greedy decoding picks token 0
    model.save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def answering_model(local_judge, tmp_path_factory) -> Path:
    return _build(tmp_path_factory.mktemp("answering"), first=ANSWER)


@pytest.fixture(scope="module")
def babbling_model(local_judge, tmp_path_factory) -> Path:
    return _build(tmp_path_factory.mktemp("babbling"), first="blah")


@pytest.fixture
def store(tmp_path) -> Store:
    rows = [
        dict(instance_id=f"q{i}", model=m, skill="correctness", judge="h", kind="human", score=3,
             instruction=f"what is the sum of {i} and {i}",
             # m1 and m2 answer q0 word for word: one prompt, one call, two judgments
             response=f"the answer is {2 * i}" if m == "m1" or i == 0 else f"sum is {i}",
             reference=str(2 * i))
        for i in range(3)
        for m in ("m1", "m2")
    ]  # fmt: skip
    pd.DataFrame(rows).to_csv(tmp_path / "t.csv", index=False)
    s = Store(tmp_path / "local.duckdb")
    import_scores(s, tmp_path / "t.csv", dataset="tiny")
    return s


def _rows(store: Store, judge: str) -> list[tuple]:
    con = duckdb.connect(str(store.path), read_only=True)
    try:
        return con.execute(
            "SELECT j.parse_status, j.raw_output, j.error, j.prompt_tokens, j.completion_tokens, "
            "s.score FROM judgments j LEFT JOIN latest_scores s USING (judgment_id) "
            "WHERE j.judge = ? ORDER BY j.instance_id, j.model",
            [judge],
        ).fetchall()
    finally:
        con.close()


def test_local_model_prompt_generate_parse(store, answering_model):
    cfg = JudgeConfig(
        "transformers", str(answering_model), max_tokens=3, batch_size=4, device="cpu",
        name="tiny-local",
    )  # fmt: skip
    s = run(store, cfg, Selection("tiny"), RunOptions(concurrency=6))
    assert s.calls == 5 and s.ok == 5 and s.cache_hits == 1  # q0's twin answers share a call
    assert s.failed == 0 and s.errors == 0 and s.cost_usd == 0
    rows = _rows(store, "tiny-local")
    assert len(rows) == 6
    for status, raw, error, pt, ct, score in rows:
        assert status == "ok" and error is None and score == 4.0
        assert raw.count(ANSWER) == 3  # three greedy tokens, each the score object
        assert ct in (0, 3) and (pt > 50 or ct == 0)  # the rubric prompt in, 3 tokens out
    assert sum(r[4] for r in rows) == 15  # tokens counted once per call, not per twin
    again = run(store, cfg, Selection("tiny"), RunOptions(concurrency=6))
    assert again.calls == 0 and again.cache_hits == 6


def test_local_model_babble_is_a_recorded_parse_failure(store, babbling_model):
    cfg = JudgeConfig(
        "transformers", str(babbling_model), max_tokens=6, device="cpu", name="babble"
    )
    s = run(store, cfg, Selection("tiny", models=("m1",), limit=2), RunOptions(concurrency=2))
    assert s.failed == 2 and s.ok == 0
    for status, raw, error, _pt, ct, score in _rows(store, "babble"):
        assert status == "failed" and score is None  # never a default score
        assert raw and error and ct == 6


@pytest.mark.usefixtures("local_judge")
def test_missing_local_model_says_so(store, tmp_path):
    cfg = JudgeConfig("transformers", str(tmp_path / "nowhere"), name="ghost")
    from judges.backends import CallError

    with pytest.raises(CallError, match="not found locally"):
        run(store, cfg, Selection("tiny", limit=1))


def test_torch_and_transformers_are_imported_only_by_the_local_backend():
    code = (
        "import sys, analysis.cli.main, analysis.cli.judge, judges.runner, judges.plan\n"
        "import judges.backends.openai_compat\n"
        "heavy = [m for m in ('torch', 'transformers') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, timeout=60)
