"""`gaze view`: the site for a scored forge run compared with a second method, and what it does
with damaged or misplaced inputs."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from gaze.cli.main import run


def scores(folder: Path) -> dict:
    return json.loads((folder / "scores.json").read_text())


def test_view_writes_index_clip_pages_and_a_comparison(runs, tmp_path):
    site = tmp_path / "site"
    assert run(["view", str(runs.pixel), "--compare", str(runs.graph), "--out", str(site)]) == 0
    assert len(list((site / "clips").glob("*.html"))) == 24
    assert len(list((site / "clips-2").glob("*.html"))) == 24
    index = (site / "index.html").read_text()
    pixel = scores(runs.pixel)
    low, high = pixel["ci"]["recall"]
    assert f"{pixel['recall']:.3f}<br><span class='dim'>[{low:.3f}, {high:.3f}]" in index
    assert "robogaze · scripted:critic-rejects.json" in index and "gaze-forge-v2" in index
    assert index.count("<tr data-generator=") == 24
    # the comparison shows exactly the pairs the scorer made, for both runs
    compare = (site / "compare.html").read_text()
    pairs = sum(len(c["matched"]) for r in (runs.pixel, runs.graph) for c in scores(r)["per_clip"])
    assert compare.count("↔ ref #") == pairs > 0
    misses = sum(
        len(c["unmatched_ref"]) for r in (runs.pixel, runs.graph) for c in scores(r)["per_clip"]
    )
    assert compare.count("<span class='chip'>missed by") == misses
    false_alarms = sum(
        len(c["unmatched_pred"]) for r in (runs.pixel, runs.graph) for c in scores(r)["per_clip"]
    )
    assert compare.count("<li class='fa'>") == false_alarms
    # a clip page links back, and its video relative to itself
    page = (site / "clips" / "forge2_s5_0001_teleportation.html").read_text()
    assert "<a id='up' href='../index.html'>← run</a>" in page
    assert "rel='next' href='forge2_s5_0002_disappearance.html'" in page
    assert "rel='prev' href='forge2_s5_0000_clean.html'" in page
    # a run with transcripts shows each clip's exchanges; a run that made no call has none
    graph_page = (site / "clips-2" / "forge2_s5_0001_teleportation.html").read_text()
    lines = (runs.graph / "transcripts" / "forge2_s5_0001_teleportation.jsonl").read_text()
    assert graph_page.count('<li class="exchange') == len(lines.splitlines()) - 1 > 0
    assert "Model exchanges" not in page and not (runs.pixel / "transcripts").exists()
    assert "reference (annotated)" in page and "1 reference event(s) annotated" in page
    video = re.search(r"<video id='player'[^>]* src='([^']+)'", page).group(1)
    assert (site / "clips" / video).resolve() == (runs.forge / video.split("/")[-1]).resolve()


def test_default_site_folder_is_inside_the_run(runs, tmp_path):
    copy = tmp_path / "pixel"
    shutil.copytree(runs.pixel, copy)
    assert run(["view", str(copy)]) == 0
    assert (copy / "view" / "index.html").is_file() and not (
        copy / "view" / "compare.html"
    ).exists()


def test_damaged_files_are_listed_and_the_rest_is_shown(runs, tmp_path, capsys):
    copy = tmp_path / "pixel"
    shutil.copytree(runs.pixel, copy, ignore=shutil.ignore_patterns("view"))
    (copy / "run.json").unlink()
    (copy / "scores.json").unlink()
    broken = copy / "reports" / "forge2_s5_0003_hallucination.json"
    broken.write_text('{"clip_id": "forge2_s5_0003_halluc')
    assert run(["view", str(copy)]) == 0
    index = (copy / "view" / "index.html").read_text()
    assert "forge2_s5_0003_hallucination.json:" in index
    assert "run.json is missing" in index and "No scores yet" in index
    assert len(list((copy / "view" / "clips").glob("*.html"))) == 23


def test_scores_kept_elsewhere_and_matching_without_scores(runs, tmp_path):
    pixel, graph = tmp_path / "pixel", tmp_path / "graph"
    shutil.copytree(runs.pixel, pixel, ignore=shutil.ignore_patterns("view", "scores.json"))
    shutil.copytree(runs.graph, graph, ignore=shutil.ignore_patterns("view", "scores.json"))
    outside = tmp_path / "pixel-scores.json"
    shutil.copy(runs.pixel / "scores.json", outside)
    assert run(["view", str(pixel), "--compare", str(graph), "--scores", str(outside)]) == 0
    index = (pixel / "view" / "index.html").read_text()
    assert "judge type, robogaze protocol, 24 clips" in index
    compare = (pixel / "view" / "compare.html").read_text()
    assert "matches from pixel-scores.json (judge type)" in compare
    assert "matched now by the type judge (no scores file in the run)" in compare


def test_a_folder_that_is_not_a_run_is_one_clear_error(tmp_path, capsys):
    assert run(["view", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is not a bench run folder (no reports/ inside)" in err and "Traceback" not in err
    (tmp_path / "reports").mkdir()
    assert run(["view", str(tmp_path), "--scores", str(tmp_path / "none.json")]) == 2
    assert "no such scores file" in capsys.readouterr().err


def test_runs_on_different_manifests_are_not_compared(runs, tmp_path, capsys):
    other = tmp_path / "other"
    shutil.copytree(runs.graph, other, ignore=shutil.ignore_patterns("view"))
    info = json.loads((other / "run.json").read_text())
    info["manifest_sha256"] = "0" * 64
    (other / "run.json").write_text(json.dumps(info))
    assert (
        run(["view", str(runs.pixel), "--compare", str(other), "--out", str(tmp_path / "s")]) == 2
    )
    assert "different manifests" in capsys.readouterr().err


def test_three_runs_side_by_side(runs, tmp_path):
    third = tmp_path / "pixel-again"
    shutil.copytree(runs.pixel, third, ignore=shutil.ignore_patterns("view"))
    site = tmp_path / "site"
    argv = ["view", str(runs.pixel), "--compare", str(runs.graph), "--compare", str(third)]
    assert run([*argv, "--out", str(site)]) == 0
    compare = (site / "compare.html").read_text()
    assert "C: pixel (pixel-again)" in compare and "A: pixel (pixel)" in compare
    assert len(list((site / "clips-3").glob("*.html"))) == 24
    pairs = sum(len(c["matched"]) for c in scores(runs.pixel)["per_clip"])
    assert compare.count("↔ ref #") == 2 * pairs + sum(
        len(c["matched"]) for c in scores(runs.graph)["per_clip"]
    )
