"""``embedding`` (``chunks=index``): NeuralMind's public benchmark's embedding-rag, a plain
vector search of the run's own NeuralMind build (issue 23), on real builds of a real git
repository: its ranking is ``NeuralMind.search``'s files in order, filtered to the module
universe, deep enough for ``--depth``; its context the top 8 hits' source; no second build."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from evaluator import app, judging
from evaluator.core.systems import SYSTEMS, parse_systems
from evaluator.core.universe import select_universe
from evaluator.errors import EXIT_FLOORS, EXIT_OK, ConfigError
from evaluator.model import ENV, ModelSource
from evaluator.neuralmind_index import IndexHit, NeuralMindIndex
from evaluator.refsystems.chunks import chunks_of
from evaluator.refsystems.embedding import EmbeddingIndex, embedding_system
from evaluator.refsystems.indexsearch import TOP_HITS, IndexSearch
from evaluator.settings import settings_for
from evaluator.snapshot import checkout_files
from tests.conftest import make_repo
from tests.integration.test_app_fake_index import deps_with
from tests.integration.test_refsystems import WordVectors

QUESTIONS = ("verify the signature of an incoming Stripe webhook",
             "refund a charge", "how are users deleted from the database",
             "decode and validate a JWT token")
TESTS = {"tests/test_billing.py": "def test_refund_charge():\n    '''refund a charge'''\n",
         "tests/test_webhook.py": "def test_stripe_webhook_signature():\n    pass\n"}


@pytest.fixture
def built(tmp_path):
    """A real in_memory NeuralMind build of the sample project with two test files."""
    tree = make_repo(tmp_path / "tree", TESTS)
    shutil.rmtree(tree / ".git")
    index = NeuralMindIndex(tree, backend="in_memory", graph_source="builtin",
                            model=ModelSource(None, "not needed"))
    index.build()
    yield index
    index.close()


def universe_of(tree: Path) -> tuple[str, ...]:
    """The default module universe of the snapshot's files (as the run selects it)."""
    return select_universe([f for f in checkout_files(tree) if not f.startswith(".")
                            and f != "retrieval_queries.json"]).modules


def files_of(hits) -> list[str]:
    return list(dict.fromkeys(h.module for h in hits if h.module))


def test_the_ranking_is_neuralmind_search_files_in_order(built):
    universe = universe_of(built.tree)
    system = IndexSearch(universe, index=built, depth=5)
    for question in QUESTIONS:
        answer = system.ask(question)
        # NeuralMind.search itself, as the harness calls it (n=8) and as deep as it goes
        top = built._mind.search(question, n=TOP_HITS, learn=False)
        every = built._mind.search(question, n=10_000, learn=False)
        order = list(dict.fromkeys(str(h["metadata"]["source_file"]) for h in every))
        assert list(answer.ranked_modules) == order[:len(answer.ranked_modules)]
        reached = [m for m in answer.ranked_modules if m in universe]
        assert len(reached) >= min(5, len([m for m in order if m in universe]))
        assert len(answer.documents) == len(top) == TOP_HITS
        assert answer.context == "\n\n".join(answer.documents)
        assert answer.tokens == len(answer.context) // 4


def test_the_context_is_each_hits_source_read_from_the_build(built):
    system = IndexSearch(universe_of(built.tree), index=built, depth=5)
    question = "verify the signature of an incoming Stripe webhook"
    hits = built.search(question, TOP_HITS)
    answer = system.ask(question)
    assert any(h.line is not None for h in hits)
    for hit, document in zip(hits, answer.documents, strict=True):
        if hit.line is None:
            assert document == hit.document
            continue
        source = (built.tree / hit.module).read_text(encoding="utf-8")
        chunk = next(c for c in chunks_of(hit.module, source)
                     if c.line <= hit.line <= c.line + c.text.count("\n"))
        assert document == chunk.text
    assert "def verify_webhook" in answer.documents[0]  # source, not the embedded docstring


class Listed:
    """A stand-in build: ``search`` returns the first n of a fixed list of hits, counting
    the searches."""

    def __init__(self, modules: list[str]) -> None:
        self.hits = tuple(IndexHit(m, f"doc {i}", None) for i, m in enumerate(modules))
        self.asked: list[int] = []
        self.tree = Path("/nonexistent")

    def search(self, question: str, n: int) -> tuple[IndexHit, ...]:
        self.asked.append(n)
        return self.hits[:n]


def test_it_searches_deeper_until_depth_modules_of_the_universe_are_ranked():
    # 8 hits in a.py, then tests, then b..f: depth 4 needs the search of 32
    modules = ["a.py"] * 8 + ["tests/t.py"] * 8 + ["b.py", "c.py", "d.py", "e.py", "f.py"] * 4
    index = Listed(modules)
    answer = IndexSearch(["a.py", "b.py", "c.py", "d.py", "e.py", "f.py"], index=index,
                         depth=4).ask("q")
    assert index.asked == [8, 16, 32]
    assert answer.ranked_modules == ("a.py", "tests/t.py", "b.py", "c.py", "d.py", "e.py",
                                     "f.py")
    assert answer.documents == tuple(f"doc {i}" for i in range(8))  # the top 8 only
    index = Listed(["a.py"] * 20)  # an index with no more: it stops when it runs out
    assert IndexSearch(["a.py", "b.py"], index=index, depth=10).ask("q").ranked_modules == \
        ("a.py",)
    assert index.asked == [8, 16, 32]
    index = Listed(["a.py", "b.py"] * 10)  # depth reached by the first 8 hits
    IndexSearch(["a.py", "b.py"], index=index, depth=2).ask("q")
    assert index.asked == [8]


