"""``init --from-history``, round 4 (issue 24's fresh review of jinja, httpx and pluggy):
each rule on a commit of a real git repository built here, modelled on a question that
review rejected or edited (its repository and id in the comment)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.core.commit_filters import SKIP_VERSION_ONLY
from evaluator.core.commit_topics import SKIP_TWO_TOPICS
from evaluator.core.commits import SKIP_CHORE, SKIP_GIVEAWAY
from tests.history_repos import (
    commit_edits,
    draft,
    history_line,
    package_repo,
    skipped,
)

MODELS = '''"""Requests, responses and their headers."""


def _parse_header_links(value):
    """Links from a Link header value."""
    return [part.strip() for part in value.split(",")]


class _SubsetHookCaller:
    """Calls the hook implementations of a subset of the plugins."""

    def call(self, plugins):
        return [plugin() for plugin in plugins]
'''
CLIENT = '''"""The client."""


def send(request, retries=0):
    """Send a request."""
    return request
'''


@pytest.fixture
def round4_repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = package_repo(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/_models.py": MODELS,
        "pkg/client.py": CLIENT,
        "pkg/__version__.py": '__title__ = "pkg"\n__version__ = "1.0.0"\n',
    })
    shas: dict[str, str] = {}
    # httpx history-17: a private function's words, in order, without the underscores
    shas["words"] = commit_edits(repo, "Fix parse header links for an empty header value",
            ("pkg/_models.py", '    return [part.strip() for part in value.split(",")]',
             '    if not value:\n        return []\n'
             '    return [part.strip() for part in value.split(",")]'))
    # pluggy history-15: a private class written as words
    shas["camel"] = commit_edits(repo, "Let the subset hook caller skip disabled plugins",
            ("pkg/_models.py", "        return [plugin() for plugin in plugins]",
             "        selected_plugins = [p for p in plugins if p.enabled]\n"
             "        return [plugin() for plugin in selected_plugins]"))
    # a version file changed along with the code: never graded
    shas["with_version"] = commit_edits(repo, "Retry failed requests as many times as asked",
            ("pkg/client.py", "    return request",
             "    for attempt in range(retries):\n        request = request.retry(attempt)\n"
             "    return request"),
            ("pkg/__version__.py", '"1.0.0"', '"1.1.0"'))
    # a version string alone, under a subject the version-bump rule does not read as one
    shas["version_only"] = commit_edits(repo, "Ship the retry fix to everyone waiting on it",
            ("pkg/__version__.py", '"1.1.0"', '"1.1.1"'))
    # the control: a version file whose change is code, not only a version string
    shas["version_code"] = commit_edits(repo, "Expose the release as a tuple of integers",
            ("pkg/__version__.py", '__version__ = "1.1.1"\n',
             '__version__ = "1.1.1"\nversion_tuple = tuple(int(p) for p in '
             '__version__.split("."))\n'))
    # pluggy history-03/-16/-18/-20: tidying announced as such, over a real code change
    for name, subject in (("cleanups", "A few small cleanups"),
                          ("tool", "Run pyupgrade --py36"),
                          ("a_bit", "Optimize request sending a bit"),
                          ("simplify", "Code-level simplifications to sending")):
        shas[name] = commit_edits(repo, subject,
                ("pkg/client.py", "    return request\n",
                 f"    request = request.with_label({name!r})\n    return request\n"))
    # ... while "Optimize" alone, or a refactor that says what it is for, is a real change
    shas["optimize"] = commit_edits(repo, "Optimize repeated sends of the same request",
            ("pkg/client.py", "    return request\n",
             "    request = request.cached_or_fetched()\n    return request\n"))
    shas["refactor"] = commit_edits(repo, "Refactor sending to allow proxy resolution",
            ("pkg/client.py", "    return request\n",
             "    request = request.through_proxy(resolve_proxies(request))\n    return request\n"))
    return repo, shas


def test_private_names_written_as_words_are_give_aways(round4_repo, cli, tmp_path):
    repo, shas = round4_repo
    doc, stderr = draft(cli, repo, tmp_path, "--count", "20")
    asked = {q["source"]["commit"] for q in doc["queries"]}
    assert shas["words"] not in asked and shas["camel"] not in asked
    assert skipped(history_line(stderr), SKIP_GIVEAWAY) == 2


def test_a_version_string_change_is_never_graded(round4_repo, cli, tmp_path):
    repo, shas = round4_repo
    doc, stderr = draft(cli, repo, tmp_path, "--count", "20")
    asked = {q["source"]["commit"]: q for q in doc["queries"]}
    graded = {m: g for m, g in asked[shas["with_version"]]["relevance_grades"].items() if g}
    assert graded == {"pkg/client.py": 3}
    assert asked[shas["with_version"]]["shape"] == "focused"
    assert shas["version_only"] not in asked
    assert skipped(history_line(stderr), SKIP_VERSION_ONLY) == 1
    graded = {m: g for m, g in asked[shas["version_code"]]["relevance_grades"].items() if g}
    assert graded == {"pkg/__version__.py": 3}


def test_tidying_subjects_are_chores_but_a_plain_optimize_is_not(round4_repo, cli, tmp_path):
    repo, shas = round4_repo
    doc, stderr = draft(cli, repo, tmp_path, "--count", "20")
    asked = {q["source"]["commit"] for q in doc["queries"]}
    for name in ("cleanups", "tool", "a_bit", "simplify"):
        assert shas[name] not in asked, name
    assert skipped(history_line(stderr), SKIP_CHORE) == 4
    assert shas["optimize"] in asked and shas["refactor"] in asked


def test_a_call_that_writes_the_fix_is_a_fact(tmp_path, cli):
    """jinja history-15: ``self.writeline("finally: await agen.aclose()")`` states the fix;
    it was read as punctuation and keywords (a fragment) and lost from the facts."""
    repo = package_repo(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/codegen.py": '''"""Generating the render function."""


class CodeGenerator:
    def visit_extends(self, node):
        self.writeline("async for event in parent_template.root_render_func(context):")
''',
    })
    sha = commit_edits(repo, "Fix all missing aclose related warnings",
            ("pkg/codegen.py",
             '        self.writeline("async for event in parent_template.root_render_func('
             'context):")\n',
             '        self.writeline("agen = parent_template.root_render_func(context)")\n'
             '        self.writeline("try:")\n'
             '        self.writeline("async for event in agen:")\n'
             '        self.writeline("finally: await agen.aclose()")\n'))
    doc, _stderr = draft(cli, repo, tmp_path, "--count", "5")
    (query,) = [q for q in doc["queries"] if q["source"]["commit"] == sha]
    facts = [f["fact"] for f in query["gold_facts"]]
    assert 'self.writeline("finally: await agen.aclose()")' in facts


def test_related_changes_and_lists_over_unrelated_modules_are_two_topics(tmp_path, cli):
    """pluggy history-15 "X & related changes", httpx history-04: a subject listing
    changes over modules none of which imports another."""
    repo = package_repo(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/client.py": CLIENT,
        "pkg/cookies.py": "def load_jar(path):\n    return open(path).read()\n",
        "pkg/urls.py": "from pkg.cookies import load_jar\n\n\n"
                       "def quote(text):\n    return text\n",
    })
    shas = {}
    for name, subject in (("related", "Improve request sending & related changes"),
                          ("list", "Fix retries, cookie loading and redirects"),
                          ("control", "Fix quoting, cookie jar reads and path handling")):
        shas[name] = commit_edits(repo, subject,
                ("pkg/client.py" if name != "control" else "pkg/urls.py",
                 "    return request\n" if name != "control" else "    return text\n",
                 f"    marker_{name} = request.tagged({name!r})\n    return request\n"
                 if name != "control" else "    quoted_text = text.replace(' ', '+')\n"
                 "    return quoted_text\n"),
                ("pkg/cookies.py", "    return open(path).read()\n",
                 f"    jar_{name} = open(path).read()\n    return open(path).read()\n"))
    doc, stderr = draft(cli, repo, tmp_path, "--count", "5")
    asked = {q["source"]["commit"] for q in doc["queries"]}
    assert shas["related"] not in asked and shas["list"] not in asked
    assert skipped(history_line(stderr), SKIP_TWO_TOPICS) == 2
    assert shas["control"] in asked   # urls.py imports cookies.py: one topic
