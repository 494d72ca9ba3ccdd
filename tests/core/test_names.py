"""One rule for the names people choose (analysis/core/names.py), through every way in: the
annotation view, ``import-scores`` (the judge column, ``--judge``, criteria) and ``judge``
(``--name``, a judge file, a derived name). Reserved ``kind:…`` names and names holding invisible
characters are refused with the field (and file and line) named and the store unchanged; an NFD
name is the NFC name; a criterion differing only in case from one of its dataset is refused."""

from __future__ import annotations

import json
import unicodedata

import pytest

from analysis.cli.main import main
from analysis.core.errors import InputError
from analysis.core.names import check_name
from analysis.core.store import Store
from analysis.views import annotate as annotation
from analysis.views.annotate import Answer
from tests.samples_fixtures import DATASET, write_mini

NFC = "Jos\u00e9"  # é as one code point
NFD = unicodedata.normalize("NFD", NFC)  # e + combining acute accent
assert NFD != NFC and len(NFD) == len(NFC) + 1

# (the name, what the refusal says). Every kind of name refuses these.
LOOK_ALIKES = [
    ("ali\u200bce", "U+200B ZERO WIDTH SPACE"),
    ("ali\u200dce", "U+200D ZERO WIDTH JOINER"),
    ("ali\ufeffce", "U+FEFF"),  # a BOM; import files also refuse it as one (same row refused)
    ("\u202eecila", "U+202E RIGHT-TO-LEFT OVERRIDE"),
    ("alice\u2066x\u2069", "U+2066 LEFT-TO-RIGHT ISOLATE"),
    ("ali\u200fce", "U+200F RIGHT-TO-LEFT MARK"),
    ("ali\u00a0ce", "U+00A0 NO-BREAK SPACE"),
    ("ali\tce", "U+0009"),
    ("ali\u3164ce", "U+3164 HANGUL FILLER"),
]
# Scorer names only: a group's name, in any case, width or spacing.
RESERVED = [
    "kind:llm",
    "kind:human",
    "KIND:llm",  # the pickers match "kind:" exactly, but it reads as the group: refused too
    "Kind:Human",
    " kind:llm ",
    "kind:",
    "kind:anything",
    "\uff4b\uff49\uff4e\uff44\uff1allm",  # fullwidth "ｋｉｎｄ：llm"
]
FINE = ["alice", NFC, "gpt-4 (openai, flask-v1, t=0.7)", "\u674e\u96f7", "mind:llm", "kindly"]


@pytest.mark.parametrize("kind", ["annotator", "judge", "criterion"])
@pytest.mark.parametrize(("name", "says"), LOOK_ALIKES)
def test_invisible_characters_are_refused_naming_the_character(kind, name, says):
    with pytest.raises(InputError) as e:
        check_name(kind, name, source="here", field="f")
    assert e.value.message.startswith("here, field 'f': ") and says in e.value.message
    assert "invisible or control character" in e.value.message


def test_a_lone_surrogate_is_refused_not_a_traceback():
    with pytest.raises(InputError, match="U\\+D800 a lone surrogate"):
        check_name("judge", "ali\ud800ce")


@pytest.mark.parametrize("kind", ["annotator", "judge"])
@pytest.mark.parametrize("name", RESERVED)
def test_reserved_scorer_names_are_refused(kind, name):
    with pytest.raises(InputError, match="is reserved: names starting with 'kind:'"):
        check_name(kind, name)


@pytest.mark.parametrize("name", [*FINE, NFD, "  alice  "])
def test_ordinary_names_come_back_as_nfc_and_stripped(name):
    expected = unicodedata.normalize("NFC", name).strip()  # the stdlib, not the code under test
    for kind in ("annotator", "judge", "criterion"):
        assert check_name(kind, name) == expected
    assert check_name("judge", NFD) == NFC


def test_a_criterion_may_start_with_kind():
    assert check_name("criterion", "kind:of") == "kind:of"  # no group of criteria by that name


# --- the annotation view ----------------------------------------------------------------------

SKILLS_3 = ("robustness", "correctness", "efficiency")  # instance 3 of the mini dataset
TABLES = ("judges", "runs", "judgments", "scores", "criteria")


