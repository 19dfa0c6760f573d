"""The reference systems of evaluator/refsystems/ on small real files (issue 23 item 2)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from evaluator import judging
from evaluator.bm25 import BM25Index
from evaluator.core.groundtruth_check import load_ground_truth
from evaluator.model import ModelSource
from evaluator.neuralmind_index import example_root
from evaluator.paths import EXAMPLE_QUERIES
from evaluator.refsystems import chunks, embedding, grep, provided, vectors
from evaluator.refsystems.chunks import chunks_of
from evaluator.refsystems.embedding import EmbeddingIndex
from evaluator.refsystems.fullfile import FullFile
from evaluator.refsystems.grep import GrepIndex, keywords
from evaluator.refsystems.oracle import Oracle
from evaluator.snapshot import checkout_files


def write(root: Path, files: dict[str, str]) -> tuple[str, ...]:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return tuple(sorted(files))


def example_files() -> tuple[str, ...]:
    return tuple(f for f in checkout_files(example_root()) if "__pycache__" not in f)


# ------------------------------------------------------------------------------ chunks

PYTHON = '''"""A module."""

import os

LIMIT = 3


@decorate
def top(a):
    """Top level."""
    def inner():
        return a
    return inner


class Store:
    """A store."""

    size = 1

    def get(self, key):
        return key

    @property
    def name(self):
        return "store"

    class Nested:
        def deep(self):
            return 1


tail = top(1)
'''


def test_python_is_cut_at_its_definitions_and_no_line_is_lost():
    cut = chunks_of("pkg/store.py", PYTHON)
    assert [c.name for c in cut] == ["lines 1-7", "top", "Store", "Store.get", "Store.name",
                                     "Store.Nested", "Store.Nested.deep", "lines 31-33"]
    top = next(c for c in cut if c.name == "top")
    assert top.text.startswith("@decorate\ndef top(a):") and "def inner" in top.text
    assert top.line == 8 and top.embedded.startswith("pkg/store.py: top\n@decorate")
    head = next(c for c in cut if c.name == "Store")
    assert "size = 1" in head.text and "def get" not in head.text
    # every non-blank line of the file is in exactly one chunk
    lines = [line for c in cut for line in c.text.splitlines() if line.strip()]
    assert sorted(lines) == sorted(line for line in PYTHON.splitlines() if line.strip())


def test_long_definitions_other_languages_and_broken_python_are_windows():
    body = "\n".join(f"    x{i} = {i}" for i in range(100))
    cut = chunks_of("a.py", f"def long():\n{body}\n")
    assert [c.name for c in cut] == ["long (lines 1-80)", "long (lines 81-101)"]
    assert max(len(c.text.splitlines()) for c in cut) == chunks.MAX_CHUNK_LINES
    text = "\n".join(f"line {i}" for i in range(90))
    assert [c.name for c in chunks_of("notes.md", text)] == ["lines 1-40", "lines 41-80",
                                                           "lines 81-90"]
    assert [c.name for c in chunks_of("bad.py", "def broken(:\n  pass\n")] == ["lines 1-2"]
    assert chunks_of("empty.py", "\n\n") == ()


# -------------------------------------------------------------------------------- grep

def test_keywords_drop_function_words_short_words_and_repeats():
    assert keywords("How does the Session send a request, and the session's URL?") == (
        "session", "send", "request", "url")


def test_grep_counts_whole_words_ignoring_case(tmp_path):
    files = write(tmp_path, {
        "sessions.py": "class Session:\n    def send(self):\n        session = 1\n",
        "models.py": "sessions = []  # plural: not the word\nSESSION_KEY = 2\n",
        "api.py": "def get(url):\n    return Session().send(url)\n",
        "notes.txt": "session session session",  # not a module
    })
    answer = GrepIndex(tmp_path, files).ask("how does a session send")
    # sessions.py: Session, session, send = 3; api.py: Session, send = 2; models.py: none
    # (SESSION_KEY is one word, sessions another)
    assert answer.ranked_modules == ("sessions.py", "api.py")
    assert answer.documents == ((tmp_path / "sessions.py").read_text(),
                                (tmp_path / "api.py").read_text())
    assert answer.context == "\n\n".join(answer.documents)
    assert answer.tokens == len(answer.context) // 4


def test_grep_ties_by_path_context_top_five_and_no_keyword(tmp_path):
    files = write(tmp_path, {f"m{i}.py": "token = 1\n" for i in range(7)})
    index = GrepIndex(tmp_path, files)
    answer = index.ask("token")
    assert answer.ranked_modules == tuple(f"m{i}.py" for i in range(7))
    assert len(answer.documents) == grep.CONTEXT_FILES
    assert index.ask("what is the of").ranked_modules == ()


def test_grep_on_the_example_finds_the_webhook_module():
    answer = GrepIndex(example_root(), example_files()).ask(
        "How is a Stripe webhook signature verified?")
    assert answer.ranked_modules[0] == "billing/stripe_client.py"


# --------------------------------------------------------------------------- full-file

def test_full_file_is_bm25s_ranking_with_whole_files():
    root, files = example_root(), example_files()
    question = "How do a user, an invoice, a charge, a route and a token reach the database?"
    bm25 = BM25Index(root, files).ask(question)
    five = FullFile(root, files, top="5").ask(question)
    assert five.ranked_modules == bm25.ranked_modules
    assert five.documents == tuple((root / m).read_text(encoding="utf-8")
                                   for m in bm25.ranked_modules[:5])
    ten = FullFile(root, files).ask(question)
    assert len(bm25.ranked_modules) > 5 and len(ten.documents) == min(10, len(
        bm25.ranked_modules))
    everything = FullFile(root, files, top="all").ask(question)
    modules = {f for f in files if f.endswith((".py", ".md"))}
    assert set(everything.ranked_modules) == modules == set(BM25Index(root, files).modules)
    assert everything.ranked_modules[:len(bm25.ranked_modules)] == bm25.ranked_modules
    assert len(everything.documents) == len(modules)
    assert everything.tokens >= ten.tokens > five.tokens > 0
    with pytest.raises(ValueError, match="top must be one of"):
        FullFile(root, files, top="3")


# ------------------------------------------------------------------------------ oracle

def example_ground_truth():
    ground_truth, problems = load_ground_truth(EXAMPLE_QUERIES.read_text(encoding="utf-8"),
                                               str(EXAMPLE_QUERIES))
    assert ground_truth is not None, problems
    return ground_truth


def test_oracle_ranks_by_grade_and_hands_the_grade_3_source():
    ground_truth = example_ground_truth()
    oracle = Oracle(example_root(), example_files(), ground_truth=ground_truth)
    for query in ground_truth.queries:
        answer = oracle.ask(query.question)
        grades = [query.grade(m) for m in answer.ranked_modules]
        assert grades == sorted(grades, reverse=True) and all(g > 0 for g in grades)
        assert set(answer.ranked_modules) == {m for m, g in query.grades.items() if g > 0}
        best = query.modules_with_grade(3) or query.modules_with_grade(max(grades))
        assert answer.documents == tuple((example_root() / m).read_text(encoding="utf-8")
                                         for m in best)
    unknown = oracle.ask("a question the ground truth does not hold")
    assert replace(unknown, seconds=0.0) == replace(unknown, ranked_modules=(), context="",
                                                    tokens=0, documents=(), seconds=0.0)


def test_provided_hands_each_factory_what_its_needs_name(tmp_path):
    model, truth = ModelSource(tmp_path, "env"), example_ground_truth()
    assert provided(frozenset(), model=model, cache_dir=tmp_path, ground_truth=truth) == {}
    assert provided({"model"}, model=model, cache_dir=tmp_path, ground_truth=truth) == {
        "model": model, "cache_dir": tmp_path}
    assert provided({"ground_truth"}, model=model, cache_dir=tmp_path,
                    ground_truth=truth) == {"ground_truth": truth}


# --------------------------------------------------------------------------- embedding

class WordVectors:
    """A stand-in for the model in the ranking and cache tests: a bag of words hashed into
    64 dimensions (deterministic), counting the texts it embeds."""

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        self.embedded += texts
        out = []
        for text in texts:
            row = [0.0] * 64
            for word in re.findall(r"[a-z]+", text.lower()):
                row[sum(map(ord, word)) % 64] += 1.0
            out.append(row)
        return out


@pytest.fixture
def fake_model(monkeypatch):
    model = WordVectors()
    monkeypatch.setattr(judging, "checked_embedder", lambda path, *, purpose: model)
    monkeypatch.setattr(judging, "model_session", lambda path: model)
    return model


def test_embedding_ranks_modules_by_their_best_chunk(tmp_path, fake_model):
    files = write(tmp_path, {
        "billing.py": "def refund_charge(charge):\n    '''Refund a charge.'''\n",
        "users.py": "def delete_user(user):\n    '''Delete a user row.'''\n",
        "both.py": "def refund_user(user):\n    '''refund refund charge'''\n",
    })
    index = EmbeddingIndex(tmp_path, files, model=ModelSource(None, "env"),
                           cache_dir=tmp_path / "cache")
    answer = index.ask("refund charge")
    assert answer.ranked_modules[0] == "billing.py"
    assert set(answer.ranked_modules) == set(files)  # every module that has a chunk
    assert answer.documents[0] == (tmp_path / "billing.py").read_text().rstrip("\n")
    assert len(answer.documents) == len(index.chunks) == 3  # fewer than TOP_CHUNKS
    assert answer.context == "\n\n".join(answer.documents)


def test_embedding_caches_chunk_vectors_by_content(tmp_path, fake_model):
    files = write(tmp_path, {f"m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(4)})
    cache = tmp_path / "cache"
    first = EmbeddingIndex(tmp_path, files, model=ModelSource(None, "env"), cache_dir=cache)
    assert first.embedded == 4 and len(fake_model.embedded) == 4
    second = EmbeddingIndex(tmp_path, files, model=ModelSource(None, "env"), cache_dir=cache)
    assert second.embedded == 0 and len(fake_model.embedded) == 4  # all from the cache
    assert second.ask("f2").ranked_modules == first.ask("f2").ranked_modules
    (tmp_path / "m1.py").write_text("def changed():\n    return 9\n")
    third = EmbeddingIndex(tmp_path, files, model=ModelSource(None, "env"), cache_dir=cache)
    assert third.embedded == 1 and fake_model.embedded[-1].startswith("m1.py: changed")
    stored = list((cache / "embedding").glob("*.npz"))
    assert len(stored) == 1
    with np.load(stored[0]) as data:
        assert len(data["keys"]) == 4  # the old m1.py chunk is not kept
    stored[0].write_bytes(b"not a zip")  # a damaged cache is rebuilt, not a crash
    again = EmbeddingIndex(tmp_path, files, model=ModelSource(None, "env"), cache_dir=cache)
    assert again.embedded == 4


def test_vector_file_is_keyed_by_checkout_model_and_library(tmp_path):
    a = vectors.store_path(tmp_path, tmp_path / "x", model="m1", library="4.0")
    assert a == vectors.store_path(tmp_path, tmp_path / "x", model="m1", library="4.0")
    assert len({a, vectors.store_path(tmp_path, tmp_path / "y", model="m1", library="4.0"),
                vectors.store_path(tmp_path, tmp_path / "x", model="m2", library="4.0"),
                vectors.store_path(tmp_path, tmp_path / "x", model="m1", library="4.1")}) == 4


def test_embedding_with_the_real_model(model_dir, tmp_path):
    index = EmbeddingIndex(example_root(), example_files(),
                           model=ModelSource(model_dir, "env"), cache_dir=tmp_path)
    assert index.embedded == len(index.chunks) > 10
    answer = index.ask("verify the signature of an incoming Stripe webhook")
    assert answer.ranked_modules[0] == "billing/stripe_client.py"
    assert "webhook" in answer.documents[0].lower()
    assert len(answer.documents) == embedding.TOP_CHUNKS
    # the run's one session: the judge's embedder wraps the very session the system used
    assert judging.model_session(model_dir) is judging.model_session(model_dir)
    norms = np.linalg.norm(index._vectors, axis=1)
    assert np.allclose(norms, 1.0, atol=1e-4)


# ------------------------------------------------------------------- through evaluate

ALL = "neuralmind,bm25,embedding,embedding:chunks=code,grep,full-file,oracle"


def test_every_reference_system_through_evaluate(cli, sample_repo, tmp_path, model_dir,
                                                 monkeypatch):
    from evaluator.model import ENV

    sessions = []
    real = judging.minilm_embedder

    def counted(folder):
        sessions.append(folder)
        return real(folder)

    monkeypatch.setattr(judging, "minilm_embedder", counted)
    monkeypatch.setattr(judging, "_SESSIONS", {})
    monkeypatch.setattr(judging, "_EMBEDDERS", {})
    monkeypatch.setenv(ENV, str(model_dir))
    out = tmp_path / "out"
    run = cli("evaluate", str(sample_repo), "--backend", "in_memory", "--output-dir", str(out),
              "--systems", ALL, "--quiet")
    doc = run.results(out)
    assert "Traceback" not in run.stderr
    blocks = {s["label"]: s for s in doc["systems"]}
    assert list(blocks) == ALL.split(",")
    # embedding:chunks=code and the judge share the run's one model session
    assert sessions == [model_dir]
    assert "minilm" in doc["run"]["judge"]  # the judge embeds with the same model
    modules = {p.relative_to(sample_repo).as_posix() for p in sample_repo.rglob("*.py")
               if ".git" not in p.parts} | {"README.md"}
    n = len(doc["queries"])
    for label, block in blocks.items():
        assert len(block["queries"]) == n, label
        assert all(set(q["ranked_modules"]) <= modules for q in block["queries"]), label
    oracle = blocks["oracle"]
    assert all(q["metrics"]["ndcg@5"] == 1.0 and q["metrics"]["mrr"] == 1.0
               for q in oracle["queries"])
    for mine, theirs in zip(blocks["full-file"]["queries"], blocks["bm25"]["queries"],
                            strict=True):
        assert mine["ranked_modules"] == theirs["ranked_modules"]
    rankings = {label: [q["ranked_modules"] for q in b["queries"]]
                for label, b in blocks.items()}
    assert rankings["embedding:chunks=code"] != rankings["bm25"] != rankings["grep"]
    assert rankings["embedding"] != rankings["embedding:chunks=code"]
    tokens = {label: b["overall"]["metrics"]["context_tokens"] for label, b in blocks.items()}
    assert tokens["full-file"] > tokens["bm25"] > tokens["embedding:chunks=code"] > 0
    assert tokens["bm25"] > tokens["embedding"] > 0
    assert list((tmp_path / "cache" / "embedding").glob("*.npz"))  # the vectors, cached
    report = (out / "report.md").read_text(encoding="utf-8")
    # a row per system; ≠ marks a mean context more than 2x apart from NeuralMind's
    first = tokens[ALL.split(",")[0]]
    for label in ALL.split(",")[1:]:
        unlike = max(tokens[label] / first, first / tokens[label]) > 2
        assert f"| {label}{' ≠' if unlike else ''} |" in report, label
