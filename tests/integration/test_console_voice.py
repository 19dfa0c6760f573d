"""The console reads as one voice: one warning prefix, the backend named the same in the
progress and the summary, and a commit line that says when the checkout differs from it."""

from __future__ import annotations

import io
import re

from evaluator.progress import Progress
from tests.conftest import git

FAST = ("--backend", "in_memory")


def test_one_warning_prefix():
    stream = io.StringIO()
    progress = Progress(stream, quiet=True)
    progress.warn("warning: retrieval_queries.json: query 'q1': something")
    progress.warn("plain")
    assert stream.getvalue().splitlines() == [
        "warning: retrieval_queries.json: query 'q1': something", "warning: plain"]


def test_commit_line_says_when_the_checkout_differs(sample_repo, cli, tmp_path):
    clean = cli("evaluate", str(sample_repo), *FAST, "--output-dir", str(tmp_path / "a"))
    assert "committed" not in clean.stdout.splitlines()[0]
    (sample_repo / "auth" / "handlers.py").write_text("# edited, not committed\n")
    dirty = cli("evaluate", str(sample_repo), *FAST, "--output-dir", str(tmp_path / "b"))
    assert "(uncommitted changes)" in dirty.stdout.splitlines()[0]
    report = (tmp_path / "b" / "report.md").read_text()
    assert "(uncommitted changes)" in "\n".join(report.splitlines()[:4])
    queries = sample_repo / "retrieval_queries.json"
    queries.write_text(queries.read_text().replace("How are the JWTs", "How are JWTs"))
    both = cli("evaluate", str(sample_repo), *FAST, "--output-dir", str(tmp_path / "c"))
    assert "(uncommitted changes, ground truth included)" in both.stdout.splitlines()[0]
    git(sample_repo, "checkout", "--", ".")
    assert (tmp_path / "c" / "results.json").exists()


def test_backend_is_named_the_same_in_progress_and_summary(sample_repo, cli, tmp_path):
    run = cli("evaluate", str(sample_repo), *FAST, "--output-dir", str(tmp_path / "o"))
    built = re.search(r"head: index \d+ nodes, backend (\S+)", run.stderr)
    summary = re.search(r"NeuralMind \S+, backend (\S+),", run.stdout)
    assert built and summary, (run.stderr, run.stdout)
    assert built.group(1) == summary.group(1) == "in_memory"


def test_auto_backend_is_named_by_what_it_resolved_to(sample_repo, cli, tmp_path, model_dir,
                                                      monkeypatch):
    monkeypatch.setenv("NEURALMIND_ONNX_MODEL_DIR", str(model_dir))
    run = cli("evaluate", str(sample_repo), "--output-dir", str(tmp_path / "o"),
              env={"NEURALMIND_ONNX_MODEL_DIR": str(model_dir)})
    assert run.code in (0, 1), run.stderr
    assert "backend auto (NeuralMind picks it when it builds)" in run.stderr
    built = re.search(r"head: index \d+ nodes, backend (\S+)", run.stderr)
    summary = re.search(r"NeuralMind \S+, backend (\S+),", run.stdout)
    assert built and summary
    assert built.group(1) == summary.group(1) != "auto"
