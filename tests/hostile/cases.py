"""The hostile-input corpus: every case is a row (what a PR or the network does, the exit
code and the words the message must hold). See ``harness.judge`` for what every row asserts."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import subprocess
from collections.abc import Callable

from evaluator.github_comments import DEFAULT_KEY, marker, state_marker
from tests.conftest import make_repo
from tests.hostile.faults import Fault, FaultServer
from tests.hostile.harness import TOKEN, Case, Outcome, World

FAST = ["--backend", "in_memory", "--quiet", "--no-fail-on-floors"]
# The original code (before issue 9) has no --comment-timeout: CORPUS_ORIGINAL=1 drops it.
BUDGET = [] if os.environ.get("CORPUS_ORIGINAL") else ["--comment-timeout", "4"]
DEEP = "[" * 20000 + "]" * 20000
DEEP_YAML = "a: " + "[" * 20000 + "]" * 20000 + "\n"
Setup = Callable[[World], tuple[list[str], dict[str, str]]]


def ev(w: World, *extra: str, out: bool = True, cache: bool = True) -> list[str]:
    return ["evaluate", str(w.ws), *FAST, *(["--cache-dir", str(w.cache)] if cache else []),
            *(["--output-dir", str(w.out)] if out else []), *extra]


def with_file(rel: str, content: str | bytes, argv: Callable[[World], list[str]] | None = None,
              env: Callable[[World], dict[str, str]] | None = None) -> Setup:
    def setup(w: World) -> tuple[list[str], dict[str, str]]:
        w.write(rel, content)
        return (argv or ev)(w), (env(w) if env else {})
    return setup


def gt_edit(edit: Callable[[dict], None], *, cmd: str = "evaluate") -> Setup:
    def setup(w: World) -> tuple[list[str], dict[str, str]]:
        doc = w.queries()
        edit(doc)
        w.set_queries(doc)
        argv = ev(w) if cmd == "evaluate" else ["validate", str(w.ws)]
        return argv, {}
    return setup


def q0(field: str, value: object) -> Callable[[dict], None]:
    def edit(doc: dict) -> None:
        doc["queries"][0][field] = value
    return edit


def gt_text(text: str | bytes, *, cmd: str = "evaluate") -> Setup:
    def setup(w: World) -> tuple[list[str], dict[str, str]]:
        path = w.ws / "retrieval_queries.json"
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
        return (ev(w) if cmd == "evaluate" else ["validate", str(w.ws)]), {}
    return setup


def gt_symlink(target: Callable[[World], str]) -> Setup:
    def setup(w: World) -> tuple[list[str], dict[str, str]]:
        path = w.ws / "retrieval_queries.json"
        path.unlink()
        path.symlink_to(target(w))
        return ev(w), {}
    return setup


def options(text: str | bytes | Callable[[World], str], *, out: bool = True,
            cache: bool = True) -> Setup:
    def setup(w: World) -> tuple[list[str], dict[str, str]]:
        body = text(w) if callable(text) else text
        w.write(".retrieval-eval.yml", body)
        return ev(w, out=out, cache=cache), {}
    return setup


def secret(w: World) -> str:
    return str(w.secret)


def lone_surrogate_queries(field: str) -> Setup:
    def setup(w: World) -> tuple[list[str], dict[str, str]]:
        doc = w.queries()
        doc["queries"][0][field] = "SURROGATE"
        w.set_queries(json.dumps(doc).replace('"SURROGATE"', '"q\\ud800x"'))
        return ev(w), {}
    return setup


def nothing_written(w: World, o: Outcome, s: object) -> None:
    """Refused before any work: no results, no half set of outputs."""
    assert not (w.out / "results.json").exists(), "results.json was written"
    assert not (w.out / "report.md").exists(), "report.md was written"


def surrogate_fact(doc: dict) -> None:
    doc["queries"][0]["gold_facts"][0] = "SURROGATE"


def surrogate_module(doc: dict) -> None:
    doc["queries"][0]["relevance_grades"]["SURROGATE"] = 1


def gt_surrogate(edit: Callable[[dict], None]) -> Setup:
    def setup(w: World) -> tuple[list[str], dict[str, str]]:
        doc = w.queries()
        edit(doc)
        w.set_queries(json.dumps(doc).replace('"SURROGATE"', '"x\\udc80y.py"'))
        return ev(w), {}
    return setup


def many_errors(w: World) -> tuple[list[str], dict[str, str]]:
    doc = w.queries()
    bad = dict(doc["queries"][0], question=7, relevance_grades={"nope.py": 9})
    doc["queries"] = [dict(bad, id=f"q{i}") for i in range(10_000)]
    w.set_queries(doc)
    return ["validate", str(w.ws)], {}


def fifo_queries(w: World) -> tuple[list[str], dict[str, str]]:
    fifo = w.ws / "q.fifo"
    os.mkfifo(fifo)
    return ev(w, "--queries", str(fifo)), {}


GROUND_TRUTH = [
    Case("gt-not-json", gt_text("{"), 2, ("retrieval_queries.json",)),
    Case("gt-deep-array", gt_text(DEEP), 2, ("retrieval_queries.json", "nest")),
    Case("gt-deep-object", gt_text('{"a":' * 20000 + "1" + "}" * 20000), 2,
         ("retrieval_queries.json", "nest")),
    Case("gt-latin1", gt_text(b'{"version": 1, "queries": [], "x": "caf\xe9"}'), 2,
         ("retrieval_queries.json", "utf-8")),
    Case("gt-empty-file", gt_text(""), 2, ("retrieval_queries.json",)),
    Case("gt-top-list", gt_text("[]"), 2, ("retrieval_queries.json",)),
    Case("gt-queries-not-list", gt_edit(lambda d: d.update(queries={"a": 1})), 2,
         ("queries",)),
    Case("gt-question-number", gt_edit(q0("question", 42)), 2, ("question", "string")),
    Case("gt-question-list", gt_edit(q0("question", ["a"])), 2, ("question", "string")),
    Case("gt-question-empty", gt_edit(q0("question", "  ")), 2, ("question is empty",)),
    Case("gt-id-lone-surrogate", lone_surrogate_queries("id"), 2,
         ("retrieval_queries.json", "queries[0].id", "unicode"), check=nothing_written),
    Case("gt-question-lone-surrogate", lone_surrogate_queries("question"), 2,
         ("retrieval_queries.json", "queries[0].question", "unicode"), check=nothing_written),
    Case("gt-shape-lone-surrogate", lone_surrogate_queries("shape"), 2,
         ("retrieval_queries.json", "queries[0].shape", "unicode"), check=nothing_written),
    Case("gt-fact-lone-surrogate", gt_surrogate(surrogate_fact), 2,
         ("retrieval_queries.json", "queries[0].gold_facts[0]", "unicode"),
         check=nothing_written),
    Case("gt-module-lone-surrogate", gt_surrogate(surrogate_module), 2,
         ("retrieval_queries.json", "relevance_grades key", "unicode"), check=nothing_written),
    Case("gt-grade-too-high", gt_edit(lambda d: d["queries"][0]["relevance_grades"].update(
        {next(iter(d["queries"][0]["relevance_grades"])): 7})), 2, ("grade",)),
    Case("gt-grade-string", gt_edit(lambda d: d["queries"][0]["relevance_grades"].update(
        {next(iter(d["queries"][0]["relevance_grades"])): "high"})), 2, ("grade",)),
    Case("gt-grade-inf", gt_text('{"queries": [{"id": "a", "question": "q?", "shape": '
                                 '"focused", "relevance_grades": {"x.py": 1e999}, '
                                 '"gold_facts": ["a", "b"]}]}'),
         2, ("grade",)),
    Case("gt-module-climbs-out", gt_edit(lambda d: d["queries"][0]["relevance_grades"].update(
        {"../outside/secret.txt": 3})), 2, ("../outside/secret.txt",)),
    Case("gt-module-absolute", gt_edit(lambda d: d["queries"][0]["relevance_grades"].update(
        {"/etc/passwd": 3})), 2, ("/etc/passwd",)),
    Case("gt-id-control", gt_edit(q0("id", "a\n::error::x")), 2, ("id",)),
    Case("gt-duplicate-ids", gt_edit(lambda d: d["queries"].append(dict(d["queries"][0]))),
         2, ("duplicate",)),
    Case("gt-facts-not-list", gt_edit(q0("gold_facts", "one fact")), 2, ("facts",)),
    Case("gt-grades-not-mapping", gt_edit(q0("relevance_grades", [1, 2])), 2,
         ("relevance_grades",)),
    Case("gt-symlink-outside", gt_symlink(secret), 2, ("retrieval_queries.json", "outside")),
    Case("gt-symlink-proc-environ", gt_symlink(lambda w: "/proc/self/environ"), 2,
         ("retrieval_queries.json", "outside")),
    Case("gt-symlink-dangling", gt_symlink(lambda w: str(w.root / "nowhere.json")), 2,
         ("retrieval_queries.json",)),
    Case("gt-flag-directory", lambda w: (ev(w, "--queries", str(w.ws)), {}), 2,
         ("is a directory",)),
    Case("gt-flag-fifo", fifo_queries, 2, ("not a regular file",)),
    Case("gt-flag-missing", lambda w: (ev(w, "--queries", str(w.ws / "nope.json")), {}), 2,
         ("does not exist",)),
    Case("validate-deep", gt_text(DEEP, cmd="validate"), 2, ("retrieval_queries.json",)),
    Case("validate-latin1", gt_text(b'{"queries": "caf\xe9"}', cmd="validate"), 2,
         ("retrieval_queries.json",)),
    Case("validate-question-number", gt_edit(q0("question", 3), cmd="validate"), 2,
         ("string",)),
    Case("validate-10k-errors", many_errors, 2, ("error(s)",)),
]


OPTIONS = [
    Case("opt-template-proc-environ", options("template: /proc/self/environ\n"), 2,
         ("template", "outside")),
    Case("opt-template-outside-absolute", options(lambda w: f"template: {w.secret}\n"), 2,
         ("template", "outside")),
    Case("opt-template-climbs-out", options("template: ../outside/secret.txt\n"), 2,
         ("template", "outside")),
    Case("opt-template-symlink-out", lambda w: (
        w.ws.joinpath("t.md.j2").symlink_to(w.secret),
        w.write(".retrieval-eval.yml", "template: t.md.j2\n"), (ev(w), {}))[-1], 2,
         ("template", "outside")),
    Case("opt-template-missing", options("template: nope.j2\n"), 2, ("nope.j2",)),
    Case("opt-queries-outside", options(lambda w: f"queries: {w.secret}\n"), 2,
         ("queries", "outside")),
    Case("opt-queries-climbs-out", options("queries: ../outside/secret.txt\n"), 2,
         ("queries", "outside")),
    Case("opt-queries-proc", options("queries: /proc/self/environ\n"), 2,
         ("queries", "outside")),
    Case("opt-output-dir-outside", options("output-dir: ../escaped\n", out=False), 2,
         ("output-dir", "outside")),
    Case("opt-output-dir-absolute", options(lambda w: f"output-dir: {w.root}/escaped\n",
                                            out=False), 2, ("output-dir", "outside")),
    Case("opt-cache-dir-outside", options("cache-dir: ../escaped-cache\n", cache=False), 2,
         ("cache-dir", "outside")),
    Case("opt-output-dir-root", options("output-dir: .\n", out=False), 2,
         ("output-dir",)),
    Case("opt-cache-dir-root", options("cache-dir: .\n", cache=False), 2, ("cache-dir",)),
    Case("opt-baseline-file-outside", options(lambda w: f"baseline: file:{w.secret}\n"), 2,
         ("baseline", "outside")),
    Case("opt-alpha-zero", options("alpha: 0\n"), 2, ("alpha",)),
    Case("opt-alpha-one", options("alpha: 1\n"), 2, ("alpha",)),
    Case("opt-alpha-string", options("alpha: lots\n"), 2, ("alpha",)),
    Case("opt-floor-above-range", options("floors: {recall@5: 1.5}\n"), 2, ("recall@5",)),
    Case("opt-floor-negative", options("floors: {mrr: -3}\n"), 2, ("mrr",)),
    Case("opt-floor-nan", options("floors: {mrr: .nan}\n"), 2, ("mrr",)),
    Case("opt-floor-string", options("floors: {mrr: high}\n"), 2, ("mrr",)),
    Case("opt-shape-floor-above", options("shape-floors: {hit_rate: 2}\n"), 2,
         ("hit_rate",)),
    Case("opt-latin1", options(b"queries: caf\xe9.json\n"), 2,
         (".retrieval-eval.yml", "utf-8")),
    Case("opt-deep-nesting", options(DEEP_YAML), 2, (".retrieval-eval.yml",)),
    Case("opt-not-yaml", options("a: [\n"), 2, (".retrieval-eval.yml",)),
    Case("opt-not-mapping", options("- a\n- b\n"), 2, (".retrieval-eval.yml",)),
    Case("opt-unknown-key", options("bogus: 1\n"), 2, ("bogus",)),
    Case("opt-k-garbage", options("k: [a, b]\n"), 2, ("k",)),
    Case("opt-comment-timeout-garbage", options("comment-timeout: forever\n"), 2,
         ("comment-timeout",)),
    Case("opt-config-flag-latin1", lambda w: (
        w.write("other.yml", b"alpha: \xe9\n"), (ev(w, "--config", str(w.ws / "other.yml")),
                                                 {}))[-1], 2, ("other.yml",)),
]


def results_edit(edit: Callable[[dict], None] | None = None, *, raw: str | bytes | None = None,
                 baseline: bool = False) -> Setup:
    def setup(w: World) -> tuple[list[str], dict[str, str]]:
        target = w.root / "saved" / ("base.json" if baseline else "hostile.json")
        if raw is not None:
            target.write_bytes(raw if isinstance(raw, bytes) else raw.encode())
        else:
            doc = json.loads(w.results.read_text())
            if edit is not None:
                edit(doc)
            target.write_text(json.dumps(doc))
        main = str(w.results if baseline else target)
        argv = ["comment", "--results", main, "--no-fail-on-floors", *BUDGET]
        if baseline:
            argv += ["--baseline", str(target)]
        return argv, w.gh_env()
    return setup


def surrogate_results(edit: Callable[[dict], None], *, baseline: bool = False,
                      argv: Callable[[World, str], list[str]] | None = None) -> Setup:
    """A results file (``hostile.json``, or ``base.json`` as the baseline) whose field set by
    ``edit`` to ``"SURROGATE"`` holds a lone surrogate (a JSON ``\\ud800`` escape)."""
    def setup(w: World) -> tuple[list[str], dict[str, str]]:
        doc = json.loads(w.results.read_text())
        edit(doc)
        target = w.root / "saved" / ("base.json" if baseline else "hostile.json")
        target.write_text(json.dumps(doc).replace('"SURROGATE"', '"q\\ud800"'))
        if argv is not None:
            return argv(w, str(target)), {}
        main = str(w.results if baseline else target)
        return (["comment", "--results", main, "--no-fail-on-floors", *BUDGET]
                + (["--baseline", str(target)] if baseline else [])), w.gh_env()
    return setup


def first_query(field: str) -> Callable[[dict], None]:
    def edit(doc: dict) -> None:
        doc["queries"][0][field] = "SURROGATE"
    return edit


def nan_metric(doc: dict) -> None:
    doc["overall"]["metrics"]["mrr"] = float("nan")


def drop_shape_metric(doc: dict) -> None:
    shapes = doc["by_shape"]
    first = shapes[next(iter(shapes))] if isinstance(shapes, dict) else shapes[0]
    first["metrics"].pop("mrr")


def drop_shape_faithfulness(doc: dict) -> None:
    for entry in (doc["by_shape"].values() if isinstance(doc["by_shape"], dict)
                  else doc["by_shape"]):
        entry["metrics"].pop("faithfulness", None)


def evaluate_with_baseline(raw_edit: Callable[[dict], None]) -> Setup:
    def setup(w: World) -> tuple[list[str], dict[str, str]]:
        doc = json.loads(w.results.read_text())
        raw_edit(doc)
        base = w.root / "saved" / "base.json"
        base.write_text(json.dumps(doc))
        return ev(w, "--baseline", f"file:{base}"), {}
    return setup


RESULTS = [
    Case("res-not-json", results_edit(raw="{"), 2, ("hostile.json",)),
    Case("res-deep", results_edit(raw=DEEP), 2, ("hostile.json", "nest")),
    Case("res-latin1", results_edit(raw=b'{"a": "\xe9"}'), 2, ("hostile.json",)),
    Case("res-top-list", results_edit(raw="[]"), 2, ("hostile.json",)),
    Case("res-directory", lambda w: (w.root.joinpath("saved", "d.json").mkdir(),
                                     (["comment", "--results", str(w.root / "saved" / "d.json"),
                                       *BUDGET], w.gh_env()))[-1], 2, ("d.json",)),
    Case("res-missing", lambda w: (["comment", "--results", str(w.root / "nope.json")],
                                   w.gh_env()), 2, ("nope.json",)),
    Case("res-nan-metric", results_edit(nan_metric), 2, ("hostile.json", "mrr")),
    Case("res-missing-shape-metric", results_edit(drop_shape_metric), 2,
         ("hostile.json", "mrr")),
    Case("res-shape-without-faithfulness", results_edit(drop_shape_faithfulness), 0,
         ("comment created",), check=lambda w, o, s: _posted(s)),
    Case("res-wrong-version", results_edit(lambda d: d.update(schema_version=99)), 2,
         ("hostile.json",)),
    Case("res-queries-not-list", results_edit(lambda d: d.update(queries=5)), 2,
         ("hostile.json",)),
    Case("res-metric-string", results_edit(
        lambda d: d["overall"]["metrics"].update(mrr="0.5")), 2, ("hostile.json",)),
    Case("res-baseline-nan", results_edit(nan_metric, baseline=True), 2,
         ("base.json", "mrr")),
    Case("res-baseline-deep", results_edit(raw=DEEP, baseline=True), 2, ("base.json",)),
    Case("res-id-lone-surrogate", surrogate_results(first_query("id")), 2,
         ("hostile.json", "queries[0].id", "unicode")),
    Case("res-question-lone-surrogate", surrogate_results(first_query("question")), 2,
         ("hostile.json", "queries[0].question", "unicode")),
    Case("res-baseline-lone-surrogate", surrogate_results(first_query("id"), baseline=True), 2,
         ("base.json", "queries[0].id", "unicode")),
    Case("eval-baseline-lone-surrogate", surrogate_results(
        first_query("question"), baseline=True,
        argv=lambda w, path: ev(w, "--baseline", f"file:{path}")), 2,
         ("base.json", "queries[0].question", "unicode")),
    Case("merge-part-lone-surrogate", surrogate_results(
        first_query("shape"), argv=lambda w, path: ["merge", path, "--output-dir", str(w.out),
                                                    "--no-fail-on-floors"]), 2,
         ("hostile.json", "queries[0].shape", "unicode")),
    Case("res-baseline-none", lambda w: (["comment", "--results", str(w.results),
                                          "--baseline", "none", "--no-fail-on-floors",
                                          *BUDGET], w.gh_env()), 0, ("comment created",),
         check=lambda w, o, s: _posted(s)),
    Case("eval-baseline-nan", evaluate_with_baseline(nan_metric), 2, ("base.json", "mrr")),
    Case("eval-baseline-missing-shape-metric", evaluate_with_baseline(drop_shape_metric), 2,
         ("base.json", "mrr")),
    Case("eval-baseline-deep", lambda w: (w.root.joinpath("saved", "b.json").write_text(DEEP),
                                          (ev(w, "--baseline", f"file:{w.root}/saved/b.json"),
                                           {}))[-1], 2, ("b.json",)),
]


def _posted(server: object, n: int = 1) -> None:
    assert isinstance(server, FaultServer)
    assert len(server.posted) == n, f"{len(server.posted)} comments posted, expected {n}"


def _absent(path: os.PathLike[str]) -> None:
    assert not os.path.lexists(path), f"{path} was created"


def _commit_is(w: World, repo: os.PathLike[str]) -> None:
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    run = json.loads((w.out / "results.json").read_text())["run"]
    assert run["commit"] == head, f"results name commit {run['commit']}, the checkout is {head}"


def _sent_no(server: object, what: str) -> None:
    assert isinstance(server, FaultServer)
    sent = [f"{method} {path}" for method, path in server.requests]
    assert not [r for r in sent if what in r], f"sent {what}: {sent}"


def foreign_bot_comment() -> dict:
    """Another app's bot comment carrying our marker and a state line."""
    body = (f"{marker(DEFAULT_KEY)}\n{state_marker('0123456789abcdef', '0123456789abcdef')}"
            "\nnot ours")
    return {"id": 99, "node_id": "IC_foreign", "body": body, "created_at": "2030-01-01T00:00:00Z",
            "user": {"login": "other-app[bot]", "type": "Bot"},
            "html_url": "https://github.com/octo/widgets/pull/7#issuecomment-99"}


