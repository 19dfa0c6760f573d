"""The history route's grade 3 against the reviewers' grade edits (issue 24, round 8).

For every reviewed repository this drafts the history questions again (as
``bench_history_review.py`` does, in clones at the reviews' evaluated commits) and prints:

* each reviewed question whose edit changed which modules are graded 3 (``WANTED`` below,
  read from the review's ``edit`` text, quoted there): met now or not;
* the kept questions (grades accepted) whose grade-3 modules now differ from the reviewed
  ones (must stay ~0);
* each reviewed question whose edit took a module out of the grades (``DROPS``): met now
  or not; and every question that lost a module its reviewer left graded (round 11: none
  should, the kept ones least of all).

``--without copies`` drafts without the copy rule (:func:`evaluator.core.commit_grades.
grade_weights`: every module counts its surviving lines), for the before/after figure. The
reviews are tuning data for the rule (say so when quoting the figures)::

    python benchmarks/bench_grade_edits.py --clones /tmp/clones-r8 [--without copies]
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

import bench_history_review as review_bench

import evaluator.core.commit_filters as commit_filters

#: (review file, id) → (modules the edit wants graded 3, modules it wants below 3); the
#: edits that only drop a grade-2 module (2 → 0) or add one below 3 are about the lower
#: grades and left out.
WANTED: dict[tuple[str, str], tuple[frozenset[str], frozenset[str]]] = {
    # "grades": {"src/flask/helpers.py": 3, "src/flask/ctx.py": 2}
    ("flask.json", "history-01"): (frozenset({"src/flask/helpers.py"}),
                                   frozenset({"src/flask/ctx.py"})),
    # "grades": {"src/flask/ctx.py": 3}
    ("flask.json", "history-04"): (frozenset({"src/flask/ctx.py"}), frozenset()),
    # "grades: formparsers.py 3, requests.py 3"
    ("fresh3-starlette.json", "history-14"): (
        frozenset({"starlette/formparsers.py", "starlette/requests.py"}), frozenset()),
    # "grades: tenacity/stop.py 2 -> 3, tenacity/wait.py 3 -> 1"
    ("fresh4-tenacity.json", "history-19"): (frozenset({"tenacity/stop.py"}),
                                             frozenset({"tenacity/wait.py"})),
    # "grades: src/anyio/_backends/_asyncio.py 3 -> 2"
    ("fresh5-anyio.json", "history-13"): (frozenset(),
                                          frozenset({"src/anyio/_backends/_asyncio.py"})),
    # "_utils.py graded 3" (_legacy_keywords.py holds the draft 2019-09 copies)
    ("fresh6-jsonschema.json", "history-18"): (frozenset({"jsonschema/_utils.py"}),
                                               frozenset({"jsonschema/_legacy_keywords.py"})),
    # "core.py graded 3"
    ("fresh6-typer.json", "history-13"): (frozenset({"typer/core.py"}), frozenset()),
    # "config.py graded 3 (it resolves the import string); main.py stays 3"
    ("fresh6-uvicorn.json", "history-02"): (frozenset({"uvicorn/config.py",
                                                       "uvicorn/main.py"}), frozenset()),
    # "config.py graded 3; facts replaced by get_loop_factory's ..." (_compat.py backports)
    ("fresh6-uvicorn.json", "history-03"): (frozenset({"uvicorn/config.py"}),
                                            frozenset({"uvicorn/_compat.py"})),
    # "config.py graded 2"
    ("fresh6-uvicorn.json", "history-05"): (
        frozenset({"uvicorn/supervisors/watchfilesreload.py"}),
        frozenset({"uvicorn/config.py"})),
    # "httptools_impl.py graded 3"
    ("fresh6-uvicorn.json", "history-14"): (
        frozenset({"uvicorn/protocols/http/httptools_impl.py",
                   "uvicorn/protocols/http/h11_impl.py"}), frozenset()),
    # "grades: src/urllib3/connection.py 2 -> 3 (poolmanager.py stays 3)"
    ("fresh7-urllib3.json", "history-06"): (
        frozenset({"src/urllib3/connection.py", "src/urllib3/poolmanager.py"}), frozenset()),
    # "grades: src/urllib3/poolmanager.py 2 -> 3 (same share of the change as connection.py)"
    ("fresh7-urllib3.json", "history-13"): (
        frozenset({"src/urllib3/poolmanager.py", "src/urllib3/connection.py"}), frozenset()),
    # "(grades: src/urllib3/response.py 2 -> 3)" (util/request.py stays 3)
    ("fresh7-urllib3.json", "history-16"): (
        frozenset({"src/urllib3/response.py", "src/urllib3/util/request.py"}), frozenset()),
    # "grades: httpcore/_synchronization.py 2 -> 3, httpcore/_backends/anyio.py 3 -> 0
    # (pragma-comment moves only)"
    ("fresh8-httpcore.json", "history-03"): (frozenset({"httpcore/_synchronization.py"}),
                                             frozenset({"httpcore/_backends/anyio.py"})),
    # "grades: httpcore/_async/http2.py 3 -> 2 (a call site ...); _synchronization.py stays 3"
    ("fresh8-httpcore.json", "history-14"): (frozenset({"httpcore/_synchronization.py"}),
                                             frozenset({"httpcore/_async/http2.py"})),
    # "grades: src/pip/_internal/metadata/importlib/_dists.py 2 -> 3"
    ("fresh8-pip.json", "history-08"): (
        frozenset({"src/pip/_internal/metadata/importlib/_dists.py",
                   "src/pip/_internal/metadata/pkg_resources.py"}), frozenset()),
    # "grades: src/pip/_internal/index/package_finder.py 2 -> 3, ..."
    ("fresh8-pip.json", "history-10"): (
        frozenset({"src/pip/_internal/index/package_finder.py"}), frozenset()),
    # "grades: src/pip/_internal/utils/logging.py 2 -> 3, src/pip/_internal/utils/misc.py
    # 3 -> 2, src/pip/_internal/network/session.py 2 -> 0" (misc.py: a helper moved)
    ("fresh8-pip.json", "history-11"): (frozenset({"src/pip/_internal/utils/logging.py"}),
                                        frozenset({"src/pip/_internal/utils/misc.py"})),
    # "grades: src/pip/_internal/cli/cmdoptions.py 3 -> 2"
    ("fresh8-pip.json", "history-12"): (frozenset(),
                                        frozenset({"src/pip/_internal/cli/cmdoptions.py"})),
    # "grades: src/pip/_internal/exceptions/network.py 0 -> 3,
    # src/pip/_internal/exceptions/__init__.py 3 -> 1 (re-exports only)"
    ("fresh8-pip.json", "history-16"): (
        frozenset({"src/pip/_internal/exceptions/network.py"}),
        frozenset({"src/pip/_internal/exceptions/__init__.py"})),
    # "alembic/autogenerate/compare/check_constraints.py 2 -> 3,
    # alembic/autogenerate/compare/constraints.py 2 -> 0 (comments only)"
    ("fresh9-alembic.json", "history-01"): (
        frozenset({"alembic/autogenerate/compare/check_constraints.py"}),
        frozenset({"alembic/autogenerate/compare/constraints.py"})),
    # "alembic/operations/base.py 2 -> 3 ...; alembic/util/langhelpers.py stays 3"
    ("fresh9-alembic.json", "history-17"): (
        frozenset({"alembic/operations/base.py", "alembic/util/langhelpers.py"}), frozenset()),
    # "src/tox/session/env_select.py 2->3, src/tox/session/cmd/run/common.py 3->2"
    ("fresh9-tox.json", "history-10"): (frozenset({"src/tox/session/env_select.py"}),
                                        frozenset({"src/tox/session/cmd/run/common.py"})),
    # "src/trio/testing/__init__.py 3 (needs adding to the universe), src/trio/_deprecate.py
    # 3 -> 2" (an expected miss: testing/ stays out of the universe, round 12)
    ("fresh9-trio.json", "history-03"): (frozenset({"src/trio/testing/__init__.py"}),
                                         frozenset({"src/trio/_deprecate.py"})),
    # "src/trio/_tests/module_with_deprecations.py 3 -> 0 (test fixture)"
    ("fresh9-trio.json", "history-09"): (
        frozenset({"src/trio/_deprecate.py"}),
        frozenset({"src/trio/_tests/module_with_deprecations.py"})),
    # "src/trio/testing/_raises_group.py 3 (needs adding to the universe),
    # src/trio/_core/_run.py 3 -> 1" (an expected miss: testing/ stays out, round 12)
    ("fresh9-trio.json", "history-10"): (frozenset({"src/trio/testing/_raises_group.py"}),
                                         frozenset({"src/trio/_core/_run.py"})),
    # "src/trio/_sync.py 2 -> 3" (_parking_lot.py stays 3)
    ("fresh9-trio.json", "history-18"): (
        frozenset({"src/trio/_sync.py", "src/trio/_core/_parking_lot.py"}), frozenset()),
    # "grades: src/flake8/checker.py stays 3, src/flake8/options/parse_args.py 3->2, ...,
    # src/flake8/api/legacy.py 2->0"
    ("fresh10-flake8.json", "history-11"): (frozenset({"src/flake8/checker.py"}),
                                            frozenset({"src/flake8/options/parse_args.py"})),
    # "grades: gunicorn/http2/async_connection.py 2 -> 3" (asgi/protocol.py stays 3)
    ("fresh10-gunicorn.json", "history-01"): (
        frozenset({"gunicorn/http2/async_connection.py", "gunicorn/asgi/protocol.py"}),
        frozenset()),
    # "grades: gunicorn/http2/request.py 2 -> 3" (http/message.py stays 3: "both hold the
    # answer")
    ("fresh10-gunicorn.json", "history-04"): (
        frozenset({"gunicorn/http2/request.py", "gunicorn/http/message.py"}), frozenset()),
    # "grades: gunicorn/http/message.py 2 -> 3" (asgi/parser.py stays 3; the WSGI and the
    # ASGI parser get the same fix: -06, -19, -20)
    ("fresh10-gunicorn.json", "history-06"): (
        frozenset({"gunicorn/http/message.py", "gunicorn/asgi/parser.py"}), frozenset()),
    # "grades: gunicorn/asgi/parser.py 2 -> 3" (asgi/protocol.py stays 3)
    ("fresh10-gunicorn.json", "history-16"): (
        frozenset({"gunicorn/asgi/parser.py", "gunicorn/asgi/protocol.py"}), frozenset()),
    # "grades: gunicorn/http/message.py 2 -> 3"
    ("fresh10-gunicorn.json", "history-19"): (
        frozenset({"gunicorn/http/message.py", "gunicorn/asgi/parser.py"}), frozenset()),
    # "grades: gunicorn/http/message.py 2 -> 3"
    ("fresh10-gunicorn.json", "history-20"): (
        frozenset({"gunicorn/http/message.py", "gunicorn/asgi/parser.py"}), frozenset()),
    # "grades": {"src/requests/_types.py": 3}
    ("requests.json", "history-01"): (frozenset({"src/requests/_types.py"}), frozenset()),
    # "grades": {"src/requests/models.py": 3}
    ("requests.json", "history-07"): (frozenset({"src/requests/models.py"}), frozenset()),
}


#: (review file, id) → the modules the edit takes out of the grades (2 → 0), quoted from
#: its ``edit`` (issue 24 round 11: the lower grades, left out of :data:`WANTED`).
DROPS: dict[tuple[str, str], frozenset[str]] = {
    # "drop httpx/__version__.py (2 -> 0)"
    ("fresh-httpx.json", "history-05"): frozenset({"httpx/__version__.py"}),
    ("fresh-httpx.json", "history-09"): frozenset({"httpx/__version__.py"}),
    ("fresh2-httpx.json", "history-03"): frozenset({"httpx/__version__.py"}),
    ("fresh2-httpx.json", "history-06"): frozenset({"httpx/__version__.py"}),
    # "__init__.py, _hooks.py, _manager.py 2 -> 0" (one commit reviewed twice)
    ("fresh-pluggy.json", "history-07"): frozenset({
        "src/pluggy/__init__.py", "src/pluggy/_hooks.py", "src/pluggy/_manager.py"}),
    ("fresh2-pluggy.json", "history-05"): frozenset({
        "src/pluggy/__init__.py", "src/pluggy/_hooks.py", "src/pluggy/_manager.py"}),
    # "src/structlog/_frames.py 2 -> 0, src/structlog/tracebacks.py 2 -> 0"
    ("fresh4-structlog.json", "history-15"): frozenset({
        "src/structlog/_frames.py", "src/structlog/tracebacks.py"}),
    # "httpcore/_backends/anyio.py 3 -> 0 (pragma-comment moves only)"
    ("fresh8-httpcore.json", "history-03"): frozenset({"httpcore/_backends/anyio.py"}),
    # "httpcore/_async/connection_pool.py 2 -> 0, httpcore/_sync/connection_pool.py 2 -> 0"
    ("fresh8-httpcore.json", "history-09"): frozenset({
        "httpcore/_async/connection_pool.py", "httpcore/_sync/connection_pool.py"}),
    # "src/flake8/plugins/finder.py 2->0" (it only switched to the regex that moved)
    ("fresh10-flake8.json", "history-09"): frozenset({"src/flake8/plugins/finder.py"}),
    # "src/flake8/api/legacy.py 2->0"
    ("fresh10-flake8.json", "history-11"): frozenset({"src/flake8/api/legacy.py"}),
    # "src/flake8/main/application.py 2->0, src/flake8/options/parse_args.py 0->2" (the code
    # moved to parse_args.py; history-18 likewise wants defaults.py 0->2, where the pattern
    # moved: both below 3, so not in WANTED)
    ("fresh10-flake8.json", "history-13"): frozenset({"src/flake8/main/application.py"}),
    # "src/pip/_internal/utils/pylock.py 2 -> 0 (comment only),
    # src/pip/_internal/req/req_install.py 2 -> 0 (deletions only)"
    ("fresh8-pip.json", "history-10"): frozenset({
        "src/pip/_internal/utils/pylock.py", "src/pip/_internal/req/req_install.py"}),
    # "src/pip/_internal/network/session.py 2 -> 0"
    ("fresh8-pip.json", "history-11"): frozenset({"src/pip/_internal/network/session.py"}),
    # "alembic/autogenerate/compare/constraints.py 2 -> 0 (comments only)"
    ("fresh9-alembic.json", "history-01"): frozenset({
        "alembic/autogenerate/compare/constraints.py"}),
    # "alembic/__init__.py 2 -> 0 (version bump only)"
    ("fresh9-alembic.json", "history-02"): frozenset({"alembic/__init__.py"}),
    # "alembic/ddl/impl.py, alembic/ddl/mssql.py, alembic/ddl/postgresql.py 2 -> 0 (typing only)"
    ("fresh9-alembic.json", "history-09"): frozenset({
        "alembic/ddl/impl.py", "alembic/ddl/mssql.py", "alembic/ddl/postgresql.py"}),
    # "src/tox/session/cmd/devenv.py 2->0, src/tox/provision.py 2->0"
    ("fresh9-tox.json", "history-02"): frozenset({
        "src/tox/session/cmd/devenv.py", "src/tox/provision.py"}),
    # "src/tox/tox_env/python/pep723.py 2->0, src/tox/config/cli/parser.py 2->0,
    # src/tox/tox_env/python/pip/req/file.py 2->0"
    ("fresh9-tox.json", "history-20"): frozenset({
        "src/tox/tox_env/python/pep723.py", "src/tox/config/cli/parser.py",
        "src/tox/tox_env/python/pip/req/file.py"}),
    # "src/trio/_tests/module_with_deprecations.py 3 -> 0 (test fixture)"
    ("fresh9-trio.json", "history-09"): frozenset({
        "src/trio/_tests/module_with_deprecations.py"}),
    # "src/trio/_tools/gen_exports.py 2 -> 0" (no rule leaves out a _tools/ folder)
    ("fresh9-trio.json", "history-20"): frozenset({"src/trio/_tools/gen_exports.py"}),
}


def _grade3(grades: Mapping[str, int]) -> frozenset[str]:
    return frozenset(m for m, g in grades.items() if g == 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clones", type=Path, required=True)
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--repos", nargs="+", default=None)
    parser.add_argument("--without", choices=("copies",), default=None)
    args = parser.parse_args()
    if args.without == "copies":
        # judge() reads grade_weights from commit_filters' namespace: patch it there (a
        # name that moved would leave the patch doing nothing, silently)
        assert hasattr(commit_filters, "grade_weights")
        commit_filters.grade_weights = lambda surviving, _distinct, _today: dict(surviving)
    met = drafted = kept = regraded = 0
    dropped = drop_drafted = dropped_wrong = dropped_any = 0
    for path, review in review_bench._reviews(args.repos):
        name = review["repository"].split("/")[-1]
        got = review_bench.measure(args.clones / name, review, args.count)
        for row in got["rows"]:
            if not row["kept_now"]:
                continue
            now = _grade3(row["grades_now"])
            graded_now = frozenset(m for m, g in row["grades_now"].items() if g > 0)
            graded = frozenset(m for m, g in row["grades"].items() if g > 0)
            drops = DROPS.get((path.name, row["id"]))
            if drops is not None:
                drop_drafted += 1
                ok = not drops & graded_now
                dropped += ok
                print(f"  drop {path.name} {row['id']}: still graded "
                      f"{sorted(drops & graded_now)} {'MEETS' if ok else 'misses'} the edit")
            # a module the reviewer kept graded (any verdict) that is no longer graded:
            # wrong unless the edit dropped it
            lost = graded - graded_now - (drops or frozenset())
            if lost:
                dropped_any += 1
                dropped_wrong += row["verdict"] == "keep"
                print(f"  UNGRADED {row['verdict']} {path.name} {row['id']}: {sorted(lost)}")
            wanted = WANTED.get((path.name, row["id"]))
            if wanted is not None:
                drafted += 1
                ok = wanted[0] <= now and not wanted[1] & now
                met += ok
                print(f"  edit {path.name} {row['id']}: grade 3 now {sorted(now)} "
                      f"{'MEETS' if ok else 'misses'} the edit")
            elif row["verdict"] == "keep":
                kept += 1
                if now != _grade3(row["grades"]):
                    regraded += 1
                    print(f"  KEPT REGRADED {path.name} {row['id']}: {sorted(now)} "
                          f"(reviewed {sorted(_grade3(row['grades']))})")
    print(f"grade-3 edits met: {met}/{drafted} drafted (of {len(WANTED)} edits); "
          f"kept questions with other grade-3 modules: {regraded}/{kept} drafted")
    print(f"grade-0 edits met: {dropped}/{drop_drafted} drafted (of {len(DROPS)} edits); "
          f"questions that lost a module the reviewer graded: {dropped_any} "
          f"({dropped_wrong} kept)")


if __name__ == "__main__":
    main()
