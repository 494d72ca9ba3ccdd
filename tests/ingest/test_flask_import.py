"""Importing the real FLASK files: counts equal the files', both schemas, reviews, URL import."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from analysis.core.errors import FetchError
from analysis.core.store import Store
from analysis.core.taxonomy import normalise_skill
from analysis.ingest.flask_source import import_flask
from tests.flask_fixtures import link_flask, write_reviews
from tests.http_fixtures import FolderServer


def _raw(flask_dir, rel):
    return [json.loads(line) for line in (flask_dir / rel).open(encoding="utf-8")]


def _query(store: Store, sql: str, params=()):
    with store.read() as con:
        return con.execute(sql, list(params)).fetchall()


def test_counts_equal_the_files(flask_db, flask_dir):
    store = Store(flask_db)
    rows = _raw(flask_dir, "evaluation_set/flask_evaluation.jsonl")
    assert _query(store, "SELECT dataset, count(*) FROM instances GROUP BY 1 ORDER BY 1") == [
        ("flask", 1740), ("flask-hard", 89)]  # fmt: skip
    assert _query(store, "SELECT count(DISTINCT model), count(*) FROM responses "
                  "WHERE dataset = 'flask'") == [(15, 15 * 1700)]  # fmt: skip
    per_model = _query(store, "SELECT model, count(*) FROM responses WHERE dataset='flask' "
                       "GROUP BY 1")  # fmt: skip
    assert {n for _, n in per_model} == {1700}
    # Skill counts: independently from the raw file, via the same taxonomy spelling map.
    expected = Counter(normalise_skill(s) for r in rows for s in r["skill"])
    got = dict(_query(store, "SELECT s, count(*) FROM (SELECT unnest(skills) s FROM instances "
                      "WHERE dataset = 'flask') GROUP BY 1"))  # fmt: skip
    assert got == dict(expected)
    assert got["comprehension"] == 1168 and got["harmlessness"] == 145
    domains = Counter(d for r in rows for d in r["domain"] if d != "-1")
    got_d = dict(_query(store, "SELECT d, count(*) FROM (SELECT unnest(domains) d FROM "
                        "instances WHERE dataset = 'flask') GROUP BY 1"))  # fmt: skip
    assert got_d == dict(domains)
    levels = {"simple lifestyle knowledge": 1, "advanced lifestyle knowledge": 2,
              "formal education knowledge": 3, "major level knowledge": 4,
              "expert level knowledge": 5}  # fmt: skip
    diff = Counter(levels.get(r["difficulty"]) for r in rows)
    got_l = dict(_query(store, "SELECT difficulty, count(*) FROM instances "
                        "WHERE dataset = 'flask' GROUP BY 1"))  # fmt: skip
    assert got_l == dict(diff) and got_l[None] == 2


def test_missing_responses_are_reported_not_fatal(flask_dir, tmp_path):
    report = import_flask(Store(tmp_path / "s.duckdb"), str(flask_dir))
    assert report.missing_responses == 40 * 15  # ids 1701-1740 have no outputs
    assert report.counts["FLASK instances"] == 1740


def test_old_schema_yields_same_instances(flask_dir, flask_db, tmp_path):
    old = link_flask(flask_dir, tmp_path / "old", old_schema=True)
    store = Store(tmp_path / "old.duckdb")
    import_flask(store, str(old))
    cols = "dataset, instance_id, instruction, reference, source_task, difficulty, domains, skills"
    sql = f"SELECT {cols} FROM instances ORDER BY dataset, instance_id"
    old_rows = _query(store, sql)
    new_rows = {(r[0], r[1]): r for r in _query(Store(flask_db), sql)}
    assert len(old_rows) == 1700 + 65
    assert all(new_rows[(r[0], r[1])] == r for r in old_rows)


def test_reimport_is_idempotent(flask_store, flask_dir):
    before = _query(flask_store, "SELECT (SELECT count(*) FROM instances), "
                    "(SELECT count(*) FROM responses), (SELECT count(*) FROM scores)")  # fmt: skip
    import_flask(flask_store, str(flask_dir))
    after = _query(flask_store, "SELECT (SELECT count(*) FROM instances), "
                   "(SELECT count(*) FROM responses), (SELECT count(*) FROM scores)")  # fmt: skip
    assert before == after


def test_review_files_follow_flask_rule(flask_dir, tmp_path):
    root = link_flask(flask_dir, tmp_path / "repo")
    reviews = write_reviews(flask_dir, root, {"gpt4": "gpt4_review.jsonl",
                                              "vicuna_13b": "vicuna_13b.jsonl"})  # fmt: skip
    store = Store(tmp_path / "r.duckdb")
    report = import_flask(store, str(root))
    # FLASK's rule, computed here independently: per model and skill, the mean over non-N/A.
    expected = {}
    failures = 0
    for model, rows in reviews.items():
        failures += sum(1 for r in rows if r["score"] == {})
        per = {}
        for r in rows:
            for skill, v in r["score"].items():
                if v != "N/A":
                    per.setdefault(normalise_skill(skill), []).append(v)
        for skill, vals in per.items():
            expected[(model, skill)] = sum(vals) / len(vals)
    got = _query(store, "SELECT model, skill, avg(score) FROM latest_scores "
                 "WHERE judge = 'gpt-4 (FLASK review)' GROUP BY 1, 2")  # fmt: skip
    assert {(m, s): pytest.approx(v) for m, s, v in got} == expected
    assert report.parse_failures == failures > 0
    assert _query(store, "SELECT count(*) FROM judgments WHERE parse_status = 'failed'") == [
        (failures,)]  # fmt: skip
    n_na = sum(1 for rows in reviews.values() for r in rows for v in r["score"].values()
               if v == "N/A")  # fmt: skip
    assert _query(store, "SELECT count(*) FROM scores WHERE score IS NULL") == [(n_na,)]
    # Raw judge text is kept so parsing can be redone.
    assert _query(store, "SELECT count(*) FROM judgments WHERE raw_output IS NULL") == [(0,)]
    # Same files again: nothing new.
    import_flask(store, str(root))
    assert _query(store, "SELECT count(*) FROM scores") == [
        (sum(len(r["score"]) for rows in reviews.values() for r in rows),)]  # fmt: skip


def test_import_from_url(flask_dir, flask_db, tmp_path, monkeypatch):
    monkeypatch.setenv("FINEGRAIN_ALLOW_PRIVATE_URLS", "1")  # loopback is refused by default
    store = Store(tmp_path / "u.duckdb")
    seen = []
    with FolderServer(flask_dir) as url:
        report = import_flask(store, url, progress=lambda d, t, label: seen.append((d, t)))
    assert report.counts["FLASK instances"] == 1740
    assert report.counts["responses"] == 25500
    assert seen and seen[-1][0] == seen[-1][1]  # progress reached the end
    cols = "dataset, instance_id, instruction, skills"
    sql = f"SELECT {cols} FROM instances ORDER BY ALL"
    assert _query(store, sql) == _query(Store(flask_db), sql)
    source = _query(store, "SELECT source FROM datasets WHERE dataset = 'flask'")[0][0]
    assert source.startswith("http://127.0.0.1")


def test_url_404_fails_clearly(flask_dir, tmp_path):
    store = Store(tmp_path / "u.duckdb")
    with FolderServer(flask_dir) as url, pytest.raises(FetchError) as err:
        import_flask(store, url + "/no-such-branch", trusted=True)  # the CLI: details
    assert "HTTP 404" in err.value.message
    assert "evaluation_set/flask_evaluation.jsonl" in err.value.message
    assert not store.exists() or _query(store, "SELECT count(*) FROM instances") == [(0,)]


def test_url_truncated_download_fails_clearly(flask_dir, tmp_path):
    store = Store(tmp_path / "u.duckdb")
    with FolderServer(flask_dir, truncate=("gpt4.jsonl",)) as url, \
            pytest.raises(FetchError) as err:  # fmt: skip
        import_flask(store, url, trusted=True)
    assert "gpt4.jsonl" in err.value.message
    assert "cut off" in err.value.message or "truncated" in err.value.message
    assert not store.exists() or _query(store, "SELECT count(*) FROM responses") == [(0,)]


def test_flask_hard_shares_full_set_responses(flask_db):
    store = Store(flask_db)
    hard_flagged = _query(store, "SELECT count(*) FROM instances WHERE dataset='flask' "
                          "AND flask_hard")[0][0]  # fmt: skip
    assert hard_flagged == 88
    same = _query(store, """
        SELECT count(*) FROM responses h
        JOIN instances ih ON ih.dataset = h.dataset AND ih.instance_id = h.instance_id
        JOIN instances i ON i.dataset = 'flask' AND i.instruction = ih.instruction
        JOIN responses r ON r.dataset = 'flask' AND r.instance_id = i.instance_id
                        AND r.model = h.model AND r.text = h.text
        WHERE h.dataset = 'flask-hard'""")[0][0]  # fmt: skip
    total = _query(store, "SELECT count(*) FROM responses WHERE dataset='flask-hard'")[0][0]
    assert same == total > 0


@pytest.mark.parametrize(
    ("score", "parsed", "failed"),
    [
        ({"logical correctness": 4, "readability": "N/A"},
         {"correctness": 4.0, "readability": None}, False),
        ({"Logical Robustness": "3", "commonsense understanding": 5},
         {"robustness": 3.0, "commonsense": 5.0}, False),
        ({"robustness": "n/a"}, {"robustness": None}, False),
        ({}, {}, True),
        ({"readability": True}, {}, True),  # a boolean is not a score (float(True) == 1.0)
        ({"readability": 6}, {}, True),
        ({"readability": 0}, {}, True),
        ({"readability": "good"}, {}, True),
        ({"creativity": 4}, {}, True),
        ({"readability": None}, {}, True),
    ],
)  # fmt: skip
def test_parse_review_score_table(score, parsed, failed):
    from analysis.ingest.flask_files import parse_review_score

    got, error = parse_review_score(score)
    assert got == parsed
    assert (error is not None) == failed


def test_score_file_never_overwrites_stored_instance_text(empty_store, tmp_path):
    from analysis.ingest.score_files import import_scores

    first = tmp_path / "a.csv"
    first.write_text("instance_id,model,skill,score,instruction,response\n"
                     "q1,m,correctness,4,Original instruction,Original answer\n")  # fmt: skip
    second = tmp_path / "b.csv"
    second.write_text("instance_id,model,skill,score,instruction,response\n"
                      "q1,m,factuality,3,Other text,Other answer\n")  # fmt: skip
    import_scores(empty_store, first, judge="j1", dataset="d")
    import_scores(empty_store, second, judge="j2", dataset="d")
    rows = _query(empty_store, "SELECT i.instruction, r.text, list_sort(i.skills) FROM instances i "
                  "JOIN responses r USING (dataset, instance_id)")  # fmt: skip
    assert rows == [("Original instruction", "Original answer", ["correctness", "factuality"])]


def test_repeated_review_rows_count_once_and_conflicts_fail(flask_dir, tmp_path):
    from analysis.core.errors import InputError
    from analysis.ingest.flask_files import REVIEWS_DIR

    root = link_flask(flask_dir, tmp_path / "repo")
    reviews = write_reviews(flask_dir, root, {"gpt4": "gpt4_review.jsonl"}, n=10)
    path = root / REVIEWS_DIR / "gpt4_review.jsonl"
    rows = reviews["gpt4"]
    path.write_text("".join(json.dumps(r) + "\n" for r in [*rows, rows[3]]))  # exact repeat
    store = Store(tmp_path / "r.duckdb")
    import_flask(store, str(root))
    expected = sum(len(r["score"]) for r in rows)
    assert _query(store, "SELECT count(*) FROM latest_scores")[0][0] == expected
    conflicting = {**rows[3], "review": "a different review"}
    path.write_text("".join(json.dumps(r) + "\n" for r in [*rows, conflicting]))
    with pytest.raises(InputError) as err:
        import_flask(store, str(root))
    assert err.value.line == 11 and err.value.field == "question_id"
    (root / REVIEWS_DIR / "gpt4.jsonl").write_text(path.read_text())
    with pytest.raises(InputError, match="two review files for gpt4"):
        import_flask(store, str(root))
