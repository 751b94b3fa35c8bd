"""`gaze convert --from robogaze`: the project page's clip files, read leniently and honestly.
The fixtures are written here in that format (not copies of RoboGaze's data) and carry each
quirk of the published files."""

from __future__ import annotations

import json

from gaze.cli.main import run
from gaze.schema.codebook import load_codebook
from gaze.schema.manifest import ManifestClip


def clip_file(folder, clip_id, events, **extra):
    data = {
        "clip_id": clip_id,
        "file": f"{clip_id}.mp4",
        "title": "written for this test",
        "instruction": "put the cup on the saucer",
        "generator": "SomeModel",
        "duration_s": 12.0,
        "fps": 10,
        "dimensions": ["OSC"],
        "events": events,
        **extra,
    }
    (folder / f"{clip_id}.json").write_text(json.dumps(data, indent=2))


def event(n, **fields):
    base = {
        "event_id": f"e{n}",
        "dimension": "object_scene",
        "dimension_code": "OSC",
        "type": "object_disappearance",
        "start_s": 2.0,
        "end_s": 4.0,
        "severity": 3,
        "evidence_limiting": False,
        "description": "the cup is gone",
    }
    return {**base, **fields}


def test_clip_files_become_a_manifest_with_every_quirk_handled(tmp_path, capsys):
    source = tmp_path / "clips"
    source.mkdir()
    clip_file(
        source,
        "a",
        [
            event(1, severity=None),  # null severity: the type's default, marked
            event(2, end_s=12.01),  # 0.01 s past the clip: clamped
            event(3, dimension="robot_body", dimension_code="RBC", type="robot_body_deformation"),
            event(4, type="not_a_type"),  # unknown type: left out, counted
            event(5, end_s=20.0),  # far past the clip: left out
        ],
    )
    clip_file(source, "b", [])  # a clean clip
    (source / "metadata.json").write_text(json.dumps({"clips": ["a", "b"]}))
    out = tmp_path / "out" / "manifest.jsonl"
    out.parent.mkdir()
    summary = tmp_path / "summary.json"
    code = run(["convert", "--from", "robogaze", str(source), "--out", str(out),
                "--summary", str(summary)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    clips = {
        c.clip_id: c
        for c in (ManifestClip.model_validate_json(line) for line in out.read_text().splitlines())
    }
    a = clips["a"]
    assert a.video == "../clips/a.mp4"  # relative to the manifest written
    assert [e.type for e in a.events] == [
        "object_disappearance",
        "object_disappearance",
        "robot_body_deformation",
    ]
    default = load_codebook().codebook.type("object_disappearance").default_severity
    assert a.events[0].severity == default and a.metadata["severity_defaulted"] == [0]
    assert a.events[1].end_s == 12.0
    assert a.events[2].dimension == "robot_body_consistency"
    assert a.metadata["robogaze"]["title"] == "written for this test"
    assert a.metadata["robogaze"]["events"][0] == {
        "event_id": "e1", "dimension_code": "OSC", "evidence_limiting": False
    }  # fmt: skip
    assert clips["b"].events == []
    report = json.loads(summary.read_text())
    assert report["read"] == 3 and report["written"] == 2
    assert report["skipped_by_reason"] == {
        "not a clip file (no clip_id and events)": 1,
        "type 'not_a_type' not in the codebook": 1,
        "ends past the clip": 1,
    }
    assert report["adjusted"]["null severity given the type's default"] == 1
    assert report["adjusted"]["end clamped to the clip"] == 1
    assert "2 manifest row(s) written" in err and "left out (1): ends past the clip" in err


def test_nothing_usable_is_one_line(tmp_path, capsys):
    (tmp_path / "metadata.json").write_text("{}")
    args = ["convert", "--from", "robogaze", str(tmp_path), "--out", str(tmp_path / "m.jsonl")]
    assert run(args) == 2
    assert "nothing usable as robogaze" in capsys.readouterr().err
    assert not (tmp_path / "m.jsonl").exists()


def test_severity_metrics_leave_out_severities_the_import_filled_in(tmp_path):
    from gaze.bench.score_job import run_score

    first = {
        "dimension": "object_scene_consistency",
        "type": "object_disappearance",
        "start_s": 1.0,
        "end_s": 3.0,
        "severity": 4,
        "description": "the cup vanishes",
    }
    second = {"dimension": "visual_quality", "type": "blur", "start_s": 5.0, "end_s": 7.0,
              "severity": 2, "description": "the frames go soft"}  # fmt: skip
    clip = {"clip_id": "c", "video": "c.mp4", "instruction": "put the cup down", "fps": 10,
            "duration_s": 10, "events": [first, second]}  # fmt: skip
    # the prediction gets the first severity right and is 3 off on the second
    preds = [{"clip_id": "c", "events": [first, {**second, "severity": 5}]}]
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds))

    def sev_at_1(metadata):
        manifest = tmp_path / "m.jsonl"
        manifest.write_text(json.dumps({**clip, "metadata": metadata}) + "\n")
        result = run_score(manifest, tmp_path / "p.jsonl", n_boot=0)
        return result["sev_at_1"]

    assert sev_at_1({}) == 0.5  # both severities graded
    assert sev_at_1({"severity_defaulted": [1]}) == 1.0  # the filled-in one is not graded


def test_bench_score_reads_the_clip_files_directly(tmp_path, capsys):
    source = tmp_path / "clips"
    source.mkdir()
    clip_file(source, "a", [event(1, severity=None), event(2, type="not_a_type")])
    clip_file(source, "b", [])
    preds = tmp_path / "p.jsonl"
    found = {
        "dimension": "object_scene_consistency",
        "type": "object_disappearance",
        "start_s": 2.0,
        "end_s": 4.0,
        "severity": 1,
        "description": "the cup is gone",
    }
    preds.write_text(
        json.dumps({"clip_id": "a", "events": [found]}) + "\n"
        + json.dumps({"clip_id": "b", "events": []}) + "\n"
    )  # fmt: skip
    out = tmp_path / "metrics.json"
    args = ["bench", "score", str(source), str(preds), "--out", str(out), "--bootstrap", "0"]
    assert run([*args, "--format", "robogaze"]) == 0, capsys.readouterr().err
    result = json.loads(out.read_text())
    assert result["n_clips"] == 2 and result["clean_accuracy"] == 1.0
    assert result["import"]["skipped_by_reason"] == {"type 'not_a_type' not in the codebook": 1}
    # the one matched event's severity was filled in by the import: not graded
    assert result["sev_at_1"] is None


def test_the_way_back_restores_the_clip_files(tmp_path, capsys):
    source = tmp_path / "clips"
    source.mkdir()
    clip_file(source, "a", [event(1, severity=None), event(2)])
    clip_file(source, "b", [], page_note=None)
    manifest = tmp_path / "manifest.jsonl"
    assert run(["convert", "--from", "robogaze", str(source), "--out", str(manifest)]) == 0
    back = tmp_path / "back"
    assert run(["convert", "--to", "robogaze", str(manifest), "--out", str(back)]) == 0
    for name in ("a", "b"):
        original = json.loads((source / f"{name}.json").read_text())
        restored = json.loads((back / f"{name}.json").read_text())
        assert restored.pop("file") == f"../clips/{name}.mp4"
        original.pop("file")
        assert restored == original  # null severity null again, ids and extra keys restored
    assert "2 clip file(s) written" in capsys.readouterr().err
    assert run(["convert", str(source), "--out", str(back)]) == 2  # neither --from nor --to
