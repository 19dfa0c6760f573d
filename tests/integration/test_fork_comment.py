"""`comment --run-id`: the fork-safe second stage fetches the run's artifact itself.

Against the fake GitHub on 127.0.0.1 (tests/fake_github.py), which serves workflow runs,
their artifact lists, the artifact zip (a redirect, to a second server for the storage-host
cases) and pull requests. Hostile artifacts and answers must end in exit 2 with a message
naming the problem, no comment, no traceback and never the token.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from evaluator import artifact
from evaluator.cli import IO, main
from tests.fake_github import PR, REPO, Scripted, running

TOKEN = "ghs_fork-comment-token-DO-NOT-PRINT-42"
SHA = "c0ffee" + "0" * 34
OTHER_SHA = "bad" + "1" * 37
RUN = 4242


@pytest.fixture(scope="module")
def results_bytes(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A real results.json from an offline evaluation of the bundled example."""
    out = tmp_path_factory.mktemp("results")
    err = io.StringIO()
    code = main(["evaluate", "--example", "--backend", "in_memory", "--quiet",
                 "--output-dir", str(out), "--cache-dir", str(out / "cache")],
                io=IO(env={}, stdout=io.StringIO(), stderr=err))
    assert code in (0, 1), err.getvalue()
    return (out / "results.json").read_bytes()


def make_zip(members: dict[str, bytes], *, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def pr_json(number: int = PR, sha: str = SHA) -> bytes:
    return json.dumps({"pr_number": number, "head_sha": sha}).encode()


def good_zip(results: bytes) -> bytes:
    return make_zip({"results.json": results, "pr.json": pr_json()})


@pytest.fixture
def env(server, tmp_path: Path) -> dict[str, str]:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"workflow_run": {"id": RUN, "head_sha": SHA,
                                                  "pull_requests": []}}))
    return {"GITHUB_API_URL": server.base_url, "GITHUB_REPOSITORY": REPO,
            "GITHUB_EVENT_NAME": "workflow_run", "GITHUB_EVENT_PATH": str(event),
            "GITHUB_TOKEN": TOKEN, "GITHUB_ACTIONS": "true",
            "GITHUB_OUTPUT": str(tmp_path / "output.txt")}


def comment(cli, env, *extra: str):
    run = cli("comment", "--run-id", str(RUN), "--no-fail-on-floors", *extra, env=env)
    assert TOKEN not in run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    return run


def refused(cli, server, env, needle: str, *extra: str) -> str:
    run = comment(cli, env, *extra)
    assert run.code == 2, run.stderr
    assert needle in run.stderr, run.stderr
    assert server.on_issue(PR) == []
    assert not server.writes()
    return run.stderr


# ----------------------------------------------------------------------------- success


def test_same_repo_run_is_fetched_checked_and_posted(cli, server, env, results_bytes):
    server.add_run(RUN, head_sha=SHA, pull_requests=[PR],
                   artifacts={"other": b"x", "retrieval-eval": good_zip(results_bytes)})
    run = comment(cli, env)
    assert run.code == 0, run.stderr
    [posted] = server.on_issue(PR)
    assert "neuralmind-retrieval-eval:comment-key=default" in posted["body"]
    assert "| Metric | Value |" in posted["body"]
    assert f"run {RUN}: artifact 'retrieval-eval' checked (pull request #{PR}" in run.stderr
    paths = [r.path.split("?")[0] for r in server.sent("GET")]
    assert f"/repos/{REPO}/actions/runs/{RUN}" in paths
    assert f"/repos/{REPO}/actions/runs/{RUN}/artifacts" in paths
    assert any(p.startswith("/blobs/") for p in paths)
    # Same host: the API's own redirect target may receive the token, nothing else does.
    assert all(r.headers.get("Authorization") == f"Bearer {TOKEN}" for r in server.sent())


def test_fork_run_is_checked_against_the_pull_requests_head(cli, server, env, results_bytes):
    server.add_run(RUN, head_sha=SHA, pull_requests=[],
                   artifacts={"retrieval-eval": good_zip(results_bytes)})
    server.pulls[PR] = {"number": PR, "head": {"sha": SHA}}
    run = comment(cli, env)
    assert run.code == 0, run.stderr
    assert len(server.on_issue(PR)) == 1
    assert any(r.path == f"/repos/{REPO}/pulls/{PR}" for r in server.sent("GET"))


