"""``init --from-history`` (issue 24) on a real git repository built here: renames,
reverts, merges, test-only commits, version bumps, deleted files and hostile subjects."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from evaluator.core.commits import (
    SKIP_CHORE,
    SKIP_DUPLICATE,
    SKIP_GIVEAWAY,
    SKIP_GONE,
    SKIP_LONG,
    SKIP_MERGE,
    SKIP_NO_MODULE,
    SKIP_REVERT,
    SKIP_ROOT,
    SKIP_VAGUE,
    SKIP_VERSION,
)
from evaluator.core.groundtruth_check import load_ground_truth
from evaluator.core.schemas import ground_truth_schema
from tests.history_repos import commit, draft, git, new_repo, write

CORE = '''"""The session."""


class Session:
    """Keeps settings across requests."""

    def send(self, request):
        return request
'''
UTILS = '''"""Helpers."""


def join_url(base, path):
    return base.rstrip("/") + "/" + path.lstrip("/")
'''


@pytest.fixture
def history_repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A small package with a history of every kind of commit; returns the repository and
    the sha of the commits a test checks by name."""
    repo = new_repo(tmp_path / "repo")
    shas: dict[str, str] = {}
    write(repo, "pkg/__init__.py", '__version__ = "1.0.0"\n')
    write(repo, "pkg/core.py", CORE)
    write(repo, "pkg/utils.py", UTILS)
    write(repo, "tests/test_core.py", "def test_send():\n    assert True\n")
    write(repo, "README.md", "# pkg\n")
    commit(repo, "Initial import of the package")
    # 1. cross-file: most lines in core.py (grade 3), a few in utils.py (grade 2)
    write(repo, "pkg/core.py", CORE + '''
    def retry_budget(self, attempts):
        """How many retries are left for this session."""
        remaining_attempts = max(0, self.max_retries - attempts)
        budget_exhausted = remaining_attempts == 0
        return remaining_attempts, budget_exhausted
''')
    write(repo, "pkg/utils.py", UTILS + "\n\nDEFAULT_RETRY_BACKOFF_SECONDS = 0.25\n")
    shas["retry"] = commit(repo, "feat(session): add a retry budget to the session (#12)")
    # 2. tests only
    write(repo, "tests/test_core.py", "def test_send():\n    assert True\n\n\n"
                                      "def test_budget():\n    assert True\n")
    commit(repo, "Add tests for the retry budget")
    # 3. docs only
    write(repo, "README.md", "# pkg\n\nRetries.\n")
    commit(repo, "Document how retries are counted")
    # 4. a version bump
    write(repo, "pkg/__init__.py", '__version__ = "1.1.0"\n')
    commit(repo, "Bump version to 1.1.0")
    # 5. a rename (utils.py -> helpers.py), with a small change
    git(repo, "mv", "pkg/utils.py", "pkg/helpers.py")
    write(repo, "pkg/helpers.py", (repo / "pkg/helpers.py").read_text() +
          "\n\ndef split_url_path(url):\n    return url.split('/', 3)[-1]\n")
    shas["rename"] = commit(repo, "Move the URL helpers to helpers.py and split paths")
    # 6. a file added, then deleted
    write(repo, "pkg/legacy.py", "def load_legacy_config(path):\n    return open(path)\n")
    shas["legacy"] = commit(repo, "Add a loader for legacy configuration files")
    git(repo, "rm", "-q", "pkg/legacy.py")
    commit(repo, "Remove the legacy configuration loader for good")
    # 7. a change, reverted
    write(repo, "pkg/core.py", (repo / "pkg/core.py").read_text() + "\nBROKEN = True\n")
    bad = commit(repo, "Mark the session as broken in every case")
    git(repo, "revert", "--no-edit", bad)
    # 8. a branch merged with a merge commit
    git(repo, "checkout", "-q", "-b", "lazy")
    write(repo, "pkg/config.py", '''def load_config(path):
    """Read the configuration lazily, on first access."""
    with open(path, encoding="utf-8") as handle:
        configuration_text = handle.read()
    return configuration_text
''')
    shas["lazy"] = commit(repo, "Read the configuration file lazily on first access")
    git(repo, "checkout", "-q", "main")
    write(repo, "pkg/helpers.py", (repo / "pkg/helpers.py").read_text() +
          "\n\ndef strip_query_string(url):\n    return url.split('?', 1)[0]\n")
    shas["query"] = commit(repo, "fix: strip the query string before caching a URL, "
                                 "fixes #40")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge branch 'lazy'", "lazy")
    # 9. hostile subjects: control characters, a subject too long, one too vague
    write(repo, "pkg/core.py", (repo / "pkg/core.py").read_text() +
          "\nSESSION_TIMEOUT_SECONDS = 30\n")
    shas["hostile"] = commit(repo, "Give every \x1b[31msession a default\x07 timeout")
    write(repo, "pkg/core.py", (repo / "pkg/core.py").read_text() + "\nSPARE_VALUE = 1\n")
    commit(repo, "Tune " + "the session " * 40)
    write(repo, "pkg/core.py", (repo / "pkg/core.py").read_text() + "\nOTHER_VALUE = 2\n")
    commit(repo, "wip")
    write(repo, "pkg/core.py", (repo / "pkg/core.py").read_text() + "\nTHIRD_VALUE = 3\n")
    commit(repo, "Fix typos in the session module")
    # 10. the same subject twice: the newer one is asked
    write(repo, "pkg/helpers.py", (repo / "pkg/helpers.py").read_text() + "\nSEP = '/'\n")
    commit(repo, "Give every session a default timeout")
    return repo, shas


