"""A saved file says which code can read it: results files carry their format, kind and scorer
(the matching protocol's version for event scores); a newer report or results file is refused
in one line instead of misread."""

from __future__ import annotations

import json

import pytest

from gaze.bench.results import RESULTS_FORMAT
from gaze.cli.main import run
from gaze.matching import glide, robogaze
from gaze.schema.report import REPORT_FORMAT, Report
from tests.bench.test_bench_score import files  # noqa: F401  (the fixture)
from tests.cli.test_cli import one_line_error


@pytest.mark.parametrize(("protocol", "module"), [("robogaze", robogaze), ("glide", glide)])
def test_event_scores_record_their_format_and_the_protocols_version(files, protocol, module):  # noqa: F811
    manifest, preds, tmp = files
    out = tmp / "scores.json"
    args = ["bench", "score", str(manifest), str(preds), "--out", str(out), "--bootstrap", "0"]
    assert run([*args, "--protocol", protocol]) == 0
    data = json.loads(out.read_text())
    assert (data["format"], data["kind"], data["protocol"]) == (RESULTS_FORMAT, "scores", protocol)
    assert data["scorer"]["protocol_version"] == module.VERSION
    assert data["scorer"]["gaze_version"]


def test_screening_results_say_their_kind(files):  # noqa: F811
    manifest, preds, tmp = files
    out = tmp / "screen.json"
    assert run(["bench", "screen", str(manifest), str(preds), "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert (data["format"], data["kind"]) == (RESULTS_FORMAT, "screen")
    assert "protocol_version" not in data["scorer"]


def test_the_viewer_refuses_a_newer_results_file_in_one_line(files, capsys):  # noqa: F811
    manifest, preds, tmp = files
    run_dir = tmp / "run"
    (run_dir / "reports").mkdir(parents=True)
    newer = tmp / "newer.json"
    newer.write_text(
        json.dumps({"format": RESULTS_FORMAT + 1, "protocol": "robogaze", "per_clip": []})
    )
    code = run(["view", str(run_dir), "--scores", str(newer), "--out", str(tmp / "site")])
    message = one_line_error(capsys.readouterr().err)
    assert code == 2 and f"format {RESULTS_FORMAT + 1}" in message and "upgrade gaze" in message


def test_a_report_of_a_newer_format_is_refused_and_an_older_one_read():
    from tests.report.test_terminal import report  # a valid report to change

    data = json.loads(report().model_dump_json())
    data["format"] = str(int(REPORT_FORMAT) + 1)
    with pytest.raises(ValueError, match="newer than this gaze reads"):
        Report.model_validate(data)
    data["format"] = "1"
    assert Report.model_validate(data).format == "1"
