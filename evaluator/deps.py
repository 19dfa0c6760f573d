"""What the application needs from the outside world, passed in as one :class:`Deps`.

``main`` builds the real ones once (:func:`real_deps`); tests build their own, e.g. a fake
index. Below ``main`` nothing reads or sets the process environment: the environment is the
``env`` mapping here, and the model folder travels from ``resolve_model`` to the index.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TextIO

from evaluator.core.groundtruth import Query
from evaluator.core.scoring import Retrieval
from evaluator.model import ModelSource
from evaluator.neuralmind_index import BatchEmbed, BuildInfo


class Index(Protocol):
    """A built-on-demand retrieval index over one snapshot folder."""

    def build(self, *, user_config: Path | None = None,
              cache_key: str | None = None) -> BuildInfo: ...

    def ask(self, query: Query, *, judge: BatchEmbed | None = None,
            columns: BatchEmbed | None = None) -> tuple[Retrieval, float]:
        """Ask ``query`` read-only and judge the context: ``judge`` is the run's judge
        model (its similarity route; ``None``: the terms rule alone); ``columns`` computes
        the ``--embed`` columns."""
        ...

    def rank(self, question: str) -> tuple[str, ...]: ...

    def close(self) -> None: ...


class IndexFactory(Protocol):
    def __call__(self, tree: Path, *, backend: str, graph_source: str,
                 model: ModelSource) -> Index: ...


class Git(Protocol):
    """The git operations the evaluator needs (:class:`evaluator.snapshot.GitRepo`), run with
    an environment built from ``Deps.env`` (never the whole process environment)."""

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
                       skipped: list[str] | None = None,
                       unindexable: list[str] | None = None) -> tuple[str, ...]: ...


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


def real_deps(env: Mapping[str, str], stdout: TextIO, stderr: TextIO, *,
              session_factory: Callable[[], Any] | None = None) -> Deps:
    """The real adapters (NeuralMind, git, the model resolver, requests)."""
    from evaluator import github, model
    from evaluator.neuralmind_index import NeuralMindIndex, neuralmind_version
    from evaluator.snapshot import GitRepo

    return Deps(env=env, stdout=stdout, stderr=stderr, index_factory=NeuralMindIndex,
                git=GitRepo(env),
                # Once per run: a baseline precheck, sides and sections ask again.
                resolve_model=functools.cache(lambda cache: model.resolve_model(cache, env)),
                session_factory=session_factory or github.new_session,
                library_version=neuralmind_version)