SKIPPED = {SKIP_ROOT: 1, SKIP_MERGE: 1, SKIP_REVERT: 2, SKIP_VERSION: 1, SKIP_NO_MODULE: 2,
           SKIP_GONE: 2, SKIP_LONG: 1, SKIP_VAGUE: 1, SKIP_DUPLICATE: 1, SKIP_GIVEAWAY: 1,
           SKIP_CHORE: 1}


def test_every_commit_is_a_question_or_a_counted_reason(history_repo, cli, tmp_path):
    repo, shas = history_repo
    doc, stderr = draft(cli, repo, tmp_path, "--count", "50")
    queries = doc["queries"]
    commits = int(git(repo, "rev-list", "--count", "HEAD"))
    skipped = ", ".join(f"{n} {reason}" for reason, n in
                        sorted(SKIPPED.items(), key=lambda kv: (-kv[1], kv[0])))
    assert commits == 18
    assert len(queries) == commits - sum(SKIPPED.values()) == 4
    assert f"history: read {commits} commit(s) of HEAD: {len(queries)} make a question, " \
           f"{len(queries)} drafted; " \
           f"skipped: {skipped}" in stderr
    assert f"{50 - len(queries)} history question(s) short of --count 50" in stderr
    by_commit = {q["source"]["commit"]: q for q in queries}
    retry = by_commit[shas["retry"]]
    assert retry["question"] == "Add a retry budget to the session"
    assert retry["shape"] == "cross-file"
    graded = {m: g for m, g in retry["relevance_grades"].items() if g}
    assert graded == {"pkg/core.py": 3, "pkg/helpers.py": 2}   # utils.py, renamed since
    assert "then pkg/utils.py" in retry["review"]["grades"]["pkg/helpers.py"]
    assert by_commit[shas["query"]]["question"] == \
        "Strip the query string before caching a URL"
    assert by_commit[shas["lazy"]]["shape"] == "focused"        # the merged branch's commit
    assert shas["legacy"] not in by_commit                     # its file is gone
    assert shas["rename"] not in by_commit                     # it names helpers.py
    # The escape sequence and the bell go; the same question, asked again later, is asked
    # once, from the newer commit.
    hostile = [q for q in queries if "timeout" in q["question"]]
    assert [q["question"] for q in hostile] == ["Give every session a default timeout"]
    assert hostile[0]["source"]["commit"] != shas["hostile"]
    for q in queries:
        assert q["id"].startswith("history-")
        assert q["source"]["subject"] and "\x1b" not in q["source"]["subject"]


def test_every_grade_3_module_was_changed_by_its_source_commit(history_repo, cli, tmp_path):
    repo, _shas = history_repo
    doc, _stderr = draft(cli, repo, tmp_path, "--count", "50")
    for q in doc["queries"]:
        for module, grade in q["relevance_grades"].items():
            if grade >= 2:
                # git's own rename following, independent of the evaluator's
                touched = git(repo, "log", "--follow", "--format=%H", "--", module).split()
                assert q["source"]["commit"] in touched, (q["id"], module)


