"""Where the baseline comes from: ``auto`` (the PR's merge base), ``ref:<ref>``, ``file:<path>``.

``auto`` inside a pull-request workflow takes the base and head shas from the event file and
evaluates their merge base; in a workflow run by any other event it means ``none``; on a
local checkout (no ``GITHUB_EVENT_NAME``) it uses the merge base of HEAD with the
default branch (``origin/HEAD``, ``origin/main``, ``origin/master``, ``main``, ``master``:
the first that exists). A commit missing from a shallow clone is fetched when the checkout
allows it; otherwise the message says to set ``fetch-depth: 0``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.core.options import parse_baseline
from evaluator.deps import Git
from evaluator.errors import GitError, InputError
from evaluator.evaluate import BaseRequest
from evaluator.git_repo import SHALLOW_HINT, is_sha

DEFAULT_BRANCHES = ("origin/HEAD", "origin/main", "origin/master", "main", "master")


@dataclass(frozen=True)
class BaselinePlan:
    mode: str  # none | auto | ref | file
    request: BaseRequest | None = None
    file: Path | None = None
    pr_base_sha: str | None = None


def _event(env: Mapping[str, str]) -> dict[str, Any]:
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    except RecursionError:
        raise InputError(f"the GitHub event file {path} is nested too deeply") from None
    return data if isinstance(data, dict) else {}


def _pr_shas(env: Mapping[str, str]) -> tuple[str, str] | None:
    pr = _event(env).get("pull_request")
    if not isinstance(pr, dict):
        return None
    base, head = (pr.get("base") or {}).get("sha"), (pr.get("head") or {}).get("sha")
    if not (isinstance(base, str) and isinstance(head, str)):
        return None
    for name, value in (("base", base), ("head", head)):
        if not is_sha(value):
            # Never hand an event's text to git as a ref: ``--upload-pack=...`` would run.
            raise InputError(f"the GitHub event's pull_request.{name}.sha {value[:60]!r} is "
                             "not a commit sha (40 or 64 hex digits)")
    return base, head


def _commit(git: Git, repo: Path, sha: str) -> str:
    try:
        return git.resolve_commit(repo, sha)
    except GitError:
        if git.fetch_commit(repo, sha):
            return git.resolve_commit(repo, sha)
        raise GitError(f"commit {sha[:12]} is not in this clone and could not be fetched",
                       hint=SHALLOW_HINT) from None


def plan_baseline(spec: str | None, *, root: Path, env: Mapping[str, str],
                  git: Git) -> BaselinePlan:
    """What ``spec`` means for the checkout at ``root`` in the environment ``env``."""
    mode, value = parse_baseline(spec)
    shas = _pr_shas(env)
    pr_base = shas[0] if shas else None
    if mode == "none":
        return BaselinePlan("none")
    if mode == "file":
        assert value is not None
        return BaselinePlan("file", file=Path(value), pr_base_sha=pr_base)
    if mode == "ref":
        assert value is not None
        sha = git.resolve_commit(root, value)
        return BaselinePlan("ref", BaseRequest(sha, f"{value} ({sha[:12]})", ref=value))
    if shas is None and env.get("GITHUB_EVENT_NAME"):
        # In a workflow that is not about a pull request (push, schedule…) there is no
        # base to compare with: auto means none there.
        return BaselinePlan("none")
    if shas is not None:
        base_sha, head_sha = (_commit(git, root, s) for s in shas)
        sha = git.merge_base(root, base_sha, head_sha)
        return BaselinePlan("auto", BaseRequest(
            sha, f"the merge base {sha[:12]} of the PR's base and head", ref=None),
            pr_base_sha=base_sha)
    for branch in DEFAULT_BRANCHES:
        try:
            tip = git.resolve_commit(root, branch)
        except GitError:
            continue
        sha = git.merge_base(root, tip, git.resolve_commit(root, "HEAD"))
        return BaselinePlan("auto", BaseRequest(sha, f"the merge base {sha[:12]} with {branch}",
                                                ref=branch))
    raise InputError("baseline auto needs a pull-request event or a default branch "
                     f"({', '.join(DEFAULT_BRANCHES)}) in the checkout",
                     hint="use --baseline ref:<git-ref> or file:<results.json>")
