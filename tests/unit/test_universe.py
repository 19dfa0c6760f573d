"""Unit tests for evaluator.core.universe: globs, the default universe and its reasons."""

from __future__ import annotations

import fnmatch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluator.core.universe import (
    DEFAULT_EXCLUDES,
    UniverseSpec,
    classify,
    glob_matches,
    invalid_globs,
    select_universe,
)

CLICK_LIKE = (
    "src/click/__init__.py", "src/click/core.py", "src/click/testing.py",
    "src/click/_compat.py", "src/click/py.typed", "tests/test_basic.py", "tests/conftest.py",
    "docs/conf.py", "docs/index.rst", "examples/repo/repo.py", "LICENSE.txt", "README.md",
    ".github/workflows/tests.yml", ".pre-commit-config.yaml", "pyproject.toml", "setup.py",
    "tox.ini", "src/click/proto/msg_pb2.py", "benchmarks/bench_parse.py",
    "vendor/six.py", "web/app.min.js", "web/app.js", "pkg/foo_test.go", "pkg/foo.go",
)


@pytest.mark.parametrize(("path", "reason"), [
    ("tests/test_basic.py", "tests"),
    ("tests/conftest.py", "tests"),
    ("pkg/foo_test.go", "tests"),
    ("docs/conf.py", "docs"),
    ("docs/index.rst", "docs"),
    ("README.md", "docs"),
    ("examples/repo/repo.py", "examples"),
    ("LICENSE.txt", "licences"),
    (".github/workflows/tests.yml", "CI and tool configuration"),
    (".pre-commit-config.yaml", "CI and tool configuration"),
    ("tox.ini", "CI and tool configuration"),
    ("pyproject.toml", "CI and tool configuration"),
    ("setup.py", "packaging"),
    ("src/click/proto/msg_pb2.py", "generated"),
    ("web/app.min.js", "generated"),
    ("benchmarks/bench_parse.py", "benchmarks"),
    ("vendor/six.py", "vendored"),
    ("src/click/py.typed", "not source code"),
])
def test_default_universe_leaves_out_with_a_reason(path, reason):
    universe = select_universe(CLICK_LIKE)
    assert path not in universe
    assert universe.reason(path) == reason


PYTEST_REQUESTS_LIKE = (
    "src/_pytest/main.py", "testing/test_main.py", "testing/plugins/conftest_helpers.py",
    "scripts/release.py", "extra/get_issues.py", "src/requests/packages/urllib3/poolmanager.py",
    "src/requests/packages.py", "pip/_vendor/six.py", "packages/ui/index.js",
    "src/_pytest/testing.py",
)


@pytest.mark.parametrize(("path", "reason"), [
    ("testing/test_main.py", "tests"),
    ("testing/plugins/conftest_helpers.py", "tests"),
    ("scripts/release.py", "scripts"),
    ("extra/get_issues.py", "scripts"),
    ("src/requests/packages/urllib3/poolmanager.py", "vendored"),
    ("pip/_vendor/six.py", "vendored"),
])
def test_default_universe_leaves_out_testing_scripts_extra_and_bundled_packages(path, reason):
    """Issue 24: such files filled 16 of 60 top-5 lists on pytest and requests."""
    universe = select_universe(PYTEST_REQUESTS_LIKE)
    assert universe.reason(path) == reason


def test_files_named_like_those_folders_stay_modules():
    universe = select_universe(PYTEST_REQUESTS_LIKE)
    assert universe.modules == ("packages/ui/index.js", "src/_pytest/main.py",
                                "src/_pytest/testing.py", "src/requests/packages.py")


def test_default_universe_keeps_the_package_code():
    universe = select_universe(CLICK_LIKE)
    assert universe.modules == ("pkg/foo.go", "src/click/__init__.py", "src/click/_compat.py",
                                "src/click/core.py", "src/click/testing.py", "web/app.js")
    assert universe.reason("src/click/core.py") is None
    assert universe.summary().startswith("6 modules; left out 18 file(s): ")
    assert "4 CI and tool configuration" in universe.summary()


def test_include_every_file_and_no_exclude_is_the_whole_checkout():
    universe = select_universe(CLICK_LIKE, UniverseSpec(include=("**",), exclude=()))
    assert universe.modules == tuple(sorted(CLICK_LIKE))
    assert universe.left_out == ()