def test_facts_are_added_lines_that_still_exist(history_repo, cli, tmp_path):
    repo, shas = history_repo
    doc, _stderr = draft(cli, repo, tmp_path, "--count", "50")
    by_commit = {q["source"]["commit"]: q for q in doc["queries"]}
    retry = by_commit[shas["retry"]]
    assert 2 <= len(retry["gold_facts"]) <= 4
    # the lines sharing words with the question ("retry budget") first
    line = "budget_exhausted = remaining_attempts == 0"
    assert {"fact": line, "evidence": line} in retry["gold_facts"]
    assert "remaining_attempts = max(0, self.max_retries - attempts)" not in \
        [f["fact"] for f in retry["gold_facts"]]
    code = "".join((repo / m).read_text() for m in ("pkg/core.py", "pkg/helpers.py",
                                                      "pkg/config.py"))
    for q in doc["queries"]:
        for fact in q["gold_facts"]:
            assert set(fact) == {"fact", "evidence"}        # anchored (issue 22's format)
            assert fact["evidence"] in code, fact
    # One short added line is no fact: the question is retrieval-only.
    (newest,) = [q for q in doc["queries"] if "timeout" in q["question"]]
    assert newest["gold_facts"] == []


def test_count_is_exact_and_newest_first(history_repo, cli, tmp_path):
    repo, shas = history_repo
    doc, stderr = draft(cli, repo, tmp_path, "--count", "2")
    assert [q["id"] for q in doc["queries"]] == ["history-01", "history-02"]
    assert doc["queries"][1]["source"]["commit"] == shas["query"]
    assert "short of --count" not in stderr


def test_since_reads_only_the_newer_commits(history_repo, cli, tmp_path):
    repo, shas = history_repo
    doc, stderr = draft(cli, repo, tmp_path, "--count", "50", "--since", shas["legacy"])
    commits = {q["source"]["commit"] for q in doc["queries"]}
    assert shas["retry"] not in commits and shas["query"] in commits
    assert f"after {shas['legacy']}" in stderr


def test_the_draft_validates_and_combines_with_the_docstring_route(history_repo, cli,
                                                                    tmp_path):
    repo, _shas = history_repo
    doc, _stderr = draft(cli, repo, tmp_path, "--count", "3", "--docstring-count", "2")
    history = [q for q in doc["queries"] if "source" in q]
    assert len(history) == 3 and len(doc["queries"]) == 5
    files = git(repo, "ls-files").split()
    gt, problems = load_ground_truth(json.dumps(doc), "draft.json", present_modules=files)
    assert gt is not None, [p.render() for p in problems]
    assert all(p.severity == "warning" for p in problems)


def test_the_review_asks_the_index_the_history_questions(history_repo, cli, tmp_path):
    repo, _shas = history_repo
    out = tmp_path / "reviewed.json"
    run = cli("init", str(repo), "--from-history", "--count", "2", "--backend", "in_memory",
              "--cache-dir", str(tmp_path / "c"), "--output", str(out))
    assert run.code == 0, run.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert all("retrieved" in q["review"] for q in doc["queries"])
    assert "review: asked NeuralMind the 2 questions" in run.stderr


@pytest.mark.parametrize(("args", "needle"), [
    (("--since", "HEAD~1"), "--since and --docstring-count go with --from-history"),
    (("--from-history", "--since", "no-such-ref"), "unknown git ref 'no-such-ref'"),
    (("--from-history", "--since=--all"), "'--all' is not a git ref"),
    (("--from-history", "--mix", "focused=1"), "with --from-history it needs --docstring-count"),
])
def test_bad_history_options_are_input_errors(history_repo, cli, tmp_path, args, needle):
    repo, _shas = history_repo
    out = tmp_path / "o.json"
    run = cli("init", str(repo), "--no-review", "--output", str(out), *args)
    assert run.code == 2, run.stderr
    assert needle in run.stderr
    assert not out.exists()


def test_a_folder_outside_git_is_an_input_error(tmp_path, cli):
    folder = tmp_path / "plain"
    write(folder, "pkg/core.py", CORE)
    run = cli("init", str(folder), "--from-history", "--no-review")
    assert run.code == 2
    assert "not a git checkout" in run.stderr
    assert not (folder / "retrieval_queries.json").exists()


# ----------------------------------------------------------------------------- pull requests


