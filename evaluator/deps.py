"""What the application needs from the outside world, passed in as one :class:`Deps`.

``main`` builds the real ones once (:func:`real_deps`); tests build their own, e.g. a fake
index. Below ``main`` nothing reads or sets the process environment: the environment is the
``env`` mapping here, and the model folder travels from ``resolve_model`` to the index.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TextIO

from evaluator.core.systems import SYSTEMS, Answer, SystemEntry
from evaluator.model import ModelSource
from evaluator.neuralmind_index import BuildInfo
from evaluator.progress import run_clock


class Index(Protocol):
    """A built-on-demand retrieval index over one snapshot folder: a retrieval system
    (:class:`~evaluator.core.systems.System`) that is built first and closed after."""

    def build(self, *, user_config: Path | None = None,
              cache_key: str | None = None) -> BuildInfo: ...

    def ask(self, question: str) -> Answer:
        """Answer ``question`` read-only (no judging: the evaluator judges the answer)."""
        ...

    def close(self) -> None: ...


class IndexFactory(Protocol):
    """``(tree, *, backend, graph_source, model) -> Index``; a variant's other options
    (``synapses``, see :data:`evaluator.core.systems.SYSTEMS`) come as keywords only when
    the variant sets them."""

    def __call__(self, tree: Path, *, backend: str, graph_source: str,
                 model: ModelSource, **options: str) -> Index: ...


class Git(Protocol):
    """The git operations the evaluator and ``init --from-history`` need
    (:class:`evaluator.git_repo.GitRepo`), run with an environment built from ``Deps.env``
    (never the whole process environment)."""

    def head_commit(self, root: Path) -> str | None: ...

    def resolve_commit(self, repo: Path, ref: str) -> str: ...

    def fetch_commit(self, repo: Path, sha: str) -> bool: ...

    def merge_base(self, repo: Path, a: str, b: str) -> str: ...

    def file_at(self, repo: Path, sha: str, rel: str) -> bool: ...

    def export_commit(self, repo: Path, sha: str, dest: Path, *,
                      skipped: list[str] | None = None) -> tuple[str, ...]: ...

    def changed_files(self, repo: Path, base: str, head: str) -> tuple[str, ...]: ...

    def repo_prefix(self, root: Path) -> str: ...

    def worktree_state(self, root: Path, queries: Path) -> tuple[bool, bool]: ...

    def checkout_files(self, root: Path, *, exclude: Sequence[Path] = (),
                       exclude_files: Iterable[Path | None] = (),
                       skipped: list[str] | None = None,
                       unindexable: list[str] | None = None,
                       untracked: list[str] | None = None) -> tuple[str, ...]: ...

    def commit_log(self, repo: Path, *, since: str | None = ...,
                   limit: int = ...) -> bytes: ...

    def commit_patch(self, repo: Path, sha: str, paths: Sequence[str]) -> bytes: ...

    def is_shallow(self, repo: Path) -> bool: ...

    def file_blob(self, repo: Path, sha: str, rel: str) -> bytes | None: ...


@dataclass(frozen=True)
class Deps:
    env: Mapping[str, str]
    stdout: TextIO
    stderr: TextIO
    index_factory: IndexFactory
    git: Git
    resolve_model: Callable[[Path], ModelSource]
    session_factory: Callable[[], Any]
    library_version: Callable[[], str]
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    #: Seconds since the command started (monotonic): the one clock every progress line of
    #: the run reads, so it only moves forward.
    elapsed: Callable[[], float] = field(default_factory=run_clock)
    #: How a heartbeat waits between its checks (``None``: a real wait; tests drive a fake
    #: clock with their own).
    pause: Callable[[float], object] | None = None
    #: The GitHub token (``Settings.github_token``, read once by :func:`evaluator.settings.
    #: token_of`), for the HTTP client alone; never shown.
    github_token: str | None = field(default=None, repr=False)


def load_factory(entry: SystemEntry) -> Any:
    """The factory a registry entry names (``"module:attribute"``), imported now."""
    module, _, attribute = entry.factory.partition(":")
    return getattr(importlib.import_module(module), attribute)


def _new_session() -> Any:
    """:func:`evaluator.http_transport.new_session`, imported when a command first talks to GitHub
    (requests is not imported by the commands that never do)."""
    from evaluator import http_transport

    return http_transport.new_session()


def real_deps(env: Mapping[str, str], stdout: TextIO, stderr: TextIO, *,
              session_factory: Callable[[], Any] | None = None,
              github_token: str | None = None) -> Deps:
    """The real adapters (NeuralMind, git, the model resolver, requests) and the token."""
    from evaluator import model
    from evaluator.git_repo import GitRepo
    from evaluator.neuralmind_index import cached_model_dir, neuralmind_version

    evaluated = next(e for e in SYSTEMS.values() if e.evaluated)
    return Deps(env=env, stdout=stdout, stderr=stderr, index_factory=load_factory(evaluated),
                git=GitRepo(env),
                # Once per run: a baseline precheck, sides and sections ask again.
                resolve_model=functools.cache(lambda cache: model.resolve_model(
                    cache, env, cached_model_dir=cached_model_dir)),
                session_factory=session_factory or _new_session,
                library_version=neuralmind_version, github_token=github_token)
