"""The fork-safe comment's input: a workflow run's results artifact, fetched and checked as data.

``mode: comment`` with ``run-id`` (a ``workflow_run`` workflow passes
``${{ github.event.workflow_run.id }}``) calls :func:`fetch_run_results`, which

1. reads the run (``GET /repos/{repo}/actions/runs/{id}``): its head commit and pull requests;
2. lists the run's artifacts (paginated, at most ``MAX_ARTIFACT_PAGES`` pages) and picks the
   newest unexpired one named ``artifact-name``;
3. downloads its zip (the redirect to the storage host is followed without the token) and
   stops past ``MAX_ZIP_BYTES``;
4. reads the zip in memory, never extracting to disk: at most ``MAX_MEMBERS`` members, only
   ``results.json`` and ``pr.json`` at its top (no folders, no ``..``, no duplicates), each
   read to at most ``MAX_MEMBER_BYTES`` uncompressed whatever the header claims;
5. checks ``pr.json`` (``{"pr_number": N, "head_sha": "<40 hex>"}``): its commit must be the
   run's head commit, and the pull request must be one of the run's ``pull_requests`` or,
   for a fork (GitHub lists none), one whose head is still that commit;
6. reads ``results.json`` with the results schema (:func:`evaluator.core.results_reader.from_dict`).

Everything in the artifact was written by the pull request's own workflow file, so nothing in
it is trusted before these checks. Every failure is a :class:`GitHubError` (exit 2).
"""

from __future__ import annotations

import io
import json
import lzma
import re
import zipfile
import zlib
from dataclasses import dataclass
from typing import Any, Final

from evaluator.core.results import Results
from evaluator.core.results_reader import from_dict
from evaluator.errors import GitHubError
from evaluator.github_comments import GitHubClient

MAX_ZIP_BYTES: Final = 20 * 1024 * 1024
MAX_MEMBERS: Final = 8
MAX_MEMBER_BYTES: Final = 16 * 1024 * 1024
MAX_PR_JSON_BYTES: Final = 4_096
RESULTS: Final = "results.json"
PR_JSON: Final = "pr.json"
EXPECTED: Final = frozenset({RESULTS, PR_JSON})
_SHA = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class RunResults:
    """What an evaluation run's artifact says, after every check."""

    results: Results
    pr_number: int
    head_sha: str
    run_id: int
    artifact_id: int


def _refuse(message: str, *, hint: str | None = None) -> GitHubError:
    return GitHubError(f"the results artifact was refused: {message}", hint=hint)


def _pick(artifacts: list[dict[str, Any]], name: str, run_id: int) -> dict[str, Any]:
    named = [a for a in artifacts if a.get("name") == name
             and isinstance(a.get("id"), int) and not isinstance(a.get("id"), bool)
             and a["id"] > 0]
    live = [a for a in named if a.get("expired") is not True]
    if not live:
        others = sorted({str(a.get("name"))[:60] for a in artifacts
                         if isinstance(a.get("name"), str)})[:10]
        listed = ", ".join(repr(n) for n in others) if others else "none"
        state = "has expired" if named else "does not exist"
        raise GitHubError(f"workflow run {run_id} has no artifact named {name!r} (it {state}; "
                          f"the run's artifacts: {listed})",
                          hint="the evaluation workflow must upload its results with "
                               "actions/upload-artifact under that name (artifact-name)")
    return max(live, key=lambda a: int(a["id"]))


