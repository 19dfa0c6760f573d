"""``init --from-history``, round 8 (issue 24's sixth fresh review of uvicorn, typer and
jsonschema): each rule on a commit of a real git repository built here, modelled on a
question that review rejected or edited (its repository and id in the comment)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.core.commit_chores import SKIP_COSMETIC
from evaluator.core.commits import (
    SKIP_CHORE,
    SKIP_GIVEAWAY,
    SKIP_PYTHON_DROP,
    SKIP_VERSION,
    SKIP_WORDING,
)
from tests.history_repos import commit, draft, git, package_repo, skipped
from tests.history_repos import edit as _edit
from tests.history_repos import history_line as _line

MAIN = '''"""The command line."""
import click

from pkg import _checks, _legacy_checks


@click.command()
@click.option("--proxy-headers", is_flag=True,
              help="Enable X-Forwarded-Proto to populate remote address info.")
def main(proxy_headers):
    """Run the server."""
    spec = find_spec(proxy_headers)
    rules = {"ref": _checks.ref, "old": _legacy_checks.old}
    applicable_checks = sorted(rules)
    return spec.loader, applicable_checks


def find_spec(name):
    """The import spec of ``name``, if any."""
    return name or None
'''
CHECKS = '''"""Keyword checks."""


def ref(value):
    """Resolve a reference."""
    return value
'''
LEGACY = '''"""Older drafts' checks."""


def old(value):
    """An old check."""
    return value
'''
UTILS = '''"""Helpers of the protocols."""


class ClientDisconnected(IOError):
    """The client went away."""


class ServerState:
    """State shared between protocols."""

    def __init__(self):
        self.total_requests = 0
