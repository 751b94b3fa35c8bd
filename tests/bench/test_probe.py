"""`gaze probe`: known-answer variants of a user's clips, a method run over them, and a trust
report that `gaze bench score` confirms; a method that ignores its input is exposed."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from gaze.bench.forge import forge_set
from gaze.bench.probe.trust import trust_report
from gaze.cli.main import run
from gaze.schema.events import Event
from gaze.schema.report import Assessment, Report, run_manifest
from tests.cli.test_cli import one_line_error

SHARED = Path(__file__).resolve().parents[3] / "shared" / "clips"


@pytest.fixture(scope="module")
def clean_clips(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three forge clips with no failure of their own (the forge's truth: none)."""
    folder = tmp_path_factory.mktemp("clean")
    rows = forge_set(folder / "all", 8, seed=21)
    clean = [r for r in rows if not r.events][:1]
    forged = [r for r in rows if r.events][:2]
    lines = [json.dumps(r.model_dump(mode="json", exclude_none=True)) for r in clean + forged]
    (folder / "all" / "some.jsonl").write_text("\n".join(lines) + "\n")
    return folder / "all" / "some.jsonl"


@pytest.fixture(scope="module")
def probed(clean_clips: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("probe") / "p"
    args = ["probe", str(clean_clips), "--method", "pixel", "--out", str(out), "--seed", "4"]
    assert run(args) == 0
    return out


def _frames(path: Path) -> list[np.ndarray]:
    capture = cv2.VideoCapture(str(path))
    frames = []
    while True:
        ok, frame = capture.read()
        if not ok:
            return frames
        frames.append(frame)


def test_each_variant_differs_from_its_control_exactly_where_its_truth_says(probed):
    rows = [json.loads(line) for line in (probed / "manifest.jsonl").read_text().splitlines()]
    by_id = {r["clip_id"]: r for r in rows}
    for row in rows:
        kind = row["metadata"]["probe"]
        if kind in ("original", "vanish", "appear", "jump", "freeze", "stutter"):
            continue  # composites hold all along; repeats of a frame change only in motion
        control = _frames(probed / by_id[f"{row['metadata']['source']}__original"]["video"])
        variant = _frames(probed / row["video"])
        event = row["events"][row["metadata"]["injected"]]
        fps = row["fps"]
        first, last = round(event["start_s"] * fps), round(event["end_s"] * fps)
        differs = [
            float(cv2.absdiff(a, b).mean()) > 3 for a, b in zip(control, variant, strict=True)
        ]
        changed = [i for i, d in enumerate(differs) if d]
        assert changed and first <= changed[0] and changed[-1] <= last + 1, (kind, changed)


def test_a_forged_failure_is_kept_in_every_variants_truth(probed, clean_clips):
    """Truth known twice over: a source's own forged failure stays in each of its variants."""
    source_rows = [json.loads(line) for line in clean_clips.read_text().splitlines()]
    forged = next(r for r in source_rows if r["events"])
    rows = [json.loads(line) for line in (probed / "manifest.jsonl").read_text().splitlines()]
    mine = [r for r in rows if r["metadata"]["source"] == forged["clip_id"]]
    assert len(mine) > 5
    for row in mine:
        assert row["events"][0]["type"] == forged["events"][0]["type"]
        assert row["events"][0]["start_s"] == forged["events"][0]["start_s"]


def test_every_kind_is_counted_over_every_source_and_no_control_alarms(probed, tmp_path):
    trust = json.loads((probed / "trust.json").read_text())
    out = tmp_path / "scores.json"
    manifest, reports = probed / "manifest.jsonl", probed / "run" / "reports"
    args = ["bench", "score", str(manifest), str(reports), "--judge", "type", "--slice", "probe"]
    assert run([*args, "--bootstrap", "0", "--out", str(out)]) == 0
    by_probe = json.loads(out.read_text())["slices"]["probe"]
    sources = {r.split("__")[0] for r in trust["controls"]["clips"]}
    assert trust["kind"] == "trust" and trust["format"] == 1 and not sources
    for kind, figures in trust["kinds"].items():
        # one clean source: the only event a variant of it holds is the injected one
        clean = by_probe[kind]
        assert figures["n"] == 3 and clean["n_clips"] == 3
    assert by_probe["original"]["clean_accuracy"] is not None


def test_figures_equal_bench_score_exactly_on_clean_sources(clean_clips, tmp_path):
    rows = [json.loads(line) for line in clean_clips.read_text().splitlines()]
    clean = tmp_path / "clean.jsonl"
    row = next(r for r in rows if not r["events"])
    row["video"] = str(clean_clips.parent / row["video"])
    clean.write_text(json.dumps(row) + "\n")
    out = tmp_path / "p"
    kinds = "blur,glitch,vanish,stutter"
    assert run(["probe", str(clean), "--method", "pixel", "--out", str(out), "--kinds", kinds]) == 0
    trust = json.loads((out / "trust.json").read_text())
    scores = tmp_path / "scores.json"
    args = ["bench", "score", str(out / "manifest.jsonl"), str(out / "run" / "reports")]
    args += ["--judge", "type", "--slice", "probe", "--bootstrap", "0", "--out", str(scores)]
    assert run(args) == 0
    by_probe = json.loads(scores.read_text())["slices"]["probe"]
    for kind in kinds.split(","):
        assert trust["kinds"][kind]["rate"] == by_probe[kind]["recall"], kind
    control = trust["controls"]
    assert 1 - control["with_events"] / control["n"] == by_probe["original"]["clean_accuracy"]
    # the viewer of the probe folder shows its run and the trust page, linked from the index
    assert run(["view", str(out), "--out", str(tmp_path / "site")]) == 0
    index = (tmp_path / "site" / "index.html").read_text()
    page = (tmp_path / "site" / "trust.html").read_text()
    assert "href='trust.html'" in index and "href='index.html'" in page
    for kind in kinds.split(","):
        figures = trust["kinds"][kind]
        assert f"<td>{kind}</td>" in page and f"{figures['found']}/{figures['n']}" in page


def _stub_reports(folder: Path, events_of) -> None:
    """Reports of a method that ignores its input, for every clip of the probe manifest."""
    reports = folder / "run" / "reports"
    for line in (folder / "manifest.jsonl").read_text().splitlines():
        row = json.loads(line)
        report = Report(
            clip_id=row["clip_id"],
            instruction=row["instruction"],
            events=events_of(row),
            assessment=Assessment(mode="baseline", assessed=[], not_assessed=[], note="a stub"),
            manifest=run_manifest({"method": "stub"}, 0.0),
        )
        (reports / f"{row['clip_id']}.json").write_text(report.model_dump_json())


def test_a_method_that_ignores_its_input_is_exposed(probed, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(probed, copy)
    _stub_reports(copy, lambda row: [])  # "always clean"
    clean = trust_report(copy, "always-clean")
    assert all(k["found"] == 0 for k in clean["kinds"].values())
    same = Event(
        dimension="visual_quality", type="blur", start_s=1.0, end_s=2.0, severity=2,
        description="always this",
    )  # fmt: skip
    _stub_reports(copy, lambda row: [same])  # "always the same event"
    constant = trust_report(copy, "always-blur")
    assert constant["controls"]["with_events"] == constant["controls"]["n"] == 3


def test_a_probe_set_is_the_same_from_the_same_seed(clean_clips, tmp_path):
    from gaze.bench.probe.make import make_probe_set, sources_of

    sources = sources_of(clean_clips, None)[:1]
    made = [
        make_probe_set(
            sources, tmp_path / name, seed=7, kinds=["jump", "shake"], semantic=[], max_seconds=8
        )
        for name in ("a", "b")
    ]
    assert made[0].rows == made[1].rows and len(made[0].rows) == 3
    assert (tmp_path / "a" / "manifest.jsonl").read_bytes() == (
        tmp_path / "b" / "manifest.jsonl"
    ).read_bytes()


def test_clips_too_short_are_skipped_with_their_reason_and_none_left_is_one_line(tmp_path, capsys):
    short = tmp_path / "short.mp4"
    from gaze.bench.forge_common import encode

    encode([np.full((64, 64, 3), 90, np.uint8)] * 20, short, 10.0, "h264", "high")
    code = run(["probe", str(short), "--method", "pixel", "--out", str(tmp_path / "p")])
    message = one_line_error(capsys.readouterr().err)
    assert code == 2 and "short.mp4 is 2.0 s long" in message and "at least 3 s" in message


def test_an_output_that_is_not_empty_is_refused_before_any_work(clean_clips, tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    code = run(["probe", str(clean_clips), "--method", "pixel", "--out", str(out)])
    assert code == 2 and "already holds files" in one_line_error(capsys.readouterr().err)
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]


def test_semantic_probes_and_repeats_with_a_model_method(clean_clips, tmp_path):
    rows = [json.loads(line) for line in clean_clips.read_text().splitlines()][:1]
    rows[0]["video"] = str(clean_clips.parent / rows[0]["video"])
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps(rows[0]) + "\n")
    out = tmp_path / "p"
    args = ["probe", str(one), "--method", "b1", "--model", "scripted:auto", "--out", str(out)]
    args += ["--kinds", "blur", "--semantic", "mismatch,cut", "--repeat", "2"]
    assert run(args) == 0
    trust = json.loads((out / "trust.json").read_text())
    assert set(trust["semantic"]) == {"mismatch", "cut"}
    assert trust["semantic"]["mismatch"]["dimension"] == "instruction_consistency"
    semantic = [json.loads(line) for line in (out / "semantic.jsonl").read_text().splitlines()]
    mismatch = next(r for r in semantic if r["metadata"]["probe"] == "mismatch")
    assert mismatch["instruction"] != rows[0]["instruction"]
    assert trust["retest"]["controls"] == 1 and trust["retest"]["runs_each"] == 3
    assert (out / "trust.html").read_text().startswith("<!doctype html>")


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared real clips not found at {SHARED}")
def test_a_real_clip_keeps_its_resolution_rate_and_codec(tmp_path):
    clip = SHARED / "bridge_real_widowx_flip_pot_upright_lcbc_fail.mp4"
    out = tmp_path / "p"
    args = ["probe", str(clip), "--method", "pixel", "--out", str(out), "--kinds", "glitch,vanish"]
    assert run(args) == 0
    source = cv2.VideoCapture(str(clip))
    for row in map(json.loads, (out / "manifest.jsonl").read_text().splitlines()):
        variant = cv2.VideoCapture(str(out / row["video"]))
        assert variant.get(cv2.CAP_PROP_FPS) == pytest.approx(source.get(cv2.CAP_PROP_FPS), 0.01)
        assert variant.get(cv2.CAP_PROP_FRAME_WIDTH) == source.get(cv2.CAP_PROP_FRAME_WIDTH)
        codec = int(variant.get(cv2.CAP_PROP_FOURCC)).to_bytes(4, "little").decode().lower()
        assert codec in ("avc1", "h264")


def test_the_commands_kinds_are_the_probe_sets():
    """The CLI lists the kinds without importing OpenCV: its lists must be the probe set's."""
    from gaze.bench.probe.make import INJECTED
    from gaze.bench.probe.semantic import EXPECTED
    from gaze.cli.probe_cmd import KINDS, SEMANTIC

    assert tuple(INJECTED) == KINDS and tuple(EXPECTED) == SEMANTIC
