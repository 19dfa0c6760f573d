"""The bm25 reference system (evaluator.bm25): code-aware BM25 over a checkout's modules."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from evaluator import bm25
from evaluator.bm25 import BM25Index
from evaluator.neuralmind_index import example_root
from evaluator.snapshot import checkout_files


def write(root: Path, files: dict[str, str]) -> tuple[str, ...]:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return tuple(sorted(files))


def test_identifiers_are_split_for_matching(tmp_path):
    files = write(tmp_path, {
        "errors.py": "class InvalidHeader(ValueError):\n    pass\n",
        "client.py": "def send(request):\n    return request\n",
        "util.py": "def parse_url(url):\n    return url\n",
    })
    index = BM25Index(tmp_path, files)
    answer = index.ask("What happens with an invalid header?")
    assert answer.ranked_modules[0] == "errors.py"
    assert "client.py" not in answer.ranked_modules  # no shared term: score 0, not ranked
    assert index.ask("how are URLs parsed").ranked_modules == ("util.py",)


def test_only_indexed_suffixes_are_ranked(tmp_path):
    files = write(tmp_path, {"notes.txt": "header header header",
                             "data.json": '{"header": 1}', "a.py": "header = 1\n",
                             "README.md": "The header is set here."})
    index = BM25Index(tmp_path, files)
    assert set(index.modules) == {"a.py", "README.md"}
    assert set(index.ask("header").ranked_modules) == {"a.py", "README.md"}


def test_ties_are_broken_by_path_and_runs_are_deterministic(tmp_path):
    files = write(tmp_path, {"b.py": "token = 1\n", "a.py": "token = 1\n", "c.py": "x = 2\n"})
    first = BM25Index(tmp_path, files).ask("token")
    again = BM25Index(tmp_path, files).ask("token")
    assert first.ranked_modules == again.ranked_modules == ("a.py", "b.py")
    assert replace(first, seconds=0.0) == replace(again, seconds=0.0)


def test_empty_question_or_corpus_ranks_nothing(tmp_path):
    files = write(tmp_path, {"a.py": "token = 1\n"})
    assert BM25Index(tmp_path, files).ask("the of and").ranked_modules == ()
    assert BM25Index(tmp_path, ()).ask("token").ranked_modules == ()
    assert BM25Index(tmp_path, ()).ask("token").context == ""


def test_oversized_and_unreadable_files_are_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr(bm25, "MAX_FILE_BYTES", 20)
    files = write(tmp_path, {"big.py": "token = 1\n" * 10, "small.py": "token = 1\n"})
    index = BM25Index(tmp_path, (*files, "missing.py"))
    assert index.modules == ["small.py"]


def test_context_is_the_top_modules_text(tmp_path, monkeypatch):
    monkeypatch.setattr(bm25, "CONTEXT_MODULES", 1)
    files = write(tmp_path, {"a.py": "token token = 1\n", "b.py": "token = 2\n"})
    answer = BM25Index(tmp_path, files).ask("token")
    assert answer.context == "token token = 1\n"


def test_example_rankings_hold_only_indexed_modules():
    root = example_root()
    files = checkout_files(root, use_git=False)
    index = BM25Index(root, files)
    answer = index.ask("How are JWTs signed, with which secret and algorithm?")
    assert answer.ranked_modules
    assert set(answer.ranked_modules) <= set(index.modules)
    assert answer.ranked_modules[0] == "auth/jwt_utils.py"


@pytest.mark.parametrize("question", ["", "   ", "?!"])
def test_questions_without_terms(tmp_path, question):
    files = write(tmp_path, {"a.py": "token = 1\n"})
    assert BM25Index(tmp_path, files).ask(question).ranked_modules == ()


def test_answers_are_judged_like_neuralmind_contexts():
    """bm25 only answers; the evaluator's one judging step (judging.judge_answer) turns its
    answers into judged retrievals, every judge column included, like NeuralMind's."""
    from evaluator.core.groundtruth_check import load_ground_truth
    from evaluator.judging import judge_answer

    path = Path(__file__).resolve().parents[2] / "evaluator" / "data" / \
        "sample_project.retrieval_queries.json"
    gt, _ = load_ground_truth(path.read_text(encoding="utf-8"), str(path),
                              present_modules=None, strict=False)
    root = example_root()
    index = BM25Index(root, checkout_files(root, use_git=False))
    for query in gt.queries:
        answer = index.ask(query.question)
        assert answer.seconds >= 0
        assert answer.documents == tuple(index.text_of(m) for m in
                                         answer.ranked_modules[:bm25.CONTEXT_MODULES])
        r = judge_answer(query, answer)
        assert r.query_id == query.id and r.ranked_modules == answer.ranked_modules
        assert set(r.ranked_modules) <= set(index.modules)
        assert 0.0 <= r.faithfulness.faithfulness <= r.faithfulness.fact_recall <= 1.0
        assert r.faithfulness.answer_relevance is None
        assert r.context_tokens == len(answer.context) // 4
        assert set(r.columns) >= {"faithfulness_n15", "fact_recall_n15", "contradiction_n15"}
