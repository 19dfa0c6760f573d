"""``init --from-history`` against a cold adversarial test's findings (hostile histories,
settings and paths): each case failed before its fix. Real git repositories, built here."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import pytest

from evaluator.authoring import history_plan
from evaluator.core.groundtruth_check import load_ground_truth
from evaluator.escaping import md_code, md_escape
from evaluator.git_repo import GitRepo
from evaluator.progress import Progress
from evaluator.validation import universe_of
from tests.history_repos import FIRST_COMMIT, commit, draft, git, new_repo, write

BASE = "def parse(value):\n    return value\n"
FIX = BASE + '''

def parse_quoted_value(value, limit=None):
    if limit is not None and len(value) > limit:
        raise ValueError("quoted value exceeds the configured limit")
    return value.strip()
'''


def _repo(tmp_path: Path, subject: str, *, name: str = "repo") -> Path:
    """A package whose second commit, ``subject``, adds a function to ``pkg/m.py``."""
    repo = new_repo(tmp_path / name)
    write(repo, "pkg/m.py", BASE)
    commit(repo, FIRST_COMMIT)
    write(repo, "pkg/m.py", FIX)
    commit(repo, subject)
    return repo


def _state(repo: Path) -> tuple[str, str, str]:
    return (git(repo, "status", "--porcelain"), git(repo, "rev-parse", "HEAD"),
            git(repo, "for-each-ref"))


BIDI = "Fix the \u202eevil\u202c timeout when the host \u2066resolves\u2069 slowly\u200b"


def test_reordering_and_invisible_characters_leave_the_question(tmp_path, cli):
    repo = _repo(tmp_path, BIDI)
    doc, _ = draft(cli, repo, tmp_path, "--count", "1")
    [query] = doc["queries"]
    assert query["question"] == "Fix the evil timeout when the host resolves slowly"
    assert query["source"]["subject"] == query["question"]


def test_a_hand_written_override_is_refused_and_shown_in_the_comment():
    doc = {"queries": [{"id": "q1", "question": "Where is the \u202etimeout\u202c set?",
                        "shape": "focused", "relevance_grades": {"pkg/m.py": 3}}]}
    gt, problems = load_ground_truth(json.dumps(doc), "q.json", present_modules=["pkg/m.py"])
    assert gt is None and any("control character" in p.message for p in problems), problems
    assert md_escape("a\u202eb") == "a&lt;U+202E&gt;b"
    assert md_code("a\u2066b\ufeff") == "`a<U+2066>b<U+FEFF>`"


@pytest.mark.parametrize(("setting", "value"), [("diff.noprefix", "true"),
                                                ("i18n.logOutputEncoding", "latin1")])
def test_the_users_git_settings_do_not_change_the_draft(tmp_path, cli, setting, value):
    subject = "Fix décodage of header values when the café name holds an accent"
    plain, _ = draft(cli, _repo(tmp_path, subject, name="plain"), tmp_path, "--count", "1")
    repo = _repo(tmp_path, subject, name="configured")
    git(repo, "config", setting, value)
    configured, _ = draft(cli, repo, tmp_path, "--count", "1")
    def asked(doc: dict) -> list[tuple]:  # the two repositories' shas differ
        return [(q["question"], q["relevance_grades"], q["gold_facts"]) for q in doc["queries"]]

    assert asked(configured) == asked(plain)
    assert configured["queries"][0]["question"] == subject
    assert len(configured["queries"][0]["gold_facts"]) >= 2


def test_a_file_named_with_a_backslash_is_left_out(tmp_path, cli):
    """validate reads a backslash as a folder separator, so no ground truth could name it."""
    repo = _repo(tmp_path, "Fix header parsing when the value holds a colon")
    write(repo, "pkg/a\\b.py", FIX.replace("parse_quoted_value", "parse_other_value"))
    commit(repo, "Fix other parsing when the value holds a semicolon")
    doc, stderr = draft(cli, repo, tmp_path, "--count", "2")
    graded = {m for q in doc["queries"] for m in q["relevance_grades"]}
    assert graded == {"pkg/m.py"}, graded
    assert "or a backslash are not indexed: " in stderr and "pkg/a" in stderr
    out = sorted(tmp_path.glob("draft*.json"))[-1]
    check = cli("validate", str(repo), "--queries", str(out))
    assert check.code == 0, check.stdout + check.stderr


@pytest.mark.parametrize("where", [".git/MERGE_HEAD", ".git/refs/heads/evil",
                                   "pkg/../.git/hooks/post-checkout", "linked/x.json",
                                   "dangling.json"])
def test_no_output_is_written_under_git_or_through_a_link(tmp_path, cli, where):
    repo = _repo(tmp_path, "Fix header parsing when the value holds a colon")
    (tmp_path / "linked").symlink_to(repo / ".git")
    (tmp_path / "dangling.json").symlink_to(repo / ".git" / "nowhere.json")
    before = _state(repo)
    target = repo / where if where.startswith((".git", "pkg")) else tmp_path / where
    run = cli("init", str(repo), "--from-history", "--no-review", "--count", "1",
              "--output", str(target))
    assert run.code == 2, run.stderr
    assert "version-control folder '.git'" in run.stderr or "symbolic link" in run.stderr
    assert "Traceback" not in run.stderr
    assert _state(repo) == before
    assert not (repo / ".git" / "MERGE_HEAD").exists()
    assert not (repo / ".git" / "refs" / "heads" / "evil").exists()
    assert not (repo / ".git" / "nowhere.json").exists()


@pytest.mark.parametrize("flag", ["--output", "--cache-dir", "--review", "--since"])
def test_a_double_dash_value_is_an_input_error(tmp_path, cli, flag):
    repo = _repo(tmp_path, "Fix header parsing when the value holds a colon")
    run = cli("init", str(repo), "--from-history", "--no-review", f"{flag}=--")
    assert run.code == 2, run.stderr
    assert f"{flag}: '--' is not a value" in run.stderr


def test_a_shallow_clone_says_how_to_get_the_history(tmp_path, cli):
    source = _repo(tmp_path, "Fix header parsing when the value holds a colon", name="src")
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{source}", str(clone)],
                   check=True)
    run = cli("init", str(clone), "--from-history", "--no-review", "--count", "1",
              "--output", str(tmp_path / "o.json"))
    assert run.code == 2
    assert "the clone is shallow" in run.stderr and "git fetch --unshallow" in run.stderr


@pytest.mark.parametrize(("make", "needle"), [
    (lambda p: None, "does not exist"),
    (lambda p: p.write_text("x"), "is not a folder"),
    (lambda p: new_repo(p), "an empty repository, or a new branch, has none yet"),
])
def test_a_wrong_path_is_named_for_what_it_is(tmp_path, cli, make, needle):
    path = tmp_path / "target"
    make(path)
    run = cli("init", str(path), "--from-history", "--no-review",
              "--output", str(tmp_path / "o.json"))
    assert run.code == 2 and needle in run.stderr, run.stderr


def test_judging_says_how_far_it_got(tmp_path):
    """A history of huge modules is judged slowly: a line at least every few seconds."""
    repo = _repo(tmp_path, "Fix header parsing when the value holds a colon")
    for n in range(3):
        write(repo, "pkg/m.py", FIX + f"\n\ndef extra_{n}(value):\n    return value * {n + 2}\n")
        commit(repo, f"Fix the doubling of values when the factor is {n + 2} or more")
    ticks = iter(range(0, 10_000, 4))
    out = io.StringIO()
    progress = Progress(out, clock=lambda: float(next(ticks)))
    files = tuple(git(repo, "ls-files").split())
    history_plan(repo, universe_of(files, None), GitRepo({}), count=4, since=None,
                 progress=progress)
    lines = [line for line in out.getvalue().splitlines() if "so far" in line]
    assert lines and "history: judged 1 of 4 candidate commit(s) so far" in lines[0], \
        out.getvalue()

