"""`bench run` as a benchmark user drives it: several methods and models in one command (one run
folder each), a TOML file of options recorded in run.json, report sections chosen per run."""

from __future__ import annotations

import json

from gaze.cli.main import run
from gaze.schema.report import Report
from tests.cli.test_cli import one_line_error


def _run_json(folder) -> dict:
    return json.loads((folder / "run.json").read_text())


def test_several_methods_and_models_write_one_run_folder_each(forge_dir, tmp_path, capsys):
    out = tmp_path / "runs"
    manifest = str(forge_dir / "manifest.jsonl")
    args = ["bench", "run", manifest, "--out", str(out), "--limit", "2"]
    methods = ["--method", "robogaze", "--method", "b1", "--method", "pixel"]
    models = ["--model", "scripted:auto", "--model", "scripted:unruly"]
    assert run([*args, *methods, *models]) == 0
    folders = sorted(p.name for p in out.iterdir())
    # the pixel method needs no model: one run, not one per model
    assert folders == [
        "b1__scripted-auto",
        "b1__scripted-unruly",
        "pixel",
        "robogaze__scripted-auto",
        "robogaze__scripted-unruly",
    ]
    for name in folders:
        info = _run_json(out / name)
        method, _, model = name.partition("__")
        assert info["method"] == method and info["done"] == 2 and not info["failed"]
        if model:
            assert set(info["models"].values()) == {model.replace("-", ":", 1)}
    err = capsys.readouterr().err
    assert err.count("2 done, 0 already done") == 5
    # a single method and model keeps the plain layout: --out is the run folder
    single = tmp_path / "single"
    assert run(["bench", "run", manifest, "--method", "pixel", "--out", str(single),
                "--limit", "1"]) == 0  # fmt: skip
    assert (single / "run.json").is_file()


def test_one_bad_model_among_several_stops_before_any_clip_work(forge_dir, tmp_path, capsys):
    out = tmp_path / "runs"
    code = run(["bench", "run", str(forge_dir / "manifest.jsonl"), "--out", str(out),
                "--model", "scripted:auto", "--model", "nosuch:model"])  # fmt: skip
    assert code == 2
    assert "nosuch" in one_line_error(capsys.readouterr().err)
    assert not list(out.glob("*/reports/*.json"))


def test_a_config_file_holds_any_option_and_run_json_records_it(forge_dir, tmp_path, capsys):
    config = tmp_path / "bench.toml"
    config.write_text(
        'method = "robogaze"\nmodel = "scripted:auto"\nmax-retries = 1\n'
        'only = ["*_clean", "*_blur"]\nsections = "diagnosis,signals"\nclips_in_flight = 2\n'
    )
    out = tmp_path / "run"
    args = ["bench", "run", str(forge_dir / "manifest.jsonl"), "--config", str(config)]
    # the command line wins over the file
    assert run([*args, "--out", str(out), "--max-retries", "2"]) == 0
    info = _run_json(out)
    assert info["settings"]["max_retries"] == 2
    assert info["settings"]["sections"] == ["diagnosis", "signals"]
    assert info["selection"]["only"] == ["*_clean", "*_blur"] and info["clips"] == 2
    assert info["config"]["path"] == str(config)
    assert info["config"]["values"]["max_retries"] == 1  # what the file said, as it said it
    report = Report.model_validate_json(next((out / "reports").glob("*.json")).read_text())
    assert report.pa is None and report.progress is None  # only the sections asked for


def test_a_config_file_that_cannot_be_used_is_one_line(forge_dir, tmp_path, capsys):
    manifest = str(forge_dir / "manifest.jsonl")
    bad = tmp_path / "bad.toml"
    for text, words in (
        ("max-retries = ", "not valid TOML"),
        ("max-retrys = 2", "'max-retrys', which is not an option"),
        ("max-retries = 99", "max-retries"),
    ):
        bad.write_text(text)
        code = run(["bench", "run", manifest, "--config", str(bad), "--out", str(tmp_path / "r"),
                    "--method", "pixel"])  # fmt: skip
        assert code == 2, text
        assert words in one_line_error(capsys.readouterr().err)
    assert run(["bench", "run", manifest, "--config", str(tmp_path / "none.toml"),
                "--out", str(tmp_path / "r")]) == 2  # fmt: skip
    assert "cannot read" in one_line_error(capsys.readouterr().err)