def snapshot(store: Store) -> dict[str, list]:
    with store.read() as con:
        return {t: sorted(map(repr, con.execute(f"SELECT * FROM {t}").fetchall())) for t in TABLES}


@pytest.fixture
def mini(tmp_path) -> Store:
    s = Store(tmp_path / "names.duckdb")
    write_mini(s)
    return s


def _answer(name: str) -> Answer:
    return Answer(name, DATASET, "3", "beta", dict(zip(SKILLS_3, (4, None, 2), strict=True)))


@pytest.mark.parametrize(("name", "says"), [*LOOK_ALIKES, *((r, "is reserved") for r in RESERVED)])
def test_the_annotation_view_refuses_and_changes_nothing(mini, name, says):
    before = snapshot(mini)
    with pytest.raises(InputError) as e:
        annotation.save_answer(mini, _answer(name))
    assert e.value.field == "annotator" and says in e.value.message
    assert snapshot(mini) == before


def test_an_nfd_annotator_is_the_nfc_annotator(mini):
    annotation.save_answer(mini, _answer(NFC))
    annotation.save_answer(mini, _answer(NFD))
    with mini.read() as con:
        judges = con.execute("SELECT judge FROM judges WHERE kind = 'human'").fetchall()
        runs = con.execute("SELECT judge, n_items FROM runs WHERE judge LIKE 'Jos%'").fetchall()
    assert sorted(judges) == sorted([("human-x",), (NFC,)])
    assert runs == [(NFC, 2)]  # one annotator, one run, both answers
    assert annotation.check_annotator(NFD) == NFC  # the page reads progress under this name


# --- import-scores --------------------------------------------------------------------------


def _import(capsys, path, *args: str) -> tuple[int, str]:
    code = main(["import-scores", str(path), *args])
    return code, capsys.readouterr().err


def _csv(tmp_path, judge: str, skill: str = "correctness", name: str = "s.csv"):
    path = tmp_path / name
    path.write_text(
        f"instance_id,model,skill,score,judge\n3,beta,robustness,4,ok\n3,beta,{skill},3,{judge}\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize(
    ("name", "says"), [*LOOK_ALIKES, *((r.strip(), "is reserved") for r in RESERVED)]
)
def test_import_refuses_a_judge_column_naming_file_line_and_field(mini, tmp_path, capsys, name,
                                                                  says):  # fmt: skip
    path = _csv(tmp_path, name.replace("\t", "\u2028"))  # a tab would split nothing in CSV
    says = "U+2028" if "\t" in name else says
    before = snapshot(mini)
    code, err = _import(capsys, path, "--db", str(mini.path), "--dataset", DATASET)
    assert code == 2 and "Traceback" not in err
    where = f"{path}, line 3, field 'judge'"
    assert where in err and says in err, err
    assert snapshot(mini) == before


@pytest.mark.parametrize("name", ["kind:llm", "ali\u200bce", " KIND:human"])
def test_import_refuses_the_judge_option(mini, tmp_path, capsys, name):
    path = tmp_path / "j.csv"
    path.write_text("instance_id,model,skill,score\n3,beta,robustness,4\n")
    before = snapshot(mini)
    code, err = _import(capsys, path, "--db", str(mini.path), "--dataset", DATASET,
                        "--judge", name)  # fmt: skip
    assert code == 2 and f"{path}, field '--judge'" in err
    assert snapshot(mini) == before


def test_an_imported_nfd_judge_is_the_stored_nfc_judge(mini, tmp_path, capsys):
    args = ("--db", str(mini.path), "--dataset", DATASET, "--kind", "human")
    assert _import(capsys, _csv(tmp_path, NFC, name="a.csv"), *args)[0] == 0
    assert _import(capsys, _csv(tmp_path, NFD, "efficiency", name="b.csv"), *args)[0] == 0
    with mini.read() as con:
        names = con.execute("SELECT judge FROM judges WHERE judge LIKE 'Jos%'").fetchall()
        skills = con.execute("SELECT skill FROM latest_scores WHERE judge LIKE 'Jos%' "
                             "ORDER BY skill").fetchall()  # fmt: skip
    assert names == [(NFC,)] and skills == [("correctness",), ("efficiency",)]