def test_include_restricts_and_reports_what_it_did_not_match():
    universe = select_universe(CLICK_LIKE, UniverseSpec(include=("src/click/",)))
    # An include takes exactly what it matches, source or not.
    assert universe.modules == ("src/click/__init__.py", "src/click/_compat.py",
                                "src/click/core.py", "src/click/py.typed",
                                "src/click/testing.py")
    assert universe.reason("pkg/foo.go") == "not matched by include"
    # Default excludes still apply inside the include, with their own reason.
    assert universe.reason("src/click/proto/msg_pb2.py") == "generated"
    narrow = select_universe(CLICK_LIKE, UniverseSpec(include=("src/click/*.py",)))
    assert narrow.reason("src/click/py.typed") == "not matched by include"


def test_user_exclude_replaces_the_default_and_default_token_extends_it():
    own = select_universe(CLICK_LIKE, UniverseSpec(exclude=("src/click/_*.py",)))
    assert "tests/test_basic.py" in own
    assert own.reason("src/click/_compat.py") == "excluded by 'src/click/_*.py'"
    extended = select_universe(CLICK_LIKE, UniverseSpec(exclude=("default", "_*.py")))
    assert "tests/test_basic.py" not in extended
    assert "src/click/_compat.py" not in extended
    assert "src/click/core.py" in extended
    assert UniverseSpec(exclude=("default", "x/")).describe()["exclude"][-1] == "x/"
    assert len(UniverseSpec().describe()["exclude"]) == len(DEFAULT_EXCLUDES)


@pytest.mark.parametrize(("pattern", "path", "expected"), [
    ("*.py", "a/b/c.py", True),
    ("*.py", "c.py", True),
    ("*.py", "c.pyi", False),
    ("src/*.py", "src/a.py", True),
    ("src/*.py", "src/x/a.py", False),
    ("src/**/*.py", "src/a.py", True),
    ("src/**/*.py", "src/x/y/a.py", True),
    ("/src/a.py", "src/a.py", True),
    ("src/a.py", "lib/src/a.py", False),
    ("tests/", "tests/a.py", True),
    ("tests/", "pkg/tests/unit/a.py", True),
    ("tests/", "tests", False),
    ("tests", "tests", True),
    ("test_*.py", "pkg/test_core.py", True),
    ("test_*.py", "pkg/contest_core.py", False),
    ("?.py", "a.py", True),
    ("?.py", "ab.py", False),
    ("[ab].py", "b.py", True),
    ("[!ab].py", "b.py", False),
    ("[!ab].py", "c.py", True),
    ("**", "any/thing.txt", True),
    ("docs/**", "docs/a/b.md", True),
    ("a+b.py", "a+b.py", True),
    ("a+b.py", "aab.py", False),
    # a leading slash anchors a folder pattern too ("/build/" had matched pkg/build/)
    ("/build/", "build/x.py", True),
    ("/build/", "pkg/build/x.py", False),
    ("build/", "pkg/build/x.py", True),
])
def test_glob_matches(pattern, path, expected):
    assert glob_matches(pattern, path) is expected


NAME = st.text(alphabet="abcXY_.-+", min_size=1, max_size=8).filter(lambda s: s not in (".",
                                                                                       ".."))
