"""`bench run --executor ray` on a local Ray cluster on this machine: a head and one worker
node, each a separate raylet with one CPU (on the machine's own address: Ray 2.60's driver does
not connect to raylets started with node_ip_address 127.0.0.1). The same reports and run.json as
the local executor, clips run on both nodes, and a resumed run redoes only what is missing."""

from __future__ import annotations

import json

import pytest

from gaze.cli.main import run
from gaze.models.transcript import read_transcript
from gaze.schema.report import Report

ray = pytest.importorskip("ray", reason="extra 'ray' not installed (pip install 'gaze[ray]')")

VARYING = ("wall_time_s", "created_at")
"""Manifest fields that differ between any two runs (when and how long)."""


@pytest.fixture(scope="module")
def cluster():
    from ray.cluster_utils import Cluster

    node = {"num_cpus": 1, "include_dashboard": False}
    local = Cluster(initialize_head=True, head_node_args=node)
    local.add_node(**node)
    local.wait_for_nodes()
    yield local
    local.shutdown()


def comparable(path) -> dict:
    report = json.loads(Report.model_validate_json(path.read_text()).model_dump_json())
    for key in VARYING:
        report["manifest"].pop(key)
    return report


def test_a_ray_run_writes_the_local_runs_reports_on_both_nodes(forge_dir, tmp_path, cluster):
    manifest = forge_dir / "manifest.jsonl"
    rows = [json.loads(line) for line in manifest.read_text().splitlines()]
    common = ["--model", "scripted:auto", "--no-cache", "--clips-in-flight", "2"]
    assert run(["bench", "run", str(manifest), "--out", str(tmp_path / "local"), *common]) == 0
    on_ray = ["bench", "run", str(manifest), "--out", str(tmp_path / "ray"), *common]
    on_ray += ["--executor", "ray", "--ray-address", cluster.address]
    assert run(on_ray) == 0
    for row in rows:
        name = f"{row['clip_id']}.json"
        assert comparable(tmp_path / "ray" / "reports" / name) == comparable(
            tmp_path / "local" / "reports" / name
        )
        # the clip's model exchanges come back from the worker to the run folder
        transcripts = [
            sorted(
                (x["role"], x["label"], x["schema"])
                for x in read_transcript(
                    tmp_path / where / "transcripts" / f"{row['clip_id']}.jsonl"
                )[1]
            )
            for where in ("ray", "local")
        ]
        assert transcripts[0] == transcripts[1] and transcripts[0]
    local_run = json.loads((tmp_path / "local" / "run.json").read_text())
    ray_run = json.loads((tmp_path / "ray" / "run.json").read_text())
    for key in ("settings", "manifest_sha256", "done", "calls", "images", "failed"):
        assert ray_run[key] == local_run[key]
    executor = ray_run["executor"]
    assert executor["name"] == "ray" and executor["workers"] == 2
    assert len(executor["clips_per_node"]) == 2  # both nodes ran clips
    assert sum(executor["clips_per_node"].values()) == len(rows)

    # resume: one report lost, one clip redone, the rest kept
    lost = tmp_path / "ray" / "reports" / f"{rows[0]['clip_id']}.json"
    kept = tmp_path / "ray" / "reports" / f"{rows[1]['clip_id']}.json"
    kept_before = kept.read_text()
    lost.unlink()
    assert run(on_ray) == 0
    again = json.loads((tmp_path / "ray" / "run.json").read_text())
    assert again["done"] == 1 and again["resumed"] == len(rows) - 1
    assert lost.exists() and kept.read_text() == kept_before


def test_ray_options_need_the_ray_executor(forge_dir, tmp_path, capsys):
    args = ["bench", "run", str(forge_dir / "manifest.jsonl"), "--out", str(tmp_path / "x")]
    args += ["--model", "scripted:auto", "--ray-workers", "2"]
    assert run(args) == 2
    assert "need --executor ray" in capsys.readouterr().err


def test_ray_workers_share_a_fleet_of_model_servers(forge_dir, tmp_path, cluster):
    from tests.standin import StandIn, clip_work, minimal_chat

    manifest = forge_dir / "manifest.jsonl"
    rows = manifest.read_text().splitlines()
    with StandIn(responder=minimal_chat) as one, StandIn(responder=minimal_chat) as two:
        args = ["bench", "run", str(manifest), "--out", str(tmp_path / "fleet")]
        args += ["--model", "openai:m", "--no-cache", "--executor", "ray"]
        args += ["--ray-address", cluster.address, "--clips-in-flight", "2"]
        args += ["--base-url", one.url + "/v1", "--base-url", two.url + "/v1"]
        assert run(args) == 0
        served = [len(clip_work(one.seen)), len(clip_work(two.seen))]
    run_json = json.loads((tmp_path / "fleet" / "run.json").read_text())
    assert run_json["done"] == len(rows) and run_json["failed"] == {}
    assert sum(served) == run_json["calls"]  # every call the reports count reached a server
    # each clip's calls all reached the server its clip id prefers (the ports, and so the
    # split, change from run to run: 1 run in 128 sends all 8 clips to one server)
    preferred = [0, 0]
    for report_file in (tmp_path / "fleet" / "reports").glob("*.json"):
        report = json.loads(report_file.read_text())
        first = _preferred(report["clip_id"], [one.url + "/v1", two.url + "/v1"])
        preferred[first] += sum(report["manifest"]["calls"].values())
    assert served == preferred


def _preferred(clip_id: str, urls: list[str]) -> int:
    """Index of the endpoint a pool over ``urls`` prefers for the clip's requests."""
    from gaze.models.pool import Endpoint, EndpointPool, clip_affinity
    from gaze.models.scripted import ScriptedBackbone
    from gaze.redact import public_url

    members = [Endpoint(ScriptedBackbone(lambda r: {}), public_url(u)) for u in urls]
    token = clip_affinity.set(clip_id)
    try:
        best = EndpointPool(members).preference(None)[0]  # type: ignore[arg-type]
    finally:
        clip_affinity.reset(token)
    return members.index(best)