def test_cross_host_redirect_gets_no_authorization(cli, server, env, results_bytes):
    server.add_run(RUN, head_sha=SHA, pull_requests=[PR],
                   artifacts={"retrieval-eval": good_zip(results_bytes)})
    with running() as storage:
        server.storage = storage
        run = comment(cli, env)
        assert run.code == 0, run.stderr
        [blob] = storage.sent()
        assert blob.path.startswith("/blobs/")
        assert "Authorization" not in blob.headers
        assert not any(TOKEN in value for value in blob.headers.values())
        assert blob.headers.get("Accept-Encoding") == "identity"  # nothing inflates it
    assert len(server.on_issue(PR)) == 1


def test_a_storage_5xx_is_tried_again(cli, server, env, results_bytes):
    server.add_run(RUN, head_sha=SHA, pull_requests=[PR],
                   artifacts={"retrieval-eval": good_zip(results_bytes)})
    with running() as storage:
        server.storage = storage
        storage.script.append(Scripted("GET", 503, body={"message": "busy"}))
        run = comment(cli, env)
        assert run.code == 0, run.stderr
        assert len(storage.sent("GET")) == 2
    assert len(server.on_issue(PR)) == 1


def test_artifact_pages_are_followed(cli, server, env, results_bytes):
    server.artifacts_per_page = 2
    filler = {f"log-{i}": b"x" for i in range(5)}
    server.add_run(RUN, head_sha=SHA, pull_requests=[PR],
                   artifacts={**filler, "retrieval-eval": good_zip(results_bytes)})
    assert comment(cli, env).code == 0
    assert len(server.on_issue(PR)) == 1


def test_custom_artifact_name(cli, server, env, results_bytes):
    server.add_run(RUN, head_sha=SHA, pull_requests=[PR],
                   artifacts={"eval-results": good_zip(results_bytes)})
    assert comment(cli, env, "--artifact-name", "eval-results").code == 0


def test_action_inputs_run_id_without_results(cli, server, env, results_bytes, tmp_path):
    server.add_run(RUN, head_sha=SHA, pull_requests=[],
                   artifacts={"retrieval-eval": good_zip(results_bytes)})
    server.pulls[PR] = {"number": PR, "head": {"sha": SHA}}
    action_env = {**env, "GITHUB_WORKSPACE": str(tmp_path), "INPUT_MODE": "comment",
                  "INPUT_RUN-ID": str(RUN), "INPUT_FAIL-ON-FLOORS": "false",
                  "INPUT_GITHUB-TOKEN": TOKEN}
    del action_env["GITHUB_TOKEN"]
    run = cli("action", env=action_env)
    assert run.code == 0, run.stderr
    assert TOKEN not in run.stdout + run.stderr
    assert len(server.on_issue(PR)) == 1


# ----------------------------------------------------------------------------- refusals


def test_missing_artifact(cli, server, env):
    server.add_run(RUN, head_sha=SHA, pull_requests=[PR], artifacts={"logs": b"x"})
    refused(cli, server, env, f"workflow run {RUN} has no artifact named 'retrieval-eval' "
            "(it does not exist; the run's artifacts: 'logs')")


def test_expired_artifact(cli, server, env, results_bytes):
    server.add_run(RUN, head_sha=SHA, pull_requests=[PR],
                   artifacts={"retrieval-eval": good_zip(results_bytes)},
                   expired=("retrieval-eval",))
    refused(cli, server, env, "it has expired")


def test_unknown_run(cli, server, env):
    refused(cli, server, env, f"actions/runs/{RUN} failed: HTTP 404")


@pytest.mark.parametrize(("pulls", "members", "pull_head", "needle"), [
    ([PR], {"pr.json": pr_json(sha=OTHER_SHA)}, None,
     f"pr.json names commit {OTHER_SHA[:12]}, but workflow run {RUN} evaluated {SHA[:12]}"),
    ([3], {}, None, f"pr.json names pull request #{PR}, but workflow run {RUN} belongs to #3"),
    ([], {}, OTHER_SHA, f"pull request #{PR} is at commit {OTHER_SHA[:12]}, not at "
     f"{SHA[:12]}"),
    ([], {"pr.json": pr_json(number=0)}, None, "pr_number is not a positive integer"),
    ([], {"pr.json": b'{"pr_number": 7, "head_sha": "HEAD"}'}, None,
     "head_sha is not 40 lowercase hex digits"),
    ([], {"pr.json": b"[7]"}, None, "pr.json is not a JSON object"),
], ids=["commit-mismatch", "listed-pr-mismatch", "fork-pr-moved", "pr-zero", "bad-sha",
        "not-object"])