def read_zip(data: bytes, *, max_members: int = MAX_MEMBERS,
             max_member_bytes: int = MAX_MEMBER_BYTES) -> dict[str, bytes]:
    """The expected members of an artifact zip, read in memory with every bound applied."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError):
        raise _refuse("the download is not a zip file") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > max_members:
            raise _refuse(f"the zip has {len(infos)} members, more than {max_members}")
        members: dict[str, bytes] = {}
        for info in infos:
            name = info.filename
            shown = json.dumps(name[:80])
            if name not in EXPECTED:
                raise _refuse(f"unexpected member {shown} (only {RESULTS} and {PR_JSON} at "
                              "the top of the zip are accepted)")
            if name in members:
                raise _refuse(f"the member {shown} appears twice")
            if info.flag_bits & 0x1:
                raise _refuse(f"the member {shown} is encrypted")
            limit = MAX_PR_JSON_BYTES if name == PR_JSON else max_member_bytes
            if info.file_size > limit:
                raise _refuse(f"the member {shown} unpacks to {info.file_size:,} bytes, over "
                              f"the limit of {limit:,}")
            try:
                with archive.open(info) as handle:
                    content = handle.read(limit + 1)  # the header's size may lie
            except (zipfile.BadZipFile, NotImplementedError, ValueError, OSError, EOFError,
                    zlib.error, lzma.LZMAError):
                raise _refuse(f"the member {shown} cannot be read: corrupt, or an "
                              "unsupported compression") from None
            if len(content) > limit:
                raise _refuse(f"the member {shown} unpacks to more than {limit:,} bytes")
            members[name] = content
    for name in sorted(EXPECTED):
        if name not in members:
            raise _refuse(f"the zip has no {name}",
                          hint="upload results.json and pr.json at the top of the artifact, "
                               "as examples/fork-safe-evaluate.yml does")
    return members


def _json(content: bytes, name: str) -> Any:
    try:
        return json.loads(content.decode("utf-8"))
    except UnicodeDecodeError:
        raise _refuse(f"{name} is not UTF-8 text") from None
    except ValueError as err:
        raise _refuse(f"{name} is not valid JSON ({err})") from None
    except RecursionError:
        raise _refuse(f"{name} is nested too deeply") from None


def read_pr_json(content: bytes) -> tuple[int, str]:
    """``pr.json``'s pull-request number and head commit, checked for form."""
    meta = _json(content, PR_JSON)
    if not isinstance(meta, dict):
        raise _refuse(f"{PR_JSON} is not a JSON object")
    number, sha = meta.get("pr_number"), meta.get("head_sha")
    if type(number) is not int or not 0 < number < 10**9:
        raise _refuse(f"{PR_JSON}: pr_number is not a positive integer")
    if not isinstance(sha, str) or not _SHA.fullmatch(sha):
        raise _refuse(f"{PR_JSON}: head_sha is not 40 lowercase hex digits")
    return number, sha


def _check_pr(client: GitHubClient, run: dict[str, Any], run_id: int, number: int,
              sha: str) -> None:
    run_sha = run.get("head_sha")
    if not isinstance(run_sha, str) or not _SHA.fullmatch(run_sha):
        raise GitHubError(f"workflow run {run_id} has no head_sha in GitHub's answer")
    if sha != run_sha:
        raise _refuse(f"{PR_JSON} names commit {sha[:12]}, but workflow run {run_id} "
                      f"evaluated {run_sha[:12]}")
    listed = run.get("pull_requests")
    numbers = {p.get("number") for p in listed if isinstance(p, dict)} \
        if isinstance(listed, list) else set()
    if number in numbers:
        return
    if numbers:
        shown = ", ".join(f"#{n}" for n in sorted(n for n in numbers if isinstance(n, int)))
        raise _refuse(f"{PR_JSON} names pull request #{number}, but workflow run {run_id} "
                      f"belongs to {shown}")
    # A fork's run lists no pull requests: the pull request's head must be the run's commit.
    pull = client.pull_request(number)
    head = pull.get("head")
    head_sha = head.get("sha") if isinstance(head, dict) else None
    if head_sha != run_sha:
        now = head_sha[:12] if isinstance(head_sha, str) else "unknown"
        raise _refuse(f"pull request #{number} is at commit {now}, not at {run_sha[:12]} "
                      f"that workflow run {run_id} evaluated (a newer push, or the artifact "
                      "names another pull request)",
                      hint="a newer push gets its own evaluation run and comment")


def fetch_run_results(client: GitHubClient, *, run_id: int, artifact_name: str,
                      max_zip_bytes: int = MAX_ZIP_BYTES) -> RunResults:
    """The checked results of workflow run ``run_id``'s artifact ``artifact_name``."""
    run = client.workflow_run(run_id)
    artifacts = client.list_run_artifacts(run_id)
    artifact = _pick(artifacts, artifact_name, run_id)
    size = artifact.get("size_in_bytes")
    if isinstance(size, int) and size > max_zip_bytes:
        raise _refuse(f"artifact {artifact_name!r} is {size:,} bytes, over the limit of "
                      f"{max_zip_bytes:,}; not downloaded")
    data = client.download_artifact(int(artifact["id"]), max_bytes=max_zip_bytes)
    members = read_zip(data)
    number, sha = read_pr_json(members[PR_JSON])
    _check_pr(client, run, run_id, number, sha)
    source = f"artifact {artifact_name!r} of run {run_id}: {RESULTS}"
    try:
        results = from_dict(_json(members[RESULTS], RESULTS), source)
    except RecursionError:
        raise _refuse(f"{RESULTS} is nested too deeply") from None
    return RunResults(results=results, pr_number=number, head_sha=sha, run_id=run_id,
                      artifact_id=int(artifact["id"]))
