import json
from pathlib import Path

import pytest

from gaze.errors import GazeInputError
from gaze.schema.codebook import content_hash, load_codebook, load_codebook_file
from gaze.schema.dimensions import DIMENSIONS

CODEBOOK = Path(__file__).resolve().parents[2] / "gaze" / "schema" / "codebook_v1.json"


def test_codebook_has_six_dimensions_of_five_named_types():
    book = load_codebook().codebook
    assert [d.name for d in book.dimensions] == list(DIMENSIONS)
    assert all(len(d.types) == 5 for d in book.dimensions)
    names = book.type_names()
    assert len(names) == len(set(names)) == 30
    assert book.dimension_of("object_teleportation") == "physical_plausibility"
    assert book.dimension_of("wrong_effector") == "instruction_consistency"
    assert [lvl.label for lvl in book.severity_rubric] == [
        "cosmetic",
        "minor",
        "moderate",
        "severe",
        "catastrophic",
    ]


def test_flags_match_the_design():
    book = load_codebook().codebook
    limiting = {t.name for d in book.dimensions for t in d.types if t.evidence_limiting}
    residual = {t.name for d in book.dimensions for t in d.types if t.residual}
    assert limiting == {"ambiguous_task_success", "occlusion", "low_visibility"}
    assert residual == {"other_implausible_dynamics"}


def test_every_exclusion_rule_names_another_existing_type():
    book = load_codebook().codebook
    names = set(book.type_names())
    for dim in book.dimensions:
        for ftype in dim.types:
            named = {w.strip(".,;:()") for w in ftype.exclusion_rule.split()} & names
            assert named - {ftype.name}, ftype.name


def test_version_and_hash_are_exposed_and_hash_ignores_formatting(tmp_path):
    loaded = load_codebook()
    assert loaded.version == "1.0.0"
    assert loaded.hash.startswith("sha256:") and len(loaded.hash) == 7 + 64
    data = json.loads(CODEBOOK.read_text())
    reformatted = tmp_path / "cb.json"
    reformatted.write_text(json.dumps(data, indent=7))
    assert load_codebook_file(reformatted).hash == loaded.hash
    data["dimensions"][0]["types"][0]["default_severity"] = 3
    changed = tmp_path / "cb2.json"
    changed.write_text(json.dumps(data))
    assert load_codebook_file(changed).hash != loaded.hash
    assert content_hash(data) == load_codebook_file(changed).hash


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["dimensions"][0]["types"].pop(), "has 4 types"),
        (lambda d: d["dimensions"][1]["types"][0].update(name="failed_grasp"), "duplicate"),
        (
            lambda d: d["dimensions"][2]["types"][0].update(exclusion_rule="use nothing else"),
            "names no other",
        ),
        (lambda d: d["dimensions"].pop(), "dimensions must be"),
    ],
)
def test_invalid_codebooks_are_rejected_in_one_line(tmp_path, mutate, message):
    data = json.loads(CODEBOOK.read_text())
    mutate(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(GazeInputError, match=message) as info:
        load_codebook_file(bad)
    assert "\n" not in str(info.value)
