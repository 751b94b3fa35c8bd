"""A fleet of three stand-in servers behind one `--base-url` list, through the real openai SDK
and `gaze bench run`: every clip's requests reach one server, and when a server dies mid-run
its work moves to the others without a failed clip."""

from __future__ import annotations

import json
import threading

from gaze.cli.main import run
from gaze.schema.report import Report
from tests.standin import Reply, Seen, StandIn, error_reply, minimal_chat, schema_name


def manifest_of_distinct_tasks(forge_dir, tmp_path, count=4):
    rows, seen = [], set()
    for line in (forge_dir / "manifest.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["instruction"] not in seen:
            seen.add(row["instruction"])
            rows.append(line)
    manifest = forge_dir / f"distinct{count}.jsonl"
    manifest.write_text("\n".join(rows[:count]) + "\n")
    return manifest, [json.loads(r) for r in rows[:count]]


def clip_of(body, rows) -> str | None:
    text = json.dumps(body)
    found = [r["clip_id"] for r in rows if r["instruction"] in text]
    return found[0] if len(found) == 1 else None


class Fleet:
    """Three servers; the one that gets the first clip request dies at its third (open
    connections drop, new ones are refused), so a server that carries work always dies."""

    def __init__(self) -> None:
        self.servers: dict[str, StandIn] = {}
        self.victim: str | None = None
        self.victim_requests = 0
        self.lock = threading.Lock()

    def responder(self, name: str):
        def respond(body):
            if schema_name(Seen("POST", "", {}, body)) in (None, "Probe"):
                return minimal_chat(body)
            with self.lock:
                self.victim = self.victim or name
                if name == self.victim:
                    self.victim_requests += 1
                    dies = self.victim_requests == 3
                    dead = self.victim_requests >= 3
                else:
                    dies = dead = False
            if dies:
                stop = self.servers[name].__exit__
                threading.Thread(target=stop, args=(None, None, None)).start()
            if dead:
                return Reply(200, b"", delay_s=60)  # dropped when the server stops
            return minimal_chat(body)

        return respond


def test_a_fleet_spreads_clips_sticks_by_clip_and_survives_a_dying_server(
    forge_dir, tmp_path, capsys
):
    manifest, rows = manifest_of_distinct_tasks(forge_dir, tmp_path)
    fleet = Fleet()
    with (
        StandIn(responder=fleet.responder("a")) as a,
        StandIn(responder=fleet.responder("b")) as b,
        StandIn(responder=fleet.responder("c")) as c,
        StandIn(responder=minimal_chat) as single,
    ):
        fleet.servers.update(a=a, b=b, c=c)
        out = tmp_path / "fleet"
        args = ["bench", "run", str(manifest), "--out", str(out), "--model", "openai:m"]
        args += ["--clips-in-flight", "2", "--no-cache"]  # at most 16 requests above the least busy
        for server in (a, b, c):
            args += ["--base-url", server.url + "/v1"]
        code = run(args)
        err = capsys.readouterr().err
        assert code == 0, err
        # the same manifest against one server, for comparison
        alone = ["bench", "run", str(manifest), "--out", str(tmp_path / "alone")]
        alone += ["--model", "openai:m", "--no-cache", "--base-url", single.url + "/v1"]
        assert run(alone) == 0
        capsys.readouterr()
        work = {
            name: [s for s in server.seen if schema_name(s) not in (None, "Probe")]
            for name, server in fleet.servers.items()
        }
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["done"] == 4 and run_json["failed"] == {}
    stats = run_json["endpoints"]["openai:m"]
    dead = next(v for k, v in stats.items() if k.startswith(fleet.servers[fleet.victim].url))
    assert dead["marked_down"] >= 1 and dead["failed"] >= 1
    # the reports are what one server gives: nothing lost, nothing flagged but what one server's
    # reports are (the stand-in's critic gives no verdicts: pixel events stay, unverified)
    for row in rows:
        pooled = Report.model_validate_json(
            (out / "reports" / f"{row['clip_id']}.json").read_text()
        )
        one = Report.model_validate_json(
            (tmp_path / "alone" / "reports" / f"{row['clip_id']}.json").read_text()
        )
        assert pooled.events == one.events and pooled.flags == one.flags
        assert "parse_failed" not in one.flags
        assert pooled.assessment.not_assessed == one.assessment.not_assessed
    # where each clip's requests went
    homes: dict[str, set[str]] = {}
    for name, seen_list in work.items():
        for seen in seen_list:
            clip = clip_of(seen.body, rows)
            if clip is not None:
                homes.setdefault(clip, set()).add(name)
    assert len(homes) == len(rows)
    moved = {clip for clip, servers in homes.items() if fleet.victim in servers}
    assert moved and all(len(homes[clip]) >= 2 for clip in moved)  # finished elsewhere
    # every clip the dying server never had stayed on one server
    assert all(len(servers) == 1 for clip, servers in homes.items() if clip not in moved)


def dead_endpoint() -> str:
    """The URL of a server that has gone away (its connections are refused)."""
    gone = StandIn(responder=minimal_chat)
    with gone:
        return gone.url + "/v1"


def diagnose_on(row, forge_dir, urls: list[str], retries: int) -> list[str]:
    args = ["diagnose", str(forge_dir / row.video), "-i", row.instruction, "--json"]
    args += ["--model", "openai:m", "--max-retries", str(retries), "--no-cache"]
    for url in urls:
        args += ["--base-url", url]
    return args


def test_an_endpoint_unreachable_at_start_is_left_out_and_the_clip_runs(
    forge_dir, forge_rows, capsys
):
    row = forge_rows["clean"]
    dead_url = dead_endpoint()
    with StandIn(responder=minimal_chat) as alive:
        code = run(diagnose_on(row, forge_dir, [dead_url, alive.url + "/v1"], retries=1))
        captured = capsys.readouterr()
    assert code == 0, captured.err
    report = Report.model_validate_json(captured.out)
    assert report.flags == [] and report.assessment.not_assessed == []
    assert f"endpoint {dead_url} is down" in captured.err


def test_a_fleet_where_no_endpoint_answers_is_one_line(forge_dir, forge_rows, capsys):
    from tests.cli.test_cli import one_line_error

    row = forge_rows["clean"]
    urls = [dead_endpoint(), dead_endpoint()]
    assert run(diagnose_on(row, forge_dir, urls, retries=0)) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert all(line.startswith("gaze: warning: endpoint") for line in lines[:-1])
    assert "cannot reach" in one_line_error(lines[-1])


def test_the_last_server_up_is_not_rested_for_a_few_transient_errors(forge_dir, forge_rows, capsys):
    """One dead endpoint and one that answers 500, 429 and 503 before recovering: the live one
    must stay in rotation (resting it left no endpoint, and every retry failed at once until
    the circuit breaker ended the clip)."""
    row = forge_rows["clean"]
    faults = [
        error_reply(500, "warming up"),
        error_reply(429, "busy", {"retry-after": "0"}),
        error_reply(503, "overloaded"),
    ]

    def flaky(body):
        if schema_name(Seen("POST", "", {}, body)) not in (None, "Probe") and faults:
            return faults.pop(0)
        return minimal_chat(body)

    with StandIn(responder=flaky) as alive:
        code = run(diagnose_on(row, forge_dir, [dead_endpoint(), alive.url + "/v1"], retries=3))
        captured = capsys.readouterr()
    assert code == 0, captured.err
    assert not faults  # all three faults were met and retried past
    report = Report.model_validate_json(captured.out)
    assert report.flags == [] and report.manifest.failed_requests >= 3
