"""``init --from-history`` on a src layout (issue 24 round 9: urllib3 history-20 "Use
retrying sockets logic" changed only ``dummyserver/``, the test suite's HTTP server; build
history-01/-02 only ``tasks/release.py``; both rejected): a commit that changes only the
modules outside ``src/`` changed the project's tooling and is skipped, counted; one that
also changes the package is asked, and a flat layout's top-level tools are asked."""

from __future__ import annotations

from pathlib import Path

from evaluator.core.commits import SKIP_TOOLING
from tests.history_repos import commit_edits, draft, history_line, package_repo, skipped

CONNECTION = '''"""Connections."""


def connect(host, port):
    """Open a connection to ``host``."""
    return (host, port)
'''
SERVER = '''"""The test suite's HTTP server."""


def serve(app, port):
    """Serve ``app`` on ``port`` until stopped."""
    return app, port
'''
RELEASE = '''"""Cut a release."""


def bump(version):
    """The next version after ``version``."""
    return version
'''
SERVER_EDIT = ("dummyserver/server.py", "    return app, port\n",
               "    listener = open_retrying_socket(port)\n    return app, listener\n")


def test_a_change_to_tooling_outside_src_only_is_skipped(cli, tmp_path: Path):
    repo = package_repo(tmp_path, {
        "src/pkg/__init__.py": "", "src/pkg/connection.py": CONNECTION,
        "src/pkg/pool.py": "def pool(size):\n    return [None] * size\n",
        "dummyserver/server.py": SERVER, "tasks/release.py": RELEASE})
    server = commit_edits(repo, "Use retrying sockets logic in the server", SERVER_EDIT)
    release = commit_edits(repo, "Bump semantic versions automatically on release",
                           ("tasks/release.py", "    return version\n",
                            "    major, minor, patch = version.split('.')\n"
                            "    return f'{major}.{minor}.{int(patch) + 1}'\n"))
    both = commit_edits(repo, "Retry refused connections before giving up",
                        ("src/pkg/connection.py", "    return (host, port)\n",
                         "    attempts_left = retry_budget(host)\n"
                         "    return (host, port, attempts_left)\n"),
                        ("dummyserver/server.py", "    return app, listener\n",
                         "    refuse_first_connection(listener)\n    return app, listener\n"))
    doc, stderr = draft(cli, repo, tmp_path, "--count", "5")
    asked = {q["source"]["commit"]: q for q in doc["queries"]}
    assert server not in asked and release not in asked
    assert skipped(history_line(stderr), SKIP_TOOLING) == 2
    assert asked[both]["relevance_grades"]["src/pkg/connection.py"] == 3


def test_a_flat_layouts_top_level_tools_are_asked(cli, tmp_path: Path):
    repo = package_repo(tmp_path, {
        "pkg/__init__.py": "", "pkg/connection.py": CONNECTION,
        "dummyserver/server.py": SERVER})
    server = commit_edits(repo, "Use retrying sockets logic in the server", SERVER_EDIT)
    doc, stderr = draft(cli, repo, tmp_path, "--count", "5")
    assert [q["source"]["commit"] for q in doc["queries"]] == [server], stderr
    assert SKIP_TOOLING not in history_line(stderr)
