"""``init --from-history``, round 4 (issue 24's fresh review of jinja, httpx and pluggy):
each rule on a commit of a real git repository built here, modelled on a question that
review rejected or edited (its repository and id in the comment)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.core.commit_filters import SKIP_VERSION_ONLY
from evaluator.core.commit_topics import SKIP_TWO_TOPICS
from evaluator.core.commits import SKIP_CHORE, SKIP_GIVEAWAY
from tests.integration.test_history_filters import _edit
from tests.integration.test_history_round3 import _line
from tests.integration.test_init_history import commit, draft, new_repo, write

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
    repo = new_repo(tmp_path / "repo")
    write(repo, "pkg/__init__.py", "")
    write(repo, "pkg/_models.py", MODELS)
    write(repo, "pkg/client.py", CLIENT)
    write(repo, "pkg/__version__.py", '__title__ = "pkg"\n__version__ = "1.0.0"\n')
    commit(repo, "Initial import of the package")
    shas: dict[str, str] = {}
    # httpx history-17: a private function's words, in order, without the underscores
    _edit(repo, "pkg/_models.py", '    return [part.strip() for part in value.split(",")]',
          '    if not value:\n        return []\n'
          '    return [part.strip() for part in value.split(",")]')
    shas["words"] = commit(repo, "Fix parse header links for an empty header value")
    # pluggy history-15: a private class written as words
    _edit(repo, "pkg/_models.py", "        return [plugin() for plugin in plugins]",
          "        selected_plugins = [p for p in plugins if p.enabled]\n"
          "        return [plugin() for plugin in selected_plugins]")
    shas["camel"] = commit(repo, "Let the subset hook caller skip disabled plugins")
    # a version file changed along with the code: never graded
    _edit(repo, "pkg/client.py", "    return request",
          "    for attempt in range(retries):\n        request = request.retry(attempt)\n"
          "    return request")
    _edit(repo, "pkg/__version__.py", '"1.0.0"', '"1.1.0"')
    shas["with_version"] = commit(repo, "Retry failed requests as many times as asked")
    # a version string alone, under a subject the version-bump rule does not read as one
    _edit(repo, "pkg/__version__.py", '"1.1.0"', '"1.1.1"')
    shas["version_only"] = commit(repo, "Ship the retry fix to everyone waiting on it")
    # the control: a version file whose change is code, not only a version string
    _edit(repo, "pkg/__version__.py", '__version__ = "1.1.1"\n',
          '__version__ = "1.1.1"\nversion_tuple = tuple(int(p) for p in '
          '__version__.split("."))\n')
    shas["version_code"] = commit(repo, "Expose the release as a tuple of integers")
    # pluggy history-03/-16/-18/-20: tidying announced as such, over a real code change
    for name, subject in (("cleanups", "A few small cleanups"),
                          ("tool", "Run pyupgrade --py36"),
                          ("a_bit", "Optimize request sending a bit"),
                          ("simplify", "Code-level simplifications to sending")):
        _edit(repo, "pkg/client.py", "    return request\n",
              f"    request = request.with_label({name!r})\n    return request\n")
        shas[name] = commit(repo, subject)
    # ... while "Optimize" alone, or a refactor that says what it is for, is a real change
    _edit(repo, "pkg/client.py", "    return request\n",
          "    request = request.cached_or_fetched()\n    return request\n")
    shas["optimize"] = commit(repo, "Optimize repeated sends of the same request")
    _edit(repo, "pkg/client.py", "    return request\n",
          "    request = request.through_proxy(resolve_proxies(request))\n    return request\n")
    shas["refactor"] = commit(repo, "Refactor sending to allow proxy resolution")
    return repo, shas


def test_private_names_written_as_words_are_give_aways(round4_repo, cli, tmp_path):
    repo, shas = round4_repo
    doc, stderr = draft(cli, repo, tmp_path, "--count", "20")
    asked = {q["source"]["commit"] for q in doc["queries"]}
    assert shas["words"] not in asked and shas["camel"] not in asked
    assert f"2 {SKIP_GIVEAWAY}" in _line(stderr)


def test_a_version_string_change_is_never_graded(round4_repo, cli, tmp_path):
    repo, shas = round4_repo
    doc, stderr = draft(cli, repo, tmp_path, "--count", "20")
    asked = {q["source"]["commit"]: q for q in doc["queries"]}
    graded = {m: g for m, g in asked[shas["with_version"]]["relevance_grades"].items() if g}
    assert graded == {"pkg/client.py": 3}
    assert asked[shas["with_version"]]["shape"] == "focused"
    assert shas["version_only"] not in asked
    assert f"1 {SKIP_VERSION_ONLY}" in _line(stderr)
    graded = {m: g for m, g in asked[shas["version_code"]]["relevance_grades"].items() if g}
    assert graded == {"pkg/__version__.py": 3}


def test_tidying_subjects_are_chores_but_a_plain_optimize_is_not(round4_repo, cli, tmp_path):
    repo, shas = round4_repo
    doc, stderr = draft(cli, repo, tmp_path, "--count", "20")
    asked = {q["source"]["commit"] for q in doc["queries"]}
    for name in ("cleanups", "tool", "a_bit", "simplify"):
        assert shas[name] not in asked, name
    assert f"4 {SKIP_CHORE}" in _line(stderr)
    assert shas["optimize"] in asked and shas["refactor"] in asked


def test_a_call_that_writes_the_fix_is_a_fact(tmp_path, cli):
    """jinja history-15: ``self.writeline("finally: await agen.aclose()")`` states the fix;
    it was read as punctuation and keywords (a fragment) and lost from the facts."""
    repo = new_repo(tmp_path / "repo")
    write(repo, "pkg/__init__.py", "")
    write(repo, "pkg/codegen.py", '''"""Generating the render function."""


class CodeGenerator:
    def visit_extends(self, node):
        self.writeline("async for event in parent_template.root_render_func(context):")
''')
    commit(repo, "Initial import of the package")
    _edit(repo, "pkg/codegen.py",
          '        self.writeline("async for event in parent_template.root_render_func('
          'context):")\n',
          '        self.writeline("agen = parent_template.root_render_func(context)")\n'
          '        self.writeline("try:")\n'
          '        self.writeline("async for event in agen:")\n'
          '        self.writeline("finally: await agen.aclose()")\n')
    sha = commit(repo, "Fix all missing aclose related warnings")
    doc, _stderr = draft(cli, repo, tmp_path, "--count", "5")
    (query,) = [q for q in doc["queries"] if q["source"]["commit"] == sha]
    facts = [f["fact"] for f in query["gold_facts"]]
    assert 'self.writeline("finally: await agen.aclose()")' in facts


def test_related_changes_and_lists_over_unrelated_modules_are_two_topics(tmp_path, cli):
    """pluggy history-15 "X & related changes", httpx history-04: a subject listing
    changes over modules none of which imports another."""
    repo = new_repo(tmp_path / "repo")
    write(repo, "pkg/__init__.py", "")
    write(repo, "pkg/client.py", CLIENT)
    write(repo, "pkg/cookies.py", "def load_jar(path):\n    return open(path).read()\n")
    write(repo, "pkg/urls.py", "from pkg.cookies import load_jar\n\n\n"
                               "def quote(text):\n    return text\n")
    commit(repo, "Initial import of the package")
    shas = {}
    for name, subject in (("related", "Improve request sending & related changes"),
                          ("list", "Fix retries, cookie loading and redirects"),
                          ("control", "Fix quoting, cookie jar reads and path handling")):
        _edit(repo, "pkg/client.py" if name != "control" else "pkg/urls.py",
              "    return request\n" if name != "control" else "    return text\n",
              f"    marker_{name} = request.tagged({name!r})\n    return request\n"
              if name != "control" else "    quoted_text = text.replace(' ', '+')\n"
              "    return quoted_text\n")
        _edit(repo, "pkg/cookies.py", "    return open(path).read()\n",
              f"    jar_{name} = open(path).read()\n    return open(path).read()\n")
        shas[name] = commit(repo, subject)
    doc, stderr = draft(cli, repo, tmp_path, "--count", "5")
    asked = {q["source"]["commit"] for q in doc["queries"]}
    assert shas["related"] not in asked and shas["list"] not in asked
    assert f"2 {SKIP_TWO_TOPICS}" in _line(stderr)
    assert shas["control"] in asked   # urls.py imports cookies.py: one topic
