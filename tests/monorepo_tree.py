"""A real multi-package git repository in a temp dir, for the sections/shards/merge tests.

Three sections, each a real package with its own ground truth, copied from what is installed
(no network):

* ``sample`` — NeuralMind's demo ``sample_project`` with its bundled 19 questions;
* ``requests`` — the installed ``requests`` package (a dependency of this project), with
  four questions authored here;
* ``markupsafe`` — the installed ``markupsafe`` (jinja2's dependency), two questions.

Module paths in each ground truth are relative to the section's folder.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import markupsafe
import neuralmind
import requests

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = Path(neuralmind.__file__).resolve().parent / "demo_data" / "sample_project"
SAMPLE_QUERIES = ROOT / "evaluator" / "data" / "sample_project.retrieval_queries.json"
GIT_ID = ("-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false")

REQUESTS_MODULES = ("__init__.py", "adapters.py", "api.py", "auth.py", "cookies.py",
                    "exceptions.py", "hooks.py", "models.py", "sessions.py", "status_codes.py",
                    "structures.py", "utils.py")
MARKUPSAFE_MODULES = ("__init__.py", "_native.py")


def _queries(modules: tuple[str, ...], items: list[tuple[str, str, str, dict[str, int],
                                                          list[str]]]) -> dict[str, Any]:
    return {"queries": [{"id": qid, "question": question, "shape": shape,
                         "relevance_grades": {m: grades.get(m, 0) for m in modules},
                         "gold_facts": facts}
                        for qid, question, shape, grades, facts in items]}


REQUESTS_QUERIES = _queries(REQUESTS_MODULES, [
    ("focused-redirects", "How does a Session follow redirects, and how many does it follow "
     "before giving up?", "focused", {"sessions.py": 3, "exceptions.py": 1, "models.py": 1},
     ["max_redirects", "TooManyRedirects"]),
    ("focused-status-codes", "How are HTTP status codes looked up by name, as in codes.ok?",
     "focused", {"status_codes.py": 3, "structures.py": 2}, ["LookupDict", "_codes"]),
    ("cross-basic-auth", "How is HTTP basic authentication added to a request's headers?",
     "cross-file", {"auth.py": 3, "models.py": 2, "sessions.py": 1},
     ["HTTPBasicAuth", "_basic_auth_str"]),
    ("identity-case-insensitive", "What is CaseInsensitiveDict?", "identity",
     {"structures.py": 3, "utils.py": 1}, ["class CaseInsensitiveDict", "lower()"]),
])
MARKUPSAFE_QUERIES = _queries(MARKUPSAFE_MODULES, [
    ("focused-escape", "How does markupsafe escape the HTML special characters of a string?",
     "focused", {"__init__.py": 3, "_native.py": 2}, ["&amp;", "&lt;"]),
    ("identity-markup", "What is the Markup class?", "identity", {"__init__.py": 3},
     ["class Markup(str)", "__html__"]),
])

SECTIONS: dict[str, tuple[str, str]] = {  # name: (section path, ground-truth path)
    "sample": ("packages/sample/project", "packages/sample/retrieval_queries.json"),
    "requests": ("packages/requests/src/requests", "packages/requests/retrieval_queries.json"),
    "markupsafe": ("packages/markupsafe/src/markupsafe",
                   "packages/markupsafe/retrieval_queries.json"),
}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *GIT_ID, *args], check=True,
                          capture_output=True, text=True).stdout


def _copy_package(source: Path, dest: Path) -> None:
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns(
        "__pycache__", "*.pyc", "*.so", ".neuralmind"))


def options_yaml(names: tuple[str, ...] = tuple(SECTIONS), extra: str = "",
                 section_extra: dict[str, str] | None = None) -> str:
    lines = ["sections:"]
    for name in names:
        path, queries = SECTIONS[name]
        lines += [f"  {name}:", f"    path: {path}", f"    queries: {queries}"]
        lines += [f"    {line}" for line in (section_extra or {}).get(name, "").splitlines()]
    return "\n".join(lines) + "\n" + extra


def make_monorepo(dest: Path, names: tuple[str, ...] = tuple(SECTIONS), *,
                  options: str | None = None) -> str:
    """The repository at ``dest`` (a git repository, everything committed); its commit.

    ``options`` is the options file's text (default: one section per name, default floors).
    """
    dest.mkdir(parents=True)
    for name in names:
        folder = dest / SECTIONS[name][0]
        queries = dest / SECTIONS[name][1]
        if name == "sample":
            _copy_package(SAMPLE, folder)
            shutil.copy(SAMPLE_QUERIES, queries)
        elif name == "requests":
            _copy_package(Path(requests.__file__).resolve().parent, folder)
            queries.write_text(json.dumps(REQUESTS_QUERIES, indent=2))
        else:
            _copy_package(Path(markupsafe.__file__).resolve().parent, folder)
            queries.write_text(json.dumps(MARKUPSAFE_QUERIES, indent=2))
    (dest / "README.md").write_text("# A monorepo\n\nSeveral packages, one repository.\n")
    (dest / ".retrieval-eval.yml").write_text(options if options is not None
                                              else options_yaml(names))
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "a monorepo of " + ", ".join(names))
    return git(dest, "rev-parse", "HEAD").strip()
