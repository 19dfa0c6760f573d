"""``init --from-history`` on a repository whose package is named like build output
(pypa/build's ``src/build/``, found by issue 24's seventh cold review: the default ``build/``
rule left the whole package out of the universe, and the route drafted 2 of 20)."""

from __future__ import annotations

from pathlib import Path

from tests.history_repos import commit_edits, draft, package_repo

BUILDER = '''"""Build a distribution from a source tree."""


def build_sdist(srcdir, outdir):
    """Build a source distribution of ``srcdir`` into ``outdir``."""
    return outdir
'''
ENV = '''"""Isolated build environments."""


class IsolatedEnv:
    """A virtual environment the build runs in."""

    def install(self, requirements):
        """Install ``requirements`` into the environment."""
        return list(requirements)
'''


def test_a_package_named_build_is_asked_about_and_its_build_output_is_not(cli, tmp_path: Path):
    repo = package_repo(tmp_path, {
        "src/build/__init__.py": '__version__ = "1.0"\n',
        "src/build/_builder.py": BUILDER, "src/build/env.py": ENV,
        # committed build output: a copy of the package under build/lib/
        "build/lib/build/__init__.py": '__version__ = "0.9"\n',
        "build/lib/build/env.py": ENV})
    commit_edits(repo, "Reject a source tree without a pyproject file when building",
                 ("src/build/_builder.py", "    return outdir\n",
                  "    if not srcdir:\n        raise ValueError(srcdir)\n    return outdir\n"))
    commit_edits(repo, "Skip installing into the environment when nothing is required",
                 ("src/build/env.py", "        return list(requirements)\n",
                  "        if not requirements:\n            return []\n"
                  "        return list(requirements)\n"),
                 ("build/lib/build/env.py", "        return list(requirements)\n",
                  "        if not requirements:\n            return []\n"
                  "        return list(requirements)\n"))
    doc, stderr = draft(cli, repo, tmp_path, "--count", "2")
    asked = {q["question"]: {m for m, g in q["relevance_grades"].items() if g == 3}
             for q in doc["queries"]}
    assert asked == {
        "Reject a source tree without a pyproject file when building": {"src/build/_builder.py"},
        "Skip installing into the environment when nothing is required": {"src/build/env.py"},
    }, stderr
    graded = {m for q in doc["queries"] for m in q["relevance_grades"]}
    assert not any(m.startswith("build/") for m in graded)
