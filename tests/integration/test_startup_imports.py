"""Each command imports what it needs when it needs it: ``--help`` and ``validate`` start
without requests, jinja2 or NeuralMind (about 0.5 s and 0.6 s of imports), checked in a
fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

from evaluator import neuralmind_index

HEAVY = ("requests", "jinja2", "neuralmind")
PROBE = """
import contextlib, io, json, sys
from evaluator.cli import main
code = None
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as done:
        code = done.code
heavy = set(HEAVY)
print(json.dumps({"code": code, "loaded": sorted({m.split('.')[0] for m in sys.modules}
                                                 & heavy)}))
""".replace("HEAVY", repr(HEAVY))


def probe(*args: str, code: str = PROBE) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    result: dict[str, object] = json.loads(out.splitlines()[-1])
    return result


def test_help_imports_none_of_them():
    assert probe("--help") == {"code": 0, "loaded": []}
    assert probe("evaluate", "--help") == {"code": 0, "loaded": []}


def test_validate_imports_none_of_them(sample_repo):
    assert probe("validate", str(sample_repo)) == {"code": 0, "loaded": []}


def test_validate_imports_neither_the_application_nor_the_evaluation(sample_repo):
    """``validate`` reads and checks a file: it needs neither ``evaluator.app`` (reports,
    comparisons, baselines) nor the evaluation or the authoring it imports."""
    modules = ("evaluator.app", "evaluator.evaluate", "evaluator.authoring",
               "evaluator.validation")
    code = PROBE.replace("{m.split('.')[0] for m in sys.modules}", "set(sys.modules)") \
        .replace(repr(HEAVY), repr(modules))
    assert probe("validate", str(sample_repo), code=code) == {
        "code": 0, "loaded": ["evaluator.validation"]}
    assert probe("evaluate", "--help", code=code) == {"code": 0, "loaded": []}


def test_the_probe_sees_an_import():
    """The check can fail: a module that renders or talks to GitHub brings them in."""
    code = PROBE.replace("from evaluator.cli import main", "import evaluator.publish\n"
                         "from evaluator.cli import main")
    assert probe("--help", code=code) == {"code": 0, "loaded": ["jinja2", "requests"]}


def test_code_suffixes_read_from_the_source_match_the_imported_set():
    """The universe's source suffixes are read from NeuralMind's graphgen without importing
    it; they are the set the imported module holds."""
    from neuralmind import graphgen

    assert neuralmind_index._suffixes_in_source() == frozenset(
        s.lower() for s in graphgen._CODE_SUFFIXES)
    assert neuralmind_index.code_suffixes() == neuralmind_index._suffixes_in_source()