CRITERIA = [  # (stored criterion, new one in another file, refused?)
    ("coherence", "Coherence", True),
    ("coherence", "COHERENCE", True),
    ("Coherence", "coherence", True),
    ("coherence", "coherence", False),  # the same criterion again
    ("coherence", "cohesion", False),
]


@pytest.mark.parametrize(("stored", "new", "refused"), CRITERIA)
def test_a_criterion_differing_only_in_case_is_refused(mini, tmp_path, capsys, stored, new,
                                                       refused):  # fmt: skip
    args = ("--db", str(mini.path), "--dataset", DATASET, "--scale", "1-10")
    assert _import(capsys, _csv(tmp_path, "rater", stored, name="a.csv"), *args)[0] == 0
    before = snapshot(mini)
    code, err = _import(capsys, _csv(tmp_path, "rater", new, name="b.csv"), *args)
    if refused:
        assert code == 2 and "b.csv, line 3, field 'skill'" in err
        assert f"differs only in case from criterion '{stored}'" in err
        assert f"use '{stored}'" in err
        assert snapshot(mini) == before
    else:
        assert code == 0, err


def test_two_new_criteria_differing_in_case_in_one_file_are_refused(mini, tmp_path, capsys):
    path = tmp_path / "two.csv"
    path.write_text("instance_id,model,skill,score,judge\n3,beta,Tone,4,r\n3,alpha,tone,3,r\n")
    before = snapshot(mini)
    code, err = _import(capsys, path, "--db", str(mini.path), "--dataset", DATASET,
                        "--scale", "1-5")  # fmt: skip
    assert code == 2 and "line 3, field 'skill'" in err and "use 'Tone'" in err
    assert snapshot(mini) == before


# --- the judge command --------------------------------------------------------------------

JUDGE_NAMES = [  # (flags, the field named, what the refusal says)
    (["--model", "m", "--name", "kind:llm"], "name", "is reserved"),
    (["--model", "m", "--name", "Kind:Human"], "name", "is reserved"),
    (["--model", "m", "--name", "gpt\u200b4"], "name", "U+200B"),
    (["--model", "m", "--name", "\u202egpt"], "name", "U+202E"),
    (["--model", "kind:llm"], "model", "is reserved"),  # the derived name starts with it
    (["--model", "gpt\u20604"], "model", "U+2060 WORD JOINER"),
]


@pytest.mark.parametrize(("flags", "field", "says"), JUDGE_NAMES)
def test_the_judge_command_refuses_the_name(tmp_path, capsys, flags, field, says):
    db = tmp_path / "untouched.duckdb"
    code = main(["judge", "--backend", "openai", *flags, "--dataset", "demo", "--db", str(db),
                 "--estimate-only"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and f"field '{field}'" in err and says in err, err
    assert "Traceback" not in err and not db.exists()


def test_a_judge_file_name_is_checked_and_stored_as_nfc(tmp_path, capsys):
    from analysis.cli.judge import judge_config

    bad = tmp_path / "bad.yaml"
    bad.write_text("backend: openai\nmodel: m\nname: 'kind:llm'\n")
    with pytest.raises(InputError) as e:
        judge_config({}, str(bad))
    assert e.value.file == str(bad) and e.value.field == "name"
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"backend": "openai", "model": "m", "name": NFD}), encoding="utf-8")
    assert judge_config({}, str(good)).judge == NFC
    blank = tmp_path / "blank.toml"
    blank.write_text('backend = "openai"\nmodel = "m"\nname = "  "\n')
    assert judge_config({}, str(blank)).judge == "m (openai, flask-v1)"


@pytest.mark.parametrize("name", ["kind:llm", "x\u200by"])
def test_the_rejudge_forms_name_is_checked(name):
    from judges.config import JudgeConfig

    with pytest.raises(InputError) as e:
        JudgeConfig.from_mapping({"backend": "openai", "model": "m", "name": name},
                                 "the Re-judge form", visitor=True)  # fmt: skip
    assert e.value.file == "the Re-judge form" and e.value.field == "name"