def test_the_entry_is_the_index_search_and_chunks_code_the_code_chunks(tmp_path,
                                                                        monkeypatch):
    monkeypatch.setattr(judging, "checked_embedder", lambda path, *, purpose: WordVectors())
    monkeypatch.setattr(judging, "model_session", lambda path: WordVectors())
    entry = SYSTEMS["embedding"]
    assert entry.options["chunks"] == ("index", "code")
    assert entry.needs_for({}) == {"index"}
    assert entry.needs_for({"chunks": "code"}) == {"model"}
    assert [s.label for s in parse_systems("neuralmind,embedding,embedding:chunks=code")] == [
        "neuralmind", "embedding", "embedding:chunks=code"]
    assert isinstance(embedding_system(tmp_path, (), depth=5, index=Listed([])), IndexSearch)
    with pytest.raises(ConfigError, match="embedding:chunks=code"):
        embedding_system(tmp_path, (), depth=5, index=object())
    code = embedding_system(tmp_path, (), chunks="code", depth=5,
                            model=ModelSource(None, "env"), cache_dir=tmp_path)
    assert isinstance(code, EmbeddingIndex)


def counted_builds(monkeypatch) -> list[Path]:
    trees: list[Path] = []
    real = NeuralMindIndex.build

    def build(self, **kwargs):
        trees.append(self.tree)
        return real(self, **kwargs)

    monkeypatch.setattr(NeuralMindIndex, "build", build)
    return trees


def test_a_run_searches_the_evaluated_build_once_built(cli, tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "checkout", TESTS)
    trees = counted_builds(monkeypatch)
    searched: list[int] = []
    real_search = NeuralMindIndex.search

    def search(self, question, n):
        assert self._mind is not None  # the evaluated index, still open
        searched.append(n)
        return real_search(self, question, n)

    monkeypatch.setattr(NeuralMindIndex, "search", search)
    out = tmp_path / "out"
    run = cli("evaluate", str(repo), "--backend", "in_memory", "--output-dir", str(out),
              "--systems", "neuralmind,embedding", "--quiet")
    assert run.code in (EXIT_OK, EXIT_FLOORS), run.stderr
    doc = run.results(out)
    assert len(trees) == 1  # no second build
    assert "minilm" not in doc["run"]["judge"]  # in_memory: the search needs no model
    _first, rag = doc["systems"]
    assert rag["label"] == "embedding"
    assert len(searched) >= len(rag["queries"])  # every question searched the build
    universe = {p.relative_to(repo).as_posix() for p in repo.rglob("*")
                if p.suffix in (".py", ".md") and ".git" not in p.parts
                and "tests" not in p.parts}
    assert all(set(q["ranked_modules"]) <= universe for q in rag["queries"])
    assert any(q["filtered_out"].get("tests") for q in rag["queries"])  # tests were hits
    assert doc["run"]["timings"]["systems_s"] > 0
    assert rag["overall"]["metrics"]["context_tokens"] > 0


def test_an_index_that_cannot_search_is_one_clear_error(sample_repo, tmp_path):
    settings = settings_for("evaluate", {"path": str(sample_repo), "baseline": "none",
                                         "cache_dir": str(tmp_path / "c"),
                                         "backend": "in_memory",
                                         "systems": "neuralmind,embedding"})
    with pytest.raises(ConfigError, match="cannot be searched") as raised:
        app.run_evaluate(settings, deps_with(perfect=True))
    assert "embedding:chunks=code" in (raised.value.hint or "")


@pytest.mark.model
def test_the_real_model_build_is_searched_not_rebuilt(cli, tmp_path, model_dir, monkeypatch):
    repo = make_repo(tmp_path / "checkout")
    monkeypatch.setenv(ENV, str(model_dir))
    trees = counted_builds(monkeypatch)
    out = tmp_path / "out"
    run = cli("evaluate", str(repo), "--output-dir", str(out), "--systems",
              "neuralmind,embedding", "--quiet")
    assert run.code in (EXIT_OK, EXIT_FLOORS), run.stderr
    doc = run.results(out)
    assert len(trees) == 1
    assert doc["run"]["index"]["nodes_embedded"] == doc["run"]["index"]["nodes"]
    assert not list((tmp_path / "cache").glob("embedding/*.npz"))  # no code chunks embedded
    rag = doc["systems"][1]
    assert all(q["ranked_modules"] for q in rag["queries"])
    # the same ranking as NeuralMind.search on the build the run left in its cache
    index = NeuralMindIndex(trees[0], backend="auto", graph_source="builtin",
                            model=ModelSource(model_dir, "env"))
    with index._library():
        index._mind = index._new_mind(io.StringIO())
    try:
        universe = universe_of(trees[0])
        system = IndexSearch(universe, index=index, depth=doc["run"]["depth"])
        questions = {q["id"]: q["question"] for q in _questions(repo)}
        for row in rag["queries"]:
            ranked = system.ask(questions[row["id"]]).ranked_modules
            assert row["ranked_modules"] == [m for m in ranked if m in universe], row["id"]
    finally:
        index.close()


def _questions(repo: Path) -> list[dict]:
    import json

    return json.loads((repo / "retrieval_queries.json").read_text())["queries"]
