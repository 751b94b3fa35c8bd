"""Secrets planted in a base URL (user info, query, path) and in key variables never reach any
output: stderr, the JSON report, --json, the HTML page, batch records, run settings."""

from __future__ import annotations

import json

from gaze.cli.main import run
from gaze.redact import public_url, redact
from tests.standin import StandIn, minimal_chat

SECRETS = ("sk-userpass-9f8e7d6c", "sk-query-1a2b3c4d", "sk-pathkey-5e6f7a8b9c", "hunter2-token")


def secret_url(url: str) -> str:
    host = url.removeprefix("http://")
    return (
        f"http://admin:sk-userpass-9f8e7d6c@{host}/v1/sk-pathkey-5e6f7a8b9c?key=sk-query-1a2b3c4d"
    )


def assert_clean(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, (
                f"{secret} leaked: ...{text[max(0, text.find(secret) - 80) :][:200]}"
            )


def test_redaction_rules():
    assert public_url("http://u:p@h:8000/v1/" + "a" * 40 + "?k=v#f") == "http://h:8000/v1/***"
    assert public_url("http://[::1/v1") == "***"
    text = redact(
        "GET http://u:sk-abcdefgh123@host/x?token=abc failed; api_key=zzz Bearer abcdefghij"
    )
    assert "sk-abcdefgh123" not in text and "abc failed" not in text
    assert "api_key=***" in text and "Bearer abcdefghij" not in text
    # a key begins a word: prompt text such as "every task-relevant object" stays readable
    prose = "every task-relevant object; a disk-shaped lid"
    assert redact(prose) == prose
    assert redact("key sk-abcdefgh123, 'sk-abcdefgh456'") == "key ***, '***'"


def test_a_dead_server_with_secrets_in_its_url_leaks_nothing(
    forge_dir, forge_rows, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "hunter2-token")
    row = forge_rows["clean"]
    with StandIn(responder=minimal_chat) as server:
        url = secret_url(server.url)
    out = tmp_path / "r.json"
    args = ["diagnose", str(forge_dir / row.video), "-i", row.instruction, "--model", "openai:m"]
    code = run([*args, "--base-url", url, "--max-retries", "0", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 2  # the start-up check cannot reach it
    assert "cannot reach http://127.0.0.1" in captured.err
    assert_clean(captured.out, captured.err)


def test_secrets_stay_out_of_reports_html_json_and_batch_records(
    forge_dir, forge_rows, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "hunter2-token")
    row = forge_rows["clean"]
    out, html = tmp_path / "r.json", tmp_path / "r.html"
    with StandIn(responder=minimal_chat) as server:
        url = secret_url(server.url)
        args = ["diagnose", str(forge_dir / row.video), "-i", row.instruction]
        args += ["--model", "openai:m", "--base-url", url, "--json"]
        assert run([*args, "--out", str(out), "--html", str(html)]) == 0
        captured = capsys.readouterr()
        # the server still gets its credentials (httpx sends URL user info as Basic auth)
        assert server.seen[0].headers["authorization"].startswith("Basic ")
        assert server.seen[0].path.startswith("/v1/sk-pathkey-5e6f7a8b9c/")
        report = json.loads(out.read_text())
        assert report["manifest"]["settings"]["base_url"].endswith("/v1/***")
        manifest = tmp_path / "m.jsonl"
        line = json.loads((forge_dir / "manifest.jsonl").read_text().splitlines()[0])
        line["video"] = str(forge_dir / line["video"])
        manifest.write_text(json.dumps(line) + "\n")
        run_dir = tmp_path / "run"
        bench = ["bench", "run", str(manifest), "--out", str(run_dir), "--model", "openai:m"]
        assert run([*bench, "--base-url", url]) == 0
    batch = [p.read_text() for p in run_dir.rglob("*.json")]
    cache = [p.read_bytes().decode("latin-1") for p in tmp_path.rglob("*.sqlite*")]
    assert_clean(captured.out, captured.err, out.read_text(), html.read_text(), *batch, *cache)
    assert_clean(capsys.readouterr().err)


def test_a_role_endpoint_with_secrets_is_recorded_without_them(
    forge_dir, forge_rows, capsys, monkeypatch
):
    monkeypatch.setenv("ROLE_KEY", "hunter2-token")
    row = forge_rows["clean"]
    with StandIn(responder=minimal_chat) as server:
        role = f"critic=openai:big,base_url={secret_url(server.url)},key_env=ROLE_KEY"
        args = ["diagnose", str(forge_dir / row.video), "-i", row.instruction, "--json"]
        code = run([*args, "--model", "scripted:auto", "--role", role])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert_clean(captured.out, captured.err)
