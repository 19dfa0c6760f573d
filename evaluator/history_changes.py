"""Read a mined commit's change from git for :func:`evaluator.core.commit_filters.judge`:
its ``-U0`` patch over the modules it touched, each module before and after the commit
(``git cat-file``) and today (the checkout)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluator.core.commit_filters import Judged, ModuleDiff, PatchSide, judge, patch_sides
from evaluator.core.commits import SKIP_SIZE, HistoryCandidate
from evaluator.errors import GitOutputTooLarge
from evaluator.snapshot import read_source


def _text(raw: bytes | None) -> str | None:
    return None if raw is None else raw.decode("utf-8", "replace")


def read_change(root: Path, git: Any, found: HistoryCandidate) -> Judged:
    """The commit's change over the modules it touched, judged; over the size limit
    (:data:`SKIP_SIZE`) when git prints more of its patch or of a module than is read
    (:data:`evaluator.git_repo.MAX_PATCH_BYTES`: one line of any length, a blob with no
    newline)."""
    try:
        return _read_change(root, git, found)
    except GitOutputTooLarge:
        return Judged(SKIP_SIZE, {}, {})


def _read_change(root: Path, git: Any, found: HistoryCandidate) -> Judged:
    commit = found.commit
    old_of = {c.path: c.old for c in commit.changes if c.old is not None}
    wanted = set(found.paths_then.values())
    paths = sorted(wanted | {old_of[p] for p in wanted if p in old_of})
    sides = patch_sides(git.commit_patch(root, commit.sha, paths))
    parent = commit.parents[0] if commit.parents else None
    diffs = []
    for module in sorted(found.grades):
        then = found.paths_then[module]
        side = sides.get(then, PatchSide((), ()))
        before = _text(git.file_blob(root, parent, old_of.get(then, then))) \
            if parent is not None else None
        diffs.append(ModuleDiff(module=module, added=side.added,
                                deleted=side.deleted,
                                before=before, after=_text(git.file_blob(root, commit.sha,
                                                                         then)),
                                today=read_source(root, module)))
    return judge(diffs)