PATH = st.lists(NAME, min_size=1, max_size=4).map("/".join)
BASENAME_GLOB = st.text(alphabet="abcXY_.-+*?", min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(pattern=BASENAME_GLOB, path=PATH)
def test_slashless_glob_matches_a_name_like_fnmatch(pattern, path):
    """Without a slash, a glob matches when it matches the file's or a folder's name."""
    expected = any(fnmatch.fnmatchcase(part, pattern) for part in path.split("/"))
    assert glob_matches(pattern, path) is expected


@settings(max_examples=150, deadline=None)
@given(files=st.sets(PATH, max_size=25),
       include=st.lists(BASENAME_GLOB, max_size=2),
       exclude=st.lists(BASENAME_GLOB, max_size=3))
def test_universe_partitions_the_files(files, include, exclude):
    spec = UniverseSpec(include=tuple(include), exclude=tuple(exclude))
    universe = select_universe(files, spec)
    out = {item.path for item in universe.left_out}
    assert set(universe.modules) | out == files
    assert not set(universe.modules) & out
    assert list(universe.modules) == sorted(universe.modules)
    # Excluding more never adds a module.
    more = select_universe(files, UniverseSpec(include=tuple(include),
                                               exclude=(*exclude, "*a*")))
    assert set(more.modules) <= set(universe.modules)
    assert not any(glob_matches("*a*", m) for m in more.modules)
    assert universe.filter_ranking(sorted(files, reverse=True)) == tuple(
        sorted(universe.modules, reverse=True))


@pytest.mark.parametrize(("pattern", "needle"), [
    ("", "empty"), ("../x.py", "'..'"), ("a\\b.py", "'/'"),
])
def test_invalid_globs(pattern, needle):
    (problem,) = invalid_globs([pattern])
    assert needle in problem


@settings(max_examples=150, deadline=None)
@given(files=st.sets(PATH, max_size=20), other=PATH,
       exclude=st.lists(BASENAME_GLOB, max_size=2))
def test_membership_depends_on_the_path_alone(files, other, exclude):
    """So a base commit's files are judged by the same rule as the head's."""
    spec = UniverseSpec(exclude=tuple(exclude))
    universe = select_universe(files, spec)
    alone = select_universe({other}, spec)
    assert universe.admits(other) is (other in alone.modules)
    assert (classify(other, spec) is None) is (other in alone.modules)


def test_describe_records_the_settings_and_counts():
    universe = select_universe(CLICK_LIKE, UniverseSpec(include=("src/",),
                                                        exclude=("default", "_*.py")))
    described = universe.describe()
    assert described["include"] == ["src/"]
    assert described["exclude"][-1] == "_*.py"
    assert described["modules"] == len(universe.modules)
    assert described["left_out"] == len(CLICK_LIKE) - len(universe.modules)


def test_paths_are_put_in_nfc():
    import unicodedata

    nfd = unicodedata.normalize("NFD", "pkg/café.py")
    universe = select_universe([nfd])
    assert universe.modules == (unicodedata.normalize("NFC", "pkg/café.py"),)
    assert unicodedata.normalize("NFC", "pkg/café.py") in universe


@pytest.mark.parametrize("path", [
    "performance/benchmark.py",            # marshmallow's benchmark script (issue 24 round 8)
    "perf/run.py", "asv_bench/benchmarks/io.py", "benchmarking/run.py",
    "benchmarks/bench_parse.py", "src/pkg/benchmarks/deep/run.py", "tools/bench/x.py",
])
def test_benchmark_folders_are_left_out_at_every_depth(path):
    universe = select_universe((path, "src/pkg/core.py"))
    assert universe.modules == ("src/pkg/core.py",)
    assert universe.reason(path) == "benchmarks"


def test_a_python_package_named_like_build_output_stays_in_the_universe():
    """pypa/build's package is ``src/build/`` (issue 24's seventh cold review: the default
    ``build/`` rule left out the whole package, so ``init --from-history`` drafted 2 of 20).
    A folder holding an ``__init__.py`` is never build output; one that does not is."""
    files = ("src/build/__init__.py", "src/build/_builder.py", "src/build/env.py",
             "build/lib/build/__init__.py", "build/lib/build/env.py",
             "web/dist/bundle.js", "dist/__init__.py", "dist/core.py")
    universe = select_universe(files)
    assert universe.modules == ("dist/__init__.py", "dist/core.py", "src/build/__init__.py",
                                "src/build/_builder.py", "src/build/env.py")
    # the copy under build/lib/ is output: build/ and build/lib/ are not packages
    assert universe.reason("build/lib/build/env.py") == "generated"
    assert universe.reason("web/dist/bundle.js") == "generated"
    # a file of another commit in the same package is admitted too (the history route)
    assert universe.admits("src/build/util.py")
    assert not universe.admits("build/lib/build/util.py")


def test_a_user_exclude_of_build_still_leaves_out_a_package_named_build():
    universe = select_universe(("src/build/__init__.py", "src/build/env.py", "src/x/a.py"),
                               UniverseSpec(exclude=("build/",)))
    assert universe.modules == ("src/x/a.py",)


def test_a_perf_subpackage_is_code_and_a_perf_script_folder_is_not():
    """``perf/``/``performance/`` left out as benchmarks (round 8) must not take a library's
    own subpackage of that name with them (the final review: ``src/locust/perf/``)."""
    universe = select_universe(("src/lib/perf/__init__.py", "src/lib/perf/counters.py",
                                "performance/benchmark.py", "src/lib/core.py"))
    assert universe.modules == ("src/lib/core.py", "src/lib/perf/__init__.py",
                                "src/lib/perf/counters.py")
    assert universe.reason("performance/benchmark.py") == "benchmarks"


TRIO_ALEMBIC_LIKE = (
    "src/trio/__init__.py", "src/trio/_core/__init__.py", "src/trio/_core/_run.py",
    "src/trio/_core/_tests/__init__.py", "src/trio/_core/_tests/tutil.py",
    "src/trio/_tests/__init__.py", "src/trio/_tests/module_with_deprecations.py",
    "src/trio/testing/__init__.py", "src/trio/testing/_raises_group.py",
    "testing/__init__.py", "testing/helpers.py", "testing/plain/check.py",
    "alembic/__init__.py", "alembic/command.py", "tools/write_pyi.py", "tools/toxnox.py",
    "pkg/__init__.py", "pkg/tools/__init__.py", "pkg/tools/merge.py",
    "piptools/__init__.py", "piptools/scripts/__init__.py", "piptools/scripts/compile.py",
    "scripts/__init__.py", "scripts/release.py", "tools/__init__.py", "tools/bump.py",
)


@pytest.mark.parametrize(("path", "reason"), [
    # tests inside the package (issue 24 round 12, trio)
    ("src/trio/_tests/module_with_deprecations.py", "tests"),
    ("src/trio/_core/_tests/tutil.py", "tests"),
    # a top-level testing/ folder is a test suite, a package or not
    ("testing/helpers.py", "tests"),
    ("testing/plain/check.py", "tests"),
    # a tools/ folder of scripts (alembic)
    ("tools/write_pyi.py", "scripts"),
    ("tools/toxnox.py", "scripts"),
    # a top-level scripts/ or tools/ package is release tooling, not the library
    ("scripts/release.py", "scripts"),
    ("tools/bump.py", "scripts"),
])
def test_tests_inside_a_package_and_a_tools_folder_are_left_out(path: str, reason: str) -> None:
    assert select_universe(TRIO_ALEMBIC_LIKE).reason(path) == reason


def test_a_tools_package_stays_and_a_testing_subpackage_is_left_out() -> None:
    universe = select_universe(TRIO_ALEMBIC_LIKE)
    assert "pkg/tools/merge.py" in universe.modules
    # a scripts *package* is the library's command line (pip-tools, the eleventh review)
    assert "piptools/scripts/compile.py" in universe.modules
    assert "alembic/command.py" in universe.modules
    # a package's test support (trio.testing, alembic.testing) is left out like a test
    # suite: kept in, alembic's fixtures took grade 3 from kept questions (round 12)
    assert universe.reason("src/trio/testing/_raises_group.py") == "tests"


INVOKE_LIKE = (
    "invoke/__init__.py", "invoke/runners.py", "invoke/tasks.py", "tasks.py", "fabfile.py",
    "integration/main.py", "integration/_support/tasks.py", "sites/shared_conf.py",
    "sites/www/conf.py", "celery/app/tasks.py", "pkg/integration/__init__.py",
    "pkg/integration/django.py", "pkg/sites.py",
)


@pytest.mark.parametrize(("path", "reason"), [
    # the fourteenth held-out review (invoke): its task file, Sphinx sites and integration
    # tests were drafted as modules and asked as chores
    ("tasks.py", "CI and tool configuration"),
    ("fabfile.py", "CI and tool configuration"),
    ("integration/main.py", "tests"),
    ("integration/_support/tasks.py", "tests"),
    ("sites/shared_conf.py", "docs"),
    ("sites/www/conf.py", "docs"),
])
def test_root_task_files_sites_and_integration_tests_are_left_out(path: str,
                                                                  reason: str) -> None:
    assert select_universe(INVOKE_LIKE).reason(path) == reason


def test_a_package_s_tasks_integration_and_sites_modules_stay() -> None:
    modules = select_universe(INVOKE_LIKE).modules
    for path in ("invoke/tasks.py", "invoke/runners.py", "celery/app/tasks.py",
                 "pkg/integration/django.py", "pkg/sites.py"):
        assert path in modules, path