@pytest.fixture
def pull_repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A history with merged pull requests: GitHub's merge commit ("Merge pull request #7
    from …", the title in its body), a merge whose subject is the title with "(#11)", a
    squash commit "Title (#9)", and a maintenance branch merged in ("Merge branch …")."""
    repo = new_repo(tmp_path / "pulls")
    shas: dict[str, str] = {}
    write(repo, "pkg/__init__.py", "")
    write(repo, "pkg/core.py", CORE)
    write(repo, "pkg/utils.py", UTILS)
    commit(repo, "Initial import of the package")
    # PR #7: two commits on a branch, merged by GitHub's merge commit
    git(repo, "checkout", "-q", "-b", "timeouts")
    write(repo, "pkg/core.py", CORE + "\nDEFAULT_REQUEST_TIMEOUT_SECONDS = 30.0\n")
    shas["pr7-a"] = commit(repo, "wip: a constant for the default wait")
    write(repo, "pkg/utils.py", UTILS + "\n\ndef clamp_timeout(value, ceiling):\n"
                                        "    return min(max(value, 0.0), ceiling)\n")
    shas["pr7-b"] = commit(repo, "Clamp the wait between zero and the ceiling")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge pull request #7 from dev/timeouts",
        "-m", "Give every request a configurable timeout\n\nLonger description.", "timeouts")
    shas["pr7"] = git(repo, "rev-parse", "HEAD").strip()
    # a maintenance branch merged in: its commit is asked by its own subject
    git(repo, "checkout", "-q", "-b", "stable", "HEAD~1")
    write(repo, "pkg/stable.py", "def stable_release_channel_name(version):\n"
                                 "    return f'stable-{version.major}.{version.minor}'\n")
    shas["stable"] = commit(repo, "Name the release channel after the minor version")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge branch 'stable'", "stable")
    # a squash merge
    write(repo, "pkg/utils.py", (repo / "pkg/utils.py").read_text() +
          "\n\ndef remember_split_url(url, parsed_urls_cache):\n"
          "    return parsed_urls_cache.setdefault(url, url.split('/'))\n")
    # (the title must not spell the function: "Cache parsed URLs" names cache_parsed_url)
    shas["pr9"] = commit(repo, "Cache parsed URLs between calls (#9)")
    # PR #11: GitHub's merge with the pull request's title as the merge's subject
    git(repo, "checkout", "-q", "-b", "retry")
    write(repo, "pkg/core.py", (repo / "pkg/core.py").read_text() +
          "\nRETRYABLE_HTTP_METHODS = frozenset({'GET', 'HEAD', 'PUT'})\n")
    shas["pr11-a"] = commit(repo, "retry idempotent methods")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "Retry idempotent requests on failure (#11)",
        "retry")
    shas["pr11"] = git(repo, "rev-parse", "HEAD").strip()
    return repo, shas


def test_a_merged_pull_request_asks_its_title(pull_repo, cli, tmp_path):
    """Issue 24: the question is the pull request's title, ``source`` records it, the
    grades are what the whole pull request changed, and its own commits are not asked
    again."""
    repo, shas = pull_repo
    doc, stderr = draft(cli, repo, tmp_path, "--count", "10")
    by_commit = {q["source"]["commit"]: q for q in doc["queries"]}
    assert set(by_commit) == {shas["pr7"], shas["pr9"], shas["pr11"], shas["stable"]}
    pr7 = by_commit[shas["pr7"]]
    assert pr7["question"] == "Give every request a configurable timeout"
    assert pr7["source"] == {"commit": shas["pr7"],
                             "subject": "Merge pull request #7 from dev/timeouts",
                             "pull_request": 7,
                             "title": "Give every request a configurable timeout"}
    assert pr7["shape"] == "cross-file"
    assert {m: g for m, g in pr7["relevance_grades"].items() if g} == {
        "pkg/core.py": 2, "pkg/utils.py": 3}
    # facts: lines the pull request added (its diff against the first parent)
    assert {"fact": "DEFAULT_REQUEST_TIMEOUT_SECONDS = 30.0",
            "evidence": "DEFAULT_REQUEST_TIMEOUT_SECONDS = 30.0"} in pr7["gold_facts"]
    pr9 = by_commit[shas["pr9"]]
    assert pr9["question"] == "Cache parsed URLs between calls"
    assert (pr9["source"]["pull_request"], pr9["source"]["title"]) == (
        9, "Cache parsed URLs between calls (#9)")
    pr11 = by_commit[shas["pr11"]]
    assert pr11["question"] == "Retry idempotent requests on failure"
    assert pr11["source"]["pull_request"] == 11
    assert "pull_request" not in by_commit[shas["stable"]]["source"]
    # the pull requests' own commits: skipped, counted; the branch merge: skipped
    assert "3 a commit of a merged pull request (its title is asked instead)" in stderr
    assert "1 merge of branches" in stderr
    files = git(repo, "ls-files").split()
    gt, problems = load_ground_truth(json.dumps(doc), "draft.json", present_modules=files)
    assert gt is not None, [p.render() for p in problems]
    jsonschema.validate(doc, ground_truth_schema())     # the published schema agrees