def _not_posted(server: object) -> None:
    assert isinstance(server, FaultServer)
    assert not server.posted, "a comment was posted"
    assert server.other_host_hits == 0, "a request went to another host"


def event(base: str, head: str = "HEAD") -> Setup:
    def setup(w: World) -> tuple[list[str], dict[str, str]]:
        path = w.root / "runner" / "event.json"
        path.write_text(json.dumps({"pull_request": {"number": 7, "base": {"sha": base},
                                                     "head": {"sha": head}}}))
        env = {"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(path)}
        return ev(w, "--baseline", "auto"), env
    return setup


def big_sparse(w: World) -> tuple[list[str], dict[str, str]]:
    with (w.ws / "big.log").open("wb") as handle:
        handle.truncate(300 * 1024 * 1024)
    return ev(w), {}


def init_latin1(w: World) -> tuple[list[str], dict[str, str]]:
    w.write("pkg_latin/mod.py", b'"""Caf\xe9 module."""\n\ndef f():\n    return 1\n')
    # Tracked: an untracked file is not evaluated (issue 20), so it would never be read.
    subprocess.run(["git", "-C", str(w.ws), "add", "pkg_latin/mod.py"], check=True,
                   capture_output=True)
    return ["init", str(w.ws), "--output", str(w.out / "draft.json"), "--no-review"], {}


def no_marker(w: World, o: Outcome, s: object) -> None:
    assert not (w.root / "pwned").exists(), "git ran an injected command"


def skipped_named(name: str) -> Callable[[World, Outcome, object], None]:
    def check(w: World, o: Outcome, s: object) -> None:
        assert name in o.stderr, f"no warning names {name}"
        snaps = list((w.cache / "snapshots").glob("*/" + name))
        assert not snaps, f"{name} was copied into the snapshot"
    return check


REPOS = [
    Case("repo-sparse-300mb", big_sparse, 0, ("big.log",), results=True,
         check=skipped_named("big.log")),
    Case("repo-binary-file", with_file("blob.dat", b"\0\1\2" * 1000), 0, ("blob.dat",),
         results=True, check=skipped_named("blob.dat")),
    Case("repo-symlink-module-outside", lambda w: (w.ws.joinpath("leak.py").symlink_to(
        w.secret), (ev(w), {}))[-1], 0, (), results=True),
    Case("repo-neuralmind-yaml-latin1", with_file(".neuralmind.yaml", b"name: caf\xe9\n"), 2,
         (".neuralmind.yaml",)),
    Case("repo-neuralmind-yaml-deep", with_file(".neuralmind.yaml", DEEP_YAML), 2,
         (".neuralmind.yaml",)),
    Case("repo-base-sha-upload-pack", lambda w: event(
        f"--upload-pack=touch {w.root}/pwned")(w), 2, ("sha",), check=no_marker),
    Case("repo-head-sha-option",
         lambda w: event("a" * 40, f"--upload-pack=touch {w.root}/pwned")(w),
         2, ("sha",), check=no_marker),
    Case("repo-base-sha-not-hex", event("zzzz"), 2, ("sha",)),
    Case("repo-ref-option", lambda w: (ev(w, "--baseline", "ref:--output=x"), {}), 2,
         ("--output=x",)),
    Case("repo-event-deep", lambda w: (w.root.joinpath("runner", "event.json").write_text(DEEP),
                                       (ev(w, "--baseline", "auto"),
                                        {"GITHUB_EVENT_NAME": "pull_request",
                                         "GITHUB_EVENT_PATH": str(w.root / "runner" /
                                                                  "event.json")}))[-1],
         2, ("event",)),
    Case("repo-init-latin1-py", init_latin1, 2, ("mod.py",)),
    Case("repo-import-deep-yaml", lambda w: (w.write("x.eval.yaml", DEEP_YAML), (
        ["import", "neuralmind-eval", str(w.ws), "--input", str(w.ws / "x.eval.yaml"),
         "--output", str(w.out / "imp.json")], {}))[-1], 2, ("x.eval.yaml",)),
    Case("repo-import-trec-latin1", lambda w: (w.write("q.tsv", b"1\tcaf\xe9\n"),
                                               w.write("qrels.txt", "1 0 a.py 1\n"), (
        ["import", "trec", str(w.ws), "--qrels", str(w.ws / "qrels.txt"), "--queries",
         str(w.ws / "q.tsv"), "--output", str(w.out / "imp.json")], {}))[-1], 2, ("q.tsv",)),
    Case("repo-import-jsonl-deep", lambda w: (w.write("q.jsonl", DEEP + "\n"),
                                              w.write("qrels.txt", "1 0 a.py 1\n"), (
        ["import", "trec", str(w.ws), "--qrels", str(w.ws / "qrels.txt"), "--queries",
         str(w.ws / "q.jsonl"), "--output", str(w.out / "imp.json")], {}))[-1], 2,
         ("q.jsonl",)),
    Case("repo-import-jsonl-lone-surrogate", lambda w: (
        w.write("q.jsonl", '{"_id": "1", "text": "where is caf\\ud800?"}\n'),
        w.write("qrels.txt", f"1 0 {next(iter(w.queries()['queries'][0]['relevance_grades']))}"
                             " 1\n"), (
            ["import", "trec", str(w.ws), "--qrels", str(w.ws / "qrels.txt"), "--queries",
             str(w.ws / "q.jsonl"), "--output", str(w.out / "imp.json")], {}))[-1], 2,
         ("q.jsonl", "line 1", "unicode")),
    Case("repo-judge-contexts-lone-surrogate", lambda w: (
        w.out.mkdir(), w.write("ctx.json", json.dumps(
            {q["id"]: "SURROGATE" for q in w.queries()["queries"]}).replace(
                '"SURROGATE"', '"text \\ud800"')), (
            ["judge", "--queries", str(w.ws / "retrieval_queries.json"), "--contexts",
             str(w.ws / "ctx.json"), "--output", str(w.out / "judged.json"), "--cache-dir",
             str(w.cache)], {}))[-1], 2, ("ctx.json", "unicode")),
    Case("repo-newline-file-name", with_file("bad\nname.py", "x = 1\n"), 0, (), results=True),
]


def out_setup(make: Callable[[World], list[str]]) -> Setup:
    return lambda w: (make(w), {})


OUTPUT = [
    Case("out-is-checkout", out_setup(lambda w: ev(w, "--output-dir", str(w.ws), out=False)),
         2, ("output-dir",)),
    Case("cache-is-checkout", out_setup(lambda w: ev(w, "--cache-dir", str(w.ws),
                                                     cache=False)), 2, ("cache-dir",)),
    Case("out-contains-checkout", out_setup(lambda w: (w.allowed.append(w.root),
                                                       ev(w, "--output-dir", str(w.root),
                                                          out=False))[-1]), 2,
         ("output-dir",)),
    Case("out-is-file", lambda w: (w.out.parent.joinpath("outfile").write_text("x"), (
        ev(w, "--output-dir", str(w.root / "outfile"), out=False), {}))[-1], 2, ("outfile",)),
    Case("out-under-file", lambda w: (w.root.joinpath("outfile").write_text("x"), (
        ev(w, "--output-dir", str(w.root / "outfile" / "sub"), out=False), {}))[-1], 2,
         ("outfile",)),
    Case("out-results-is-directory", lambda w: ((w.out / "results.json").mkdir(parents=True),
                                                (ev(w), {}))[-1], 2, ("results.json",)),
    Case("out-report-is-directory", lambda w: ((w.out / "report.md").mkdir(parents=True),
                                               (ev(w), {}))[-1], 2, ("report.md",)),
    Case("cache-is-file", lambda w: (w.cache.write_text("x"), (ev(w), {}))[-1], 2,
         ("cache",)),
    Case("out-previous-kept", lambda w: ((w.out / "report.md").mkdir(parents=True),
                                         (w.out / "results.json").write_text('{"old": 1}'),
                                         (ev(w), {}))[-1], 2, ("report.md",),
         check=lambda w, o, s: _complete_json(w.out / "results.json")),
]


def _complete_json(path: os.PathLike[str]) -> None:
    json.loads(open(path).read())  # noqa: SIM115 - a whole, parseable document


def runner_env(**over: Callable[[World], str] | str) -> Setup:
    def setup(w: World) -> tuple[list[str], dict[str, str]]:
        env = w.gh_env()
        for name, value in over.items():
            if value == "":
                env.pop(name, None)
            else:
                env[name] = value(w) if callable(value) else value
        return ev(w), env
    return setup


def comment_env(comment: bool, **over: Callable[[World], str] | str) -> Setup:
    def setup(w: World) -> tuple[list[str], dict[str, str]]:
        argv, env = runner_env(**over)(w)
        if comment:
            argv = [*argv, "--comment", *BUDGET]
        return argv, env
    return setup


def comment_cmd(**over: Callable[[World], str] | str) -> Setup:
    def setup(w: World) -> tuple[list[str], dict[str, str]]:
        _argv, env = runner_env(**over)(w)
        return ["comment", "--results", str(w.results), "--no-fail-on-floors", *BUDGET], env
    return setup


def warned(word: str) -> Callable[[World, Outcome, object], None]:
    def check(w: World, o: Outcome, s: object) -> None:
        assert "::warning" in o.stdout and word.lower() in o.stdout.lower(), \
            f"no ::warning annotation naming {word}"
    return check


RUNNER = [
    Case("runner-output-is-dir", runner_env(GITHUB_OUTPUT=lambda w: str(w.root / "runner")),
         2, ("GITHUB_OUTPUT",), results=True),
    Case("runner-output-missing-dir", runner_env(
        GITHUB_OUTPUT=lambda w: str(w.root / "runner" / "no" / "out")), 2, ("GITHUB_OUTPUT",),
         results=True),
    Case("runner-summary-is-dir", runner_env(
        GITHUB_STEP_SUMMARY=lambda w: str(w.root / "runner")), 2, ("GITHUB_STEP_SUMMARY",),
         results=True),
    Case("runner-summary-missing-dir", runner_env(
        GITHUB_STEP_SUMMARY=lambda w: str(w.root / "runner" / "no" / "sum")), 2,
         ("GITHUB_STEP_SUMMARY",), results=True),
    Case("runner-api-url-malformed-optional", comment_env(True, GITHUB_API_URL="http://[::1"),
         0, ("GITHUB_API_URL",), results=True, check=warned("GITHUB_API_URL")),
    Case("runner-api-url-ftp-optional", comment_env(True, GITHUB_API_URL="ftp://example"),
         0, ("GITHUB_API_URL",), results=True, check=warned("GITHUB_API_URL")),
    Case("runner-api-url-malformed-comment", comment_cmd(GITHUB_API_URL="http://[::1"), 2,
         ("GITHUB_API_URL",)),
    Case("runner-event-missing-optional", comment_env(
        True, GITHUB_EVENT_PATH=lambda w: str(w.root / "none.json")), 0, ("event",),
         results=True),
    Case("runner-repository-garbage-optional", comment_env(True, GITHUB_REPOSITORY="x y"), 0,
         ("GITHUB_REPOSITORY",), results=True),
    Case("runner-token-space-optional", comment_env(True, GITHUB_TOKEN="ghs_a b"), 0,
         ("token",), results=True, check=warned("token")),
    Case("runner-token-missing-optional", comment_env(True, GITHUB_TOKEN=""), 0, ("token",),
         results=True, check=warned("token")),
    Case("runner-token-space-comment", comment_cmd(GITHUB_TOKEN="ghs_a b"), 2, ("token",)),
    Case("runner-token-missing-comment", comment_cmd(GITHUB_TOKEN=""), 2, ("token",)),
    Case("runner-event-deep-comment", lambda w: (w.root.joinpath("runner", "event.json")
                                                 .write_text(DEEP), comment_cmd()(w))[-1], 2,
         ("event",)),
    Case("runner-event-latin1-comment", lambda w: (w.root.joinpath("runner", "event.json")
                                                   .write_bytes(b'{"a": "\xe9"}'),
                                                   comment_cmd()(w))[-1], 2, ("event",)),
]


def action(**inputs: str | Callable[[World], str]) -> Setup:
    def setup(w: World) -> tuple[list[str], dict[str, str]]:
        values = {k: (v(w) if callable(v) else v) for k, v in inputs.items()}
        return ["action"], w.action_env(**{"fail_on_floors": "false", **values})
    return setup


def action_with_options(text: str | Callable[[World], str], **inputs: str) -> Setup:
    def setup(w: World) -> tuple[list[str], dict[str, str]]:
        w.write(".retrieval-eval.yml", text(w) if callable(text) else text)
        return action(**inputs)(w)
    return setup


def action_results(w: World) -> os.PathLike[str]:
    return w.ws / ".retrieval-eval" / "results"


ACTION = [
    Case("action-ok", action(), 0, (), results=True, results_dir=action_results),
    Case("action-path-outside", action(path="../outside"), 2, ("path", "outside")),
    Case("action-queries-outside", action(queries="../outside/secret.txt"), 2,
         ("queries", "outside")),
    Case("action-template-proc", action(template="/proc/self/environ"), 2,
         ("template", "outside")),
    Case("action-output-dir-outside", action(output_dir="../out2"), 2, ("output-dir",)),
    Case("action-cache-dir-dot", action(cache_dir="."), 2, ("cache-dir",)),
    Case("action-output-dir-dot", action(output_dir="."), 2, ("output-dir",)),
    Case("action-bad-backend", action(backend="gpu"), 2, ("backend",)),
    Case("action-bad-mode", action(mode="post"), 2, ("mode",)),
    Case("action-bad-comment-timeout", action(comment_timeout="-1"), 2,
         ("comment-timeout",)),
    Case("action-options-template-proc", action_with_options(
        "template: /proc/self/environ\n", comment="true"), 2, ("template", "outside")),
    Case("action-options-template-secret", action_with_options(
        lambda w: f"template: {w.secret}\n"), 2, ("template", "outside")),
    Case("action-options-queries-outside", action_with_options(
        lambda w: f"queries: {w.secret}\n"), 2, ("queries", "outside")),
    Case("action-options-output-outside", action_with_options(
        "output-dir: ../escaped\n"), 2, ("output-dir", "outside")),
    Case("action-options-cache-root", action_with_options("cache-dir: .\n"), 2,
         ("cache-dir",)),
    Case("action-queries-symlink-outside", lambda w: (
        (w.ws / "retrieval_queries.json").unlink(),
        (w.ws / "retrieval_queries.json").symlink_to(w.secret), action()(w))[-1], 2,
         ("retrieval_queries.json", "outside")),
    Case("action-baseline-file-outside", action(baseline="file:../outside/secret.txt"), 2,
         ("baseline",)),
    Case("action-comment-results-outside", action(mode="comment",
                                                  results="../outside/secret.txt"), 2,
         ("results", "outside")),
    Case("action-comment-no-results", action(mode="comment"), 2, ("results",)),
    Case("action-comment-pr-garbage", action(mode="comment", results="x.json", pr="7x"), 2,
         ("pr",)),
    Case("action-k-garbage", action(k="a,b"), 2, ("k",)),
]


def tpl(body: str | bytes, *, results: bool = False, says: tuple[str, ...] = ("template",),
        code: int = 2, name: str = "") -> dict:
    def setup(w: World) -> tuple[list[str], dict[str, str]]:
        w.write("t.md.j2", body)
        return ev(w, "--template", str(w.ws / "t.md.j2")), {}
    return {"setup": setup, "code": code, "says": says, "results": results}


EXT = '{% extends "builtin/comment.md.j2" %}'
TEMPLATES = [
    Case("tpl-nested-range-loops", **tpl("{% for a in range(100000) %}{% for b in "
                                         "range(100000) %}{% endfor %}{% endfor %}",
                                         says=("t.md.j2", "time"))),
    Case("tpl-nested-list-loops", **tpl("{% set L = range(100000)|list %}{% for a in L %}"
                                        "{% for b in L %}{% endfor %}{% endfor %}",
                                        says=("t.md.j2", "time"))),
    Case("tpl-huge-output", **tpl("{% for a in range(100000) %}{{ 'x' * 1000 }}"
                                  "{% endfor %}", says=("t.md.j2", "size"))),
    Case("tpl-string-bomb", **tpl("{{ 'x' * 10000000000 }}", says=("t.md.j2",))),
    Case("tpl-power-bomb", **tpl("{{ 7 ** 100000000 }}", says=("t.md.j2",))),
    # Fails only on the real results (the probe has one query): after the evaluation, so
    # the head's results and a plain report must still be on disk.
    Case("tpl-fails-late", **tpl("{% for q in queries %}{% if loop.index > 1 %}{{ nope }}"
                                 "{% endif %}{% endfor %}", results=True, says=("t.md.j2",))),
    Case("tpl-macro-loops", **tpl("{% macro m() %}{% for a in range(100000) %}{% for b in "
                                  "range(100000) %}{% endfor %}{% endfor %}{% endmacro %}"
                                  "{{ m() }}", says=("t.md.j2", "time"))),
    Case("tpl-recursion", **tpl("{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}",
                                says=("t.md.j2",))),
    Case("tpl-syntax-error", **tpl("{% for %}", results=False, says=("t.md.j2",))),
    Case("tpl-undefined", **tpl("{{ nope.field }}", says=("t.md.j2",))),
    Case("tpl-python-internals", **tpl("{{ ''.__class__.__mro__[1].__subclasses__() }}",
                                       says=("t.md.j2",))),
    Case("tpl-include-outside", **tpl('{% include "../outside/secret.txt" %}',
                                      says=("secret.txt", "not found"))),
    Case("tpl-extends-absolute", **tpl('{% extends "/etc/passwd" %}',
                                       says=("/etc/passwd", "not found"))),
    Case("tpl-latin1", **tpl(b"caf\xe9 {{ 1 }}", results=False, says=("t.md.j2",))),
    Case("tpl-lipsum-bomb", **tpl("{{ lipsum(1000000) }}", says=("t.md.j2",))),
    Case("tpl-format-width", **tpl("{{ '%2000000000s' | format('x') }}", says=("t.md.j2",))),
    Case("tpl-center-width", **tpl("{{ 'x' | center(2000000000) }}", says=("t.md.j2",))),
    Case("tpl-ok-extends", **tpl(EXT + "{% block headline %}custom{% endblock %}", code=0,
                                 says=())),
]


# Issue 19 item 1: actions/checkout keeps the workflow's token in .git/config; no path a PR,
# a template or an input can set may read it (or write .git/hooks).
def checkout_token(w: World) -> None:
    header = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    with (w.ws / ".git" / "config").open("a") as config:
        config.write(f'[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic '
                     f"{header}\n")


def in_checkout(setup: Setup) -> Setup:
    """``setup`` in a checkout whose .git/config holds the token, as actions/checkout leaves it."""
    def wrapped(w: World) -> tuple[list[str], dict[str, str]]:
        checkout_token(w)
        return setup(w)
    return wrapped


def link(name: str, target: str, then: Setup) -> Setup:
    def setup(w: World) -> tuple[list[str], dict[str, str]]:
        (w.ws / name).unlink(missing_ok=True)
        (w.ws / name).symlink_to(target)
        return then(w)
    return setup


CREDENTIALS = [
    Case("vcs-template-git-config", in_checkout(options("template: .git/config\n")), 2,
         ("template", ".git")),
    Case("vcs-template-git-upper", in_checkout(options("template: .GIT/config\n")), 2,
         ("template", ".git")),
    Case("vcs-template-dot-slash", in_checkout(options("template: ./.git/config\n")), 2,
         ("template", ".git")),
    Case("vcs-template-dotdot", in_checkout(options("template: a/../.git/config\n")), 2,
         ("template", ".git")),
    Case("vcs-template-symlink", in_checkout(link("t.md.j2", ".git/config",
                                                  options("template: t.md.j2\n"))), 2,
         ("template", ".git")),
    Case("vcs-template-dir-symlink", in_checkout(link("meta", ".git",
                                                      options("template: meta/config\n"))), 2,
         ("template", ".git")),
    Case("vcs-include-git-config", in_checkout(tpl('{% include ".git/config" %}')["setup"]), 2,
         (".git/config", ".git")),
    Case("vcs-import-git-config", in_checkout(tpl('{% import ".git/config" as c %}x')["setup"]),
         2, (".git/config", ".git")),
    Case("vcs-extends-git-config", in_checkout(tpl('{% extends "./.git/config" %}')["setup"]),
         2, (".git/config", ".git")),
    Case("vcs-include-git-symlink", in_checkout(link(
        "inc.txt", ".git/config", tpl('{% include "inc.txt" %}')["setup"])), 2,
         ("inc.txt", ".git")),
    Case("vcs-history-git-hooks", in_checkout(options("history: .git/hooks/post-checkout\n")),
         2, ("history", ".git")),
    Case("vcs-history-hg", options("history: .hg/hgrc\n"), 2, ("history", ".hg")),
    Case("vcs-history-svn", options("history: .svn/entries\n"), 2, ("history", ".svn")),
    Case("vcs-output-dir-git", options("output-dir: .git/hooks\n", out=False), 2,
         ("output-dir", ".git")),
    Case("vcs-cache-dir-git", options("cache-dir: .git/x\n", cache=False), 2,
         ("cache-dir", ".git")),
    Case("vcs-queries-git", in_checkout(options("queries: .git/config\n")), 2,
         ("queries", ".git")),
    Case("vcs-baseline-file-git", in_checkout(options("baseline: file:.git/config\n")), 2,
         ("baseline", ".git")),
    Case("vcs-default-queries-symlink", in_checkout(gt_symlink(lambda w: ".git/config")), 2,
         ("retrieval_queries.json", ".git")),
    Case("vcs-default-options-symlink", in_checkout(link(".retrieval-eval.yml", ".git/config",
                                                         lambda w: (ev(w), {}))), 2,
         (".retrieval-eval.yml", ".git")),
    # The runner's own files are refused even where a self-hosted runner keeps them inside
    # the checkout (GitHub's runners keep them outside, where confinement already stops them).
    Case("runner-summary-as-template", lambda w: (
        w.write(".retrieval-eval.yml", "template: _runner/summary.md\n"),
        w.write("_runner/summary.md", "summary"),
        (ev(w), {"GITHUB_STEP_SUMMARY": str(w.ws / "_runner" / "summary.md")}))[-1], 2,
         ("template", "runner")),
    Case("runner-temp-as-history", lambda w: (
        w.write(".retrieval-eval.yml", "history: _temp/history.json\n"),
        (ev(w), {"RUNNER_TEMP": str(w.ws / "_temp")}))[-1], 2, ("history", "runner")),
    Case("runner-command-folder-as-action-input", lambda w: (
        action(history="_cmds/next.json")(w)[0],
        {**action(history="_cmds/next.json")(w)[1],
         "GITHUB_ENV": str(w.ws / "_cmds" / "set_env_1")}), 2, ("history", "runner")),
    # Issue 19 item 6: git gets a minimal environment, not the runner's (which can carry
    # GIT_CONFIG_* from an earlier step's $GITHUB_ENV: a command git would run).
    Case("env-git-config-command", lambda w: (ev(w), {
        "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor",
        "GIT_CONFIG_VALUE_0": f"touch {w.root / 'pwned'}; false"}), 0, (), results=True,
         check=lambda w, o, s: _absent(w.root / "pwned")),
    Case("env-git-dir-elsewhere", lambda w: (
        make_repo(w.root / "other", {"other.py": "x = 1\n"}, sample=False),
        (ev(w), {"GIT_DIR": str(w.root / "other" / ".git"),
                 "GIT_WORK_TREE": str(w.root / "other")}))[-1], 0, (), results=True,
         check=lambda w, o, s: _commit_is(w, w.ws)),
    Case("vcs-import-default-input-symlink", in_checkout(link(
        ".neuralmind.eval.yaml", ".git/config", lambda w: (
            ["import", "neuralmind-eval", str(w.ws), "--output", str(w.out / "imp.json")],
            {}))), 2, (".neuralmind.eval.yaml", ".git")),
    Case("vcs-init-default-output-symlink", link(
        "retrieval_queries.json", ".git/hooks/post-checkout",
        lambda w: (["init", str(w.ws), "--no-review"], {})), 2,
         ("retrieval_queries.json", ".git")),
    Case("vcs-action-template", in_checkout(action(template=".git/config")), 2,
         ("template", ".git")),
    Case("vcs-action-history", in_checkout(action(history=".git/hooks/post-checkout")), 2,
         ("history", ".git")),
    Case("vcs-action-options-template", in_checkout(action_with_options(
        "template: .git/config\n")), 2, ("template", ".git")),
]


def fault(*faults: Fault, forever: Fault | None = None) -> Callable[[object], None]:
    def serve(server: object) -> None:
        assert isinstance(server, FaultServer)
        server.faults.extend(faults)
        server.forever = forever
    return serve


def comment(w: World) -> tuple[list[str], dict[str, str]]:
    return ["comment", "--results", str(w.results), "--no-fail-on-floors", *BUDGET], w.gh_env()


def eval_comment(w: World) -> tuple[list[str], dict[str, str]]:
    return ev(w, "--comment", *BUDGET), w.gh_env()


def echo(form: Callable[[str], str], status: int = 401, json_body: bool = True) -> Fault:
    message = f"Bad credentials for {form(TOKEN)}"
    return Fault(status=status, body={"message": message} if json_body else None,
                 headers={} if json_body else {"X-Echo": "1"})


B64 = lambda t: base64.b64encode(t.encode()).decode()  # noqa: E731
S = Fault
GITHUB = [
    Case("gh-ok", comment, 0, ("comment created",), serve=fault(),
         check=lambda w, o, s: _posted(s)),
    Case("gh-401", comment, 2, ("401",), serve=fault(forever=S(status=401))),
    Case("gh-403", comment, 2, ("403",), serve=fault(forever=S(status=403))),
    Case("gh-404", comment, 2, ("404",), serve=fault(forever=S(status=404))),
    Case("gh-422-too-long-forever", comment, 2, ("too long",),
         serve=fault(forever=S(status=422, method="POST",
                               body={"message": "Validation Failed",
                                     "errors": [{"message": "body is too long"}]}))),
    Case("gh-422-too-long-evaluate", eval_comment, 0, ("too long",), results=True,
         serve=fault(forever=S(status=422, method="POST",
                               body={"message": "body is too long"})),
         check=warned("not posted")),
    Case("gh-422-once-then-ok", comment, 0, ("comment created",),
         serve=fault(S(status=422, method="POST", body={"message": "body is too long"}))),
    Case("gh-429-retry-after-once", comment, 0, ("comment created",),
         serve=fault(S(status=429, headers={"Retry-After": "1"}))),
    Case("gh-429-no-retry-after-once", comment, 2, ("429",),
         serve=fault(S(status=429))),
    Case("gh-429-no-retry-after-forever", comment, 2, ("429",),
         serve=fault(forever=S(status=429))),
    Case("gh-429-retry-after-huge", comment, 2, ("429",),
         serve=fault(forever=S(status=429, headers={"Retry-After": "100000"}))),
    Case("gh-403-ratelimit-reset-far", comment, 2, ("403",),
         serve=fault(forever=S(status=403, headers={"x-ratelimit-remaining": "0",
                                                    "x-ratelimit-reset": "9999999999"}))),
    Case("gh-500-once", comment, 0, ("comment created",), serve=fault(S(status=500))),
    Case("gh-500-forever", comment, 2, ("500",), serve=fault(forever=S(status=500))),
    Case("gh-502-post-once", comment, 0, ("comment created",),
         serve=fault(S(status=502, method="POST"))),
    Case("gh-503-forever-evaluate", eval_comment, 0, ("503",), results=True,
         serve=fault(forever=S(status=503)), check=warned("not posted")),
    Case("gh-trickle-get", comment, 2, ("deadline",),
         serve=fault(forever=S(kind="trickle", method="GET", gap=1.0))),
    Case("gh-trickle-post", comment, 2, ("deadline",),
         serve=fault(forever=S(kind="trickle", method="POST", gap=1.0))),
    Case("gh-trickle-evaluate", eval_comment, 0, ("deadline",), results=True,
         serve=fault(forever=S(kind="trickle", gap=1.0)), check=warned("not posted")),
    Case("gh-silent", comment, 2, ("deadline",), serve=fault(forever=S(kind="silent"))),
    Case("gh-silent-evaluate", eval_comment, 0, ("deadline",), results=True,
         serve=fault(forever=S(kind="silent")), check=warned("not posted")),
    Case("gh-badjson", comment, 2, ("not JSON",), serve=fault(forever=S(kind="badjson"))),
    Case("gh-pagination-loop", comment, 2, ("pagination",),
         serve=fault(forever=S(kind="loop", method="GET"))),
    Case("gh-pagination-endless", comment, 2, ("deadline",),
         serve=fault(forever=S(kind="endless", method="GET"))),
    Case("gh-redirect-post", comment, 2, ("redirect",),
         serve=fault(forever=S(kind="redirect", method="POST")),
         check=lambda w, o, s: _not_posted(s)),
    Case("gh-redirect-get", comment, 2, ("redirect",),
         serve=fault(forever=S(kind="redirect", method="GET")),
         check=lambda w, o, s: _not_posted(s)),
    Case("gh-echo-token-plain", comment, 2, ("401",), serve=fault(forever=echo(str))),
    Case("gh-echo-token-upper", comment, 2, ("401",), serve=fault(forever=echo(str.upper))),
    Case("gh-echo-token-lower", comment, 2, ("401",), serve=fault(forever=echo(str.lower))),
    Case("gh-echo-token-base64", comment, 2, ("401",), serve=fault(forever=echo(B64))),
    Case("gh-echo-token-hex", comment, 2, ("401",),
         serve=fault(forever=echo(lambda t: t.encode().hex()))),
    Case("gh-echo-token-500", comment, 2, ("500",),
         serve=fault(forever=echo(str.upper, status=500))),
    Case("gh-echo-token-422", comment, 2, ("422",),
         serve=fault(forever=S(status=422, method="POST",
                               body={"message": "bad", "errors": [B64(TOKEN)]}))),
    # actions/checkout's header form, basic base64(user:TOKEN), at every byte alignment.
    *(Case(f"gh-echo-token-basic-{user}", comment, 2, ("401",), serve=fault(forever=echo(
        lambda t, u=user: "AUTHORIZATION: basic " + B64(f"{u}:{t}")))) for user in
      ("x", "xy", "xyz", "x-access-token", "pat-user")),
    # Issue 19 item 5: another app's bot pasting our marker is not us.
    Case("gh-foreign-bot-marker-not-edited", comment, 0, ("comment created",),
         serve=fault(forever=S(status=200, method="GET", path="/comments",
                               body=[foreign_bot_comment()])),
         check=lambda w, o, s: (_posted(s), _sent_no(s, "PATCH"))),
    Case("gh-foreign-bot-marker-not-hidden",
         lambda w: (comment(w)[0] + ["--hide-previous"], comment(w)[1]), 0,
         ("comment created",),
         serve=fault(forever=S(status=200, method="GET", path="/comments",
                               body=[foreign_bot_comment()])),
         check=lambda w, o, s: (_posted(s), _sent_no(s, "/graphql"))),
    Case("gh-post-no-html-url", comment, 2, ("html_url",),
         serve=fault(forever=S(status=201, method="POST", body={"id": 1}))),
    Case("gh-list-not-list", comment, 2, ("list",),
         serve=fault(forever=S(status=200, method="GET", body={"a": 1}))),
]


def alias_bomb(indent: str = "", levels: int = 9) -> str:
    """Nested aliases ("billion laughs"): ``levels`` lists of nine aliases to the list above
    (9**9 = 387 million strings when followed), as YAML lines at ``indent``; its first
    anchor is on the first line."""
    lines = [f'{indent}- &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"{indent}- &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, levels)]
    return "\n".join(lines) + "\n"


def yaml_queries(w: World, body: str, *, cmd: str = "validate",
                 fact: str = "") -> tuple[list[str], dict]:
    """``q.yaml`` as the ground truth: ``body`` (from line 2), then the sample's queries,
    the first one's ``gold_facts`` replaced by ``fact`` when given (an alias)."""
    queries = w.queries()["queries"]
    if fact:
        queries[0]["gold_facts"] = "FACT"
    text = json.dumps(queries).replace('"FACT"', fact)
    w.write("q.yaml", "version: 1\n" + body + "queries: " + text + "\n")
    if cmd == "validate":
        return ["validate", str(w.ws), "--queries", str(w.ws / "q.yaml")], {}
    return ev(w, "--queries", str(w.ws / "q.yaml")), {}


def eval_yaml(w: World) -> tuple[list[str], dict[str, str]]:
    w.write("x.eval.yaml", "queries:\n  - id: a\n    question: where?\n    expected:\n"
                           + alias_bomb("      "))
    return ["import", "neuralmind-eval", str(w.ws), "--input", str(w.ws / "x.eval.yaml"),
            "--output", str(w.out / "imp.json")], {}


YAML_ALIASES = [  # issue 19 item 2: every YAML the tool reads refuses anchors and aliases
    Case("gt-yaml-alias-bomb-validate",
         lambda w: yaml_queries(w, "lol:\n" + alias_bomb(), fact="*l8"), 2,
         ("q.yaml", ":3", "alias")),
    Case("gt-yaml-alias-bomb-evaluate",
         lambda w: yaml_queries(w, "lol:\n" + alias_bomb(), cmd="evaluate", fact="[*l8]"), 2,
         ("q.yaml", "alias")),
    Case("gt-yaml-one-anchor", lambda w: yaml_queries(w, "notes: &n [a]\nmore: *n\n"), 2,
         ("q.yaml", ":2", "anchor")),
    Case("opt-exclude-alias-bomb", options("alpha: 0.5\nexclude:\n" + alias_bomb("  ")), 2,
         (".retrieval-eval.yml", "line 3", "alias")),
    Case("opt-floors-alias", options("floors: &f {mrr: 0.1}\nshape-floors: *f\n"), 2,
         (".retrieval-eval.yml", "line 1", "alias")),
    Case("action-options-alias-bomb", action_with_options("exclude:\n" + alias_bomb("  ")), 2,
         (".retrieval-eval.yml", "alias")),
    Case("repo-neuralmind-yaml-alias-bomb",
         with_file(".neuralmind.yaml", "name: x\nlol:\n" + alias_bomb("  ")), 2,
         (".neuralmind.yaml", "line 3", "alias")),
    Case("repo-import-eval-yaml-alias-bomb", eval_yaml, 2, ("x.eval.yaml", "line 5", "alias")),
]


ALL: list[Case] = [*GROUND_TRUTH, *OPTIONS, *RESULTS, *REPOS, *OUTPUT, *RUNNER, *ACTION,
                   *TEMPLATES, *GITHUB, *CREDENTIALS, *YAML_ALIASES]

# Cases that wait for a deadline or a budget to pass (4-5 s each): `pytest -m slow`.
SLOW = frozenset({"tpl-nested-range-loops", "tpl-nested-list-loops", "tpl-macro-loops",
                  "gh-trickle-get", "gh-trickle-post", "gh-trickle-evaluate", "gh-silent",
                  "gh-silent-evaluate", "gh-pagination-endless", "repo-sparse-300mb"})
ALL = [dataclasses.replace(c, slow=True) if c.id in SLOW else c for c in ALL]