def test_wrong_pull_request(cli, server, env, results_bytes, pulls, members, pull_head,
                            needle):
    data = make_zip({"results.json": results_bytes, "pr.json": pr_json()} | members)
    server.add_run(RUN, head_sha=SHA, pull_requests=pulls, artifacts={"retrieval-eval": data})
    if pull_head:
        server.pulls[PR] = {"number": PR, "head": {"sha": pull_head}}
    refused(cli, server, env, needle)


def test_explicit_pr_must_match_the_artifact(cli, server, env, results_bytes):
    server.add_run(RUN, head_sha=SHA, pull_requests=[PR],
                   artifacts={"retrieval-eval": good_zip(results_bytes)})
    refused(cli, server, env, f"is for pull request #{PR}, not #8 given as --pr", "--pr", "8")


@pytest.mark.parametrize(("members", "needle"), [
    ({"../results.json": b"{}", "pr.json": pr_json()}, 'unexpected member "../results.json"'),
    ({"/etc/results.json": b"{}", "pr.json": pr_json()}, "unexpected member"),
    ({"sub/results.json": b"{}", "pr.json": pr_json()}, "unexpected member"),
    ({"results.json": b"{}", "pr.json": pr_json(), "run.sh": b"rm -rf /"},
     'unexpected member "run.sh"'),
    ({"pr.json": pr_json()}, "the zip has no results.json"),
    ({"results.json": b"{}"}, "the zip has no pr.json"),
    ({"results.json": b"\xff\xfe", "pr.json": pr_json()}, "results.json is not UTF-8"),
    ({"results.json": b"{not json", "pr.json": pr_json()}, "results.json is not valid JSON"),
    ({"results.json": b'{"schema_version": 999}', "pr.json": pr_json()},
     "results schema_version 999 is not supported"),
    ({"results.json": b"[" * 100_000, "pr.json": pr_json()},
     "results.json is nested too deeply"),
], ids=["dotdot", "absolute", "folder", "extra", "no-results", "no-pr", "not-utf8",
        "not-json", "schema", "deep"])
def test_hostile_zip_members(cli, server, env, members, needle):
    server.add_run(RUN, head_sha=SHA, pull_requests=[PR],
                   artifacts={"retrieval-eval": make_zip(members)})
    refused(cli, server, env, needle)


def test_zip_bomb_is_refused_before_it_unpacks(cli, server, env):
    bomb = make_zip({"results.json": b"0" * (artifact.MAX_MEMBER_BYTES + 1),
                     "pr.json": pr_json()})
    assert len(bomb) < 100_000  # tiny on the wire
    server.add_run(RUN, head_sha=SHA, pull_requests=[PR], artifacts={"retrieval-eval": bomb})
    refused(cli, server, env, '"results.json" unpacks to')


def test_too_many_members(cli, server, env):
    members = {f"f{i}": b"" for i in range(artifact.MAX_MEMBERS + 1)}
    server.add_run(RUN, head_sha=SHA, pull_requests=[PR],
                   artifacts={"retrieval-eval": make_zip(members)})
    refused(cli, server, env, f"the zip has {artifact.MAX_MEMBERS + 1} members")


def test_not_a_zip(cli, server, env):
    server.add_run(RUN, head_sha=SHA, pull_requests=[PR],
                   artifacts={"retrieval-eval": b"<html>not a zip</html>"})
    refused(cli, server, env, "the download is not a zip file")


def test_oversize_artifact_is_not_downloaded(cli, server, env):
    server.add_run(RUN, head_sha=SHA, pull_requests=[PR], artifacts={"retrieval-eval": b"x"})
    server.artifacts[RUN][0]["size_in_bytes"] = artifact.MAX_ZIP_BYTES + 1
    refused(cli, server, env, "over the limit")
    assert not any("/zip" in r.path or "/blobs/" in r.path for r in server.sent())