'''


@pytest.fixture
def round8_repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = package_repo(tmp_path, {"pkg/__init__.py": '__version__ = "1.0"\n',
                                   "pkg/main.py": MAIN, "pkg/_checks.py": CHECKS,
                                   "pkg/_legacy_checks.py": LEGACY, "pkg/utils.py": UTILS,
                                   "requirements.txt": "websockets>=12.0\n"})
    shas: dict[str, str] = {}
    # uvicorn history-17: IOError swapped for OSError, the very same class
    _edit(repo, "pkg/utils.py", "class ClientDisconnected(IOError):",
          "class ClientDisconnected(OSError):")
    shas["alias"] = commit(repo, "A lost client's error inherits from OSError, not IOError")
    # uvicorn history-04: one help text reworded
    _edit(repo, "pkg/main.py", 'help="Enable X-Forwarded-Proto to populate remote address',
          'help="Enable X-Forwarded-Proto to populate url scheme and remote address')
    shas["help"] = commit(repo, "Refine help message for option --proxy-headers")
    # typer history-08: a type checker made to pass (ignore comments, a narrowing assert)
    _edit(repo, "pkg/main.py", "    spec = find_spec(proxy_headers)\n",
          "    spec = find_spec(proxy_headers)  # ty: ignore\n    assert spec is not None\n")
    shas["ty"] = commit(repo, "Ensure the type checker runs without errors")
    # jsonschema history-20: modules renamed (git mv), their imports and a local name follow
    git(repo, "mv", "pkg/_checks.py", "pkg/_keywords.py")
    git(repo, "mv", "pkg/_legacy_checks.py", "pkg/_legacy_keywords.py")
    text = (repo / "pkg/main.py").read_text(encoding="utf-8")
    (repo / "pkg/main.py").write_text(
        text.replace("_legacy_checks", "_legacy_keywords").replace("_checks", "_keywords")
        .replace("applicable_keywords", "applicable_rules"), encoding="utf-8")
    shas["rename"] = commit(repo, "Match the specification's vocabulary in internal names")
    # ... while a renamed module that comes with new behaviour is asked
    _edit(repo, "pkg/_keywords.py", "    return value\n",
          "    return value.strip() if isinstance(value, str) else value\n")
    shas["behaviour"] = commit(repo, "Strip blanks around references before resolving them")
    # ... and a library swapped for another is no rename
    _edit(repo, "pkg/main.py", "import click\n", "import click\nimport json\n")
    _edit(repo, "pkg/main.py", "    return spec.loader, applicable_rules\n",
          "    return spec.loader, json.dumps(applicable_rules)\n")
    shas["json"] = commit(repo, "Report the applicable rules as a JSON list")
    _edit(repo, "pkg/main.py", "import json\n", "import ujson\n")
    _edit(repo, "pkg/main.py", "json.dumps(applicable_rules)",
          "ujson.dumps(applicable_rules)")
    shas["ujson"] = commit(repo, "Write the JSON list of applicable rules faster with ujson")
    # jsonschema history-11: a Python version dropped, named by its number alone
    _edit(repo, "pkg/utils.py", "        self.total_requests = 0\n",
          "        self.total_requests: int = 0\n        self.tasks: set[object] = set()\n")
    shas["py38"] = commit(repo, "Drop support for 3.8, which is near EOL")
    # uvicorn history-13: a dependency moved to a version (its manifest and a module)
    _edit(repo, "pkg/utils.py", "        self.tasks: set[object] = set()\n",
          "        self.tasks: set[object] = set()\n        self.close_code = 1005\n")
    _edit(repo, "requirements.txt", "websockets>=12.0", "websockets>=13.1")
    shas["upgrade"] = commit(repo, "Upgrade websockets to 13.1")
    # ... while a setting moved to a value in a module alone is no dependency upgrade (the
    # final review); its subject is too vague to ask, and counted so
    _edit(repo, "pkg/utils.py", "        self.close_code = 1005\n",
          "        self.close_code = 1005\n        self.timeout = 30.0\n")
    shas["timeout"] = commit(repo, "Update timeout to 30.0")
    # uvicorn history-07: "the main module" states pkg/main.py
    _edit(repo, "pkg/main.py", "def find_spec(name):\n",
          "def __getattr__(name):\n    if name == 'ServerState':\n"
          "        raise AttributeError(name)\n    return name\n\n\ndef find_spec(name):\n")
    shas["main_module"] = commit(repo, "Deprecate importing the server state from the main module")
    # uvicorn history-17's give-away: a class named without its suffix
    _edit(repo, "pkg/utils.py", '    """The client went away."""\n',
          '    """The client went away."""\n\n    code = 1006\n')
    shas["clipped"] = commit(repo, "Give ClientDisconnect a close code for abnormal closure")
    # jsonschema history-17: linter rules turned on, what they flagged fixed
    _edit(repo, "pkg/utils.py", "        self.close_code = 1005\n",
          "        self.close_code: int = 1005\n        self.reason = ''\n")
    shas["lint"] = commit(repo,
                          "Enable the rest of the rulesets we care about and fix minor things")
    _edit(repo, "pkg/utils.py", "        self.reason = ''\n", "        self.reason = None\n")
    shas["minor"] = commit(repo, "Minor cleanup of the server state")
    # ... while rules of the package's own are asked
    _edit(repo, "pkg/utils.py", "        self.reason = None\n",
          "        self.reason = None\n        self.routing_rules = {'ws': 1}\n")
    shas["rules"] = commit(repo, "Add support for websocket rules in the routing state")
    # round 15 (the paired reviews of round 14: cli history-08, pytest-xdist history-03,
    # invoke history-07): a message reworded, and nothing else, is cosmetic …
    _edit(repo, "pkg/utils.py", "        self.routing_rules = {'ws': 1}\n",
          "        self.routing_rules = {'ws': 1}\n\n    def cap(self, n):\n"
          "        if n > 100:\n            raise ValueError(f'Too many requests: {n}')\n"
          "        return n\n\n    def floor(self, n):\n        if n < 0:\n"
          "            raise ValueError('Negative counts make no sense here')\n"
          "        return n\n")
    shas["limit"] = commit(repo, "Refuse more than a hundred requests per state")
    _edit(repo, "pkg/utils.py", "f'Too many requests: {n}'",
          "f'Refusing {n} requests, see the limits in the docs'")
    shas["message"] = commit(repo, "Change the error messages to use a better format")
    # … while a message given a value to say is a change
    _edit(repo, "pkg/utils.py", "'Negative counts make no sense here'",
          "f'Negative counts make no sense here (got {n})'")
    shas["detail"] = commit(repo, "More detailed errors when a request count is negative")
    # round 15 (python-dotenv history-11, pytest-xdist history-16): a subject stating the
    # option its change adds is found by keyword search …
    _edit(repo, "pkg/main.py", "def main(proxy_headers):\n",
          "@click.option(\"--reload-delay\", type=float, default=0.25)\n"
          "def main(proxy_headers, reload_delay):\n")
    _edit(repo, "pkg/main.py", "    return spec.loader,",
          "    time.sleep(reload_delay)\n    return spec.loader,")
    shas["option"] = commit(repo, "Add --reload-delay option to wait between reloads")
    # … while one naming an option the change only uses is asked
    _edit(repo, "pkg/main.py", "    spec = find_spec(proxy_headers)  # ty: ignore\n",
          "    spec = find_spec(proxy_headers or os.environ.get('PROXY'))  # ty: ignore\n")
    shas["uses"] = commit(repo, "Read the proxy from the environment when --proxy-headers is off")
    return repo, shas


def _drafted(round8_repo, cli, tmp_path) -> tuple[dict[str, str], dict[str, str], str]:
    """The fixture's shas, the draft's questions by source commit, its ``history:`` line."""
    repo, shas = round8_repo
    doc, stderr = draft(cli, repo, tmp_path, "--count", "40")
    return shas, {q["source"]["commit"]: q["question"] for q in doc["queries"]}, _line(stderr)


def test_alias_help_text_type_checker_and_rename_changes_are_skipped(round8_repo, cli,
                                                                      tmp_path):
    shas, asked, line = _drafted(round8_repo, cli, tmp_path)
    for name in ("alias", "help", "ty", "rename", "message"):
        assert shas[name] not in asked, name
    assert skipped(line, SKIP_COSMETIC) == 5
    assert asked[shas["detail"]] == "More detailed errors when a request count is negative"
    assert asked[shas["behaviour"]] == "Strip blanks around references before resolving them"
    assert asked[shas["ujson"]] == "Write the JSON list of applicable rules faster with ujson"


def test_a_python_version_dropped_and_a_dependency_upgrade_are_skipped(round8_repo, cli,
                                                                        tmp_path):
    shas, asked, line = _drafted(round8_repo, cli, tmp_path)
    assert shas["py38"] not in asked and shas["upgrade"] not in asked
    assert skipped(line, SKIP_PYTHON_DROP) == 1 and skipped(line, SKIP_VERSION) == 1
    assert shas["timeout"] not in asked and skipped(line, SKIP_WORDING) == 1


def test_a_file_named_in_words_and_a_clipped_class_name_are_give_aways(round8_repo, cli,
                                                                       tmp_path):
    shas, asked, line = _drafted(round8_repo, cli, tmp_path)
    assert shas["main_module"] not in asked and shas["clipped"] not in asked
    assert shas["option"] not in asked
    assert asked[shas["uses"]] == \
        "Read the proxy from the environment when --proxy-headers is off"
    assert skipped(line, SKIP_GIVEAWAY) == 3


def test_linter_rules_turned_on_and_a_minor_cleanup_are_chores(round8_repo, cli, tmp_path):
    shas, asked, line = _drafted(round8_repo, cli, tmp_path)
    assert shas["lint"] not in asked and shas["minor"] not in asked
    assert skipped(line, SKIP_CHORE) == 2
    assert asked[shas["rules"]] == "Add support for websocket rules in the routing state"