def test_oversize_download_stops(cli, server, env):
    """The listing lies about the size; the stream stops past the limit."""
    big = b"\0" * (artifact.MAX_ZIP_BYTES + 65_537)
    server.add_run(RUN, head_sha=SHA, pull_requests=[PR], artifacts={"retrieval-eval": big})
    server.artifacts[RUN][0]["size_in_bytes"] = 100
    server.blob_content_length = None
    refused(cli, server, env, "over the limit")


def test_declared_oversize_download_is_refused(cli, server, env, results_bytes):
    server.add_run(RUN, head_sha=SHA, pull_requests=[PR],
                   artifacts={"retrieval-eval": good_zip(results_bytes)})
    server.blob_content_length = artifact.MAX_ZIP_BYTES + 1
    refused(cli, server, env, "over the limit of")


def test_redirect_to_another_scheme_is_refused(cli, server, env, results_bytes):
    server.add_run(RUN, head_sha=SHA, pull_requests=[PR],
                   artifacts={"retrieval-eval": good_zip(results_bytes)})
    server.script.append(Scripted("GET", 302, headers={"Location": "file:///etc/passwd"},
                                  path_contains="/zip"))
    refused(cli, server, env, "redirected to a 'file' URL; not followed")


def test_storage_error_names_the_host_without_the_token(cli, server, env, results_bytes):
    server.add_run(RUN, head_sha=SHA, pull_requests=[PR],
                   artifacts={"retrieval-eval": good_zip(results_bytes)})
    with running() as storage:
        server.storage = storage
        storage.script.append(Scripted("GET", 403, body={"message": TOKEN}))
        stderr = refused(cli, server, env, "storage host")
        assert "Authorization" not in storage.sent()[0].headers
    assert TOKEN not in stderr


def test_no_token(cli, server, env):
    del env["GITHUB_TOKEN"]
    refused(cli, server, env, "no GitHub token to download the run's artifact")


def test_results_and_run_id_are_exclusive(cli, server, env, tmp_path):
    refused(cli, server, env, "either --results or --run-id", "--results",
            str(tmp_path / "r.json"))


def test_comment_needs_results_or_run_id(cli, server, env):
    run = cli("comment", env=env)
    assert run.code == 2
    assert "--results FILE, or --run-id ID" in run.stderr


def test_deadline_covers_the_download(cli, server, env, results_bytes):
    """A storage host that stalls cannot hold the job past comment-timeout."""
    server.add_run(RUN, head_sha=SHA, pull_requests=[PR],
                   artifacts={"retrieval-eval": good_zip(results_bytes)})
    server.script.append(Scripted("GET", 200, body={}, delay=4.0, path_contains="/blobs/"))
    refused(cli, server, env, "deadline", "--comment-timeout", "1")


def test_fetching_and_posting_share_one_deadline(cli, server, env, results_bytes):
    """Each step alone fits in comment-timeout; together they do not: the post is refused."""
    server.add_run(RUN, head_sha=SHA, pull_requests=[PR],
                   artifacts={"retrieval-eval": good_zip(results_bytes)})
    server.script.append(Scripted("GET", delay=1.3, apply=True, path_contains="/blobs/"))
    server.script.append(Scripted("GET", delay=1.3, apply=True,
                                  path_contains=f"/issues/{PR}/comments"))
    stderr = refused(cli, server, env, "deadline", "--comment-timeout", "2")
    assert f"/issues/{PR}/comments" in stderr  # the download passed; the listing ran out


def test_a_zip_header_that_lies_about_the_size_is_refused():
    honest = make_zip({"results.json": b"x" * 2_000, "pr.json": pr_json()},
                      compression=zipfile.ZIP_STORED)
    # Claim 10 bytes unpacked in both headers while 2,000 are stored.
    lying = honest.replace((2_000).to_bytes(4, "little") * 2,
                           (2_000).to_bytes(4, "little") + (10).to_bytes(4, "little"))
    assert lying != honest
    with pytest.raises(artifact.GitHubError, match=r"\"results\.json\" cannot be read"):
        artifact.read_zip(lying, max_member_bytes=100)
    with pytest.raises(artifact.GitHubError, match="unpacks to 2,000 bytes"):
        artifact.read_zip(honest, max_member_bytes=100)
