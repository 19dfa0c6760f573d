"""Every system on real issue descriptions, over the same candidate set (issue 23's first
measured goal).

The questions are real issue descriptions (``issue_instances.json``): 16 instances of
SWE-bench Lite and Verified for psf/requests and pallets/flask, whose fixes are in those
projects' histories, and 4 GitHub issues of the same projects fixed by a pull request that
names them (the task's fallback, to reach 20). Each question is the issue's title and its
first prose paragraph as the user wrote it (fenced code, HTML comments, headings and
paragraphs under 8 words skipped; whitespace normalised). Its gold is the set of non-test
source files the fix changed (a merge: its branch's changes, from the merge base of its
parents to the second; a squashed fix: its one commit), each present at the evaluated
commit: grade 3 the file with most changed lines, 2 the others. The repository is
evaluated at the instance's ``base_commit`` (SWE-bench's, or the fix's first parent where
the data file says so). The script recomputes every gold set from the clones' history and
stops if one differs from the data file.

For each instance it exports that commit of a local clone into a fresh git checkout, writes
a one-question retrieval-only ground truth and runs::

    retrieval-eval evaluate CHECKOUT --systems neuralmind,bm25,embedding,grep,full-file,oracle \\
        --budget neuralmind

(the real model of the ``model`` extra, one cache folder for every run). It checks, and
stops if not, that every system's scored ranking holds only modules of the run's universe
(the checkout's files through the default include/exclude), counts what each system's raw
ranking had filtered out by reason, and prints per system the mean recall@5, nDCG@5, MRR,
acc@5 and context tokens over the instances, per repository and overall, and how many
instances each system wins, ties and loses against the first (NeuralMind) on nDCG@5. With
``--unbudgeted`` each instance also runs without the budget (warm cache) and the table
shows both. Asserts nothing about quality; nothing is tuned here.

Usage::

    python benchmarks/bench_issues.py --repo psf/requests=PATH --repo pallets/flask=PATH \\
        [--only psf__requests-1963] [--unbudgeted] [--check-gold]

A path may be a work tree or a bare git directory holding the commits named in the data
file. ``--check-gold`` only recomputes every instance's gold files from the history and
compares them with the data file.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from bench_public import export, git_dir
from benchlib import HERE, make_checkout, run_cli, table
from suitelib import REPO

sys.path.insert(0, str(REPO))

from evaluator.core.universe import select_universe
from evaluator.snapshot import checkout_files

DATA = HERE / "issue_instances.json"
SYSTEMS = "neuralmind,bm25,embedding,grep,full-file,oracle"
MEASURES = ("recall@5", "ndcg@5", "mrr", "acc@5", "context_tokens")


def git_out(clone: Path, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={git_dir(clone)}", *args], check=True,
                          capture_output=True, text=True).stdout


def is_test(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    return (any(p in ("tests", "test", "testing") for p in parts[:-1])
            or name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py")


def gold_files(clone: Path, base: str, fix: str) -> dict[str, int]:
    """The non-test ``.py`` files the fix changed that exist at ``base``: grade 3 the one
    with most changed lines (added + deleted), 2 the others. A merge's changes are its
    branch's, from the merge base of its two parents to the second."""
    parents = git_out(clone, "rev-list", "--parents", "-n", "1", fix).split()[1:]
    if len(parents) == 2:
        start = git_out(clone, "merge-base", *parents).strip()
        end = parents[1]
    else:
        start, end = parents[0], fix
    present = set(git_out(clone, "ls-tree", "-r", "--name-only", base).split("\n"))
    lines: Counter[str] = Counter()
    for row in git_out(clone, "diff", "--numstat", start, end).splitlines():
        added, deleted, path = row.split("\t", 2)
        if path.endswith(".py") and not is_test(path) and path in present and added != "-":
            lines[path] += int(added) + int(deleted)
    ranked = sorted(lines, key=lambda p: (-lines[p], p))
    return {p: 3 if i == 0 else 2 for i, p in enumerate(ranked)}


def question(instance: dict[str, Any]) -> str:
    return " ".join(f"{instance['title']}\n{instance['first_paragraph']}".split())


def run_instance(instance: dict[str, Any], clone: Path, work: Path, cache: Path,
                 unbudgeted: bool) -> dict[str, Any]:
    """One instance's evaluation: per system its metrics (with and, if asked, without the
    budget) and the filtered-out counts; stops if a ranking leaves the universe."""
    name = instance["id"]
    checkout = export(clone, instance["base_commit"], ".", work / name)
    files = checkout_files(checkout)
    modules = set(select_universe(files).modules)
    grades = instance["gold"]
    missing = [g for g in grades if g not in modules]
    if missing:
        raise SystemExit(f"{name}: gold outside the module universe: {missing}")
    queries = [{"id": name, "question": question(instance), "shape": "focused",
                "relevance_grades": grades}]
    (checkout / "retrieval_queries.json").write_text(json.dumps({"queries": queries}))
    make_checkout(checkout, f"{name} at {instance['base_commit'][:12]}")
    argv = ["evaluate", str(checkout), "--systems", SYSTEMS, "--cache-dir", str(cache),
            "--quiet"]
    runs = {"budget": run_cli([*argv, "--budget", "neuralmind"], work / f"{name}-out")}
    if unbudgeted:
        runs["none"] = run_cli(argv, work / f"{name}-free")
    out: dict[str, Any] = {"universe": len(modules), "systems": {}}
    for mode, result in runs.items():
        if result.results["run"]["universe"]["modules"] != len(modules):
            raise SystemExit(f"{name}: the run's universe differs from the checkout's")
        for block in result.results["systems"]:
            (row,) = block["queries"]
            stray = [m for m in row["ranked_modules"] if m not in modules]
            if stray:
                raise SystemExit(f"{name}: {block['label']} scored modules outside the "
                                 f"universe: {stray}")
            entry = out["systems"].setdefault(block["label"], {"filtered": Counter()})
            entry[mode] = {k: row["metrics"][k] for k in MEASURES}
            if mode == "budget":
                entry["filtered"].update(row.get("filtered_out", {}))
                entry["ranked"] = row["ranked_modules"][:5]
    return out


def mean(values: list[float | None]) -> str:
    xs = [v for v in values if v is not None]
    return f"{sum(xs) / len(xs):.3f}" if xs else "-"


def summary(rows: list[tuple[str, dict[str, Any]]], modes: list[str]) -> list[list[str]]:
    by_system: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for _repo, result in rows:
        for label, entry in result["systems"].items():
            by_system[label].append(entry)
    lines = []
    for label, entries in by_system.items():
        line = [label]
        for k in MEASURES:
            for mode in modes:
                value = mean([e[mode][k] for e in entries])
                line.append(value if k != "context_tokens" or value == "-"
                            else f"{float(value):.0f}")
        first = by_system[next(iter(by_system))]
        pairs = [(e["budget"]["ndcg@5"], f["budget"]["ndcg@5"])
                 for e, f in zip(entries, first, strict=True)]
        line.append(f"{sum(a > b for a, b in pairs)}/{sum(a == b for a, b in pairs)}/"
                    f"{sum(a < b for a, b in pairs)}")
        filtered: Counter[str] = Counter()
        for e in entries:
            filtered.update(e["filtered"])
        line.append(", ".join(f"{n} {r}" for r, n in sorted(filtered.items())) or "0")
        lines.append(line)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME=PATH",
                        help="a clone of an instance's repository (holding its commits)")
    parser.add_argument("--only", action="append", default=[], help="one instance id")
    parser.add_argument("--unbudgeted", action="store_true",
                        help="also run every instance without --budget (warm cache)")
    parser.add_argument("--check-gold", action="store_true",
                        help="recompute the gold files from the history and compare")
    args = parser.parse_args()
    clones = {k: Path(v) for k, v in (item.split("=", 1) for item in args.repo)}
    instances = [i for i in json.loads(DATA.read_text())["instances"]
                 if i["repo"] in clones and (not args.only or i["id"] in args.only)]
    if not instances:
        raise SystemExit("no instance of the data file has a --repo clone")
    differ = [i["id"] for i in instances
              if gold_files(clones[i["repo"]], i["base_commit"], i["fix_commit"]) != i["gold"]]
    if differ:
        raise SystemExit(f"gold files differ from the history for: {', '.join(differ)}")
    print(f"gold files of {len(instances)} instances agree with the fixes in the history")
    if args.check_gold:
        return
    work = Path(tempfile.mkdtemp(prefix="bench-issues-"))
    cache = work / "cache"
    rows = []
    for instance in instances:
        result = run_instance(instance, clones[instance["repo"]], work, cache,
                              args.unbudgeted)
        rows.append((instance["repo"], result))
        best = {label: e["budget"]["ndcg@5"] for label, e in result["systems"].items()}
        print(f"{instance['id']}: universe {result['universe']} modules, gold "
              f"{', '.join(instance['gold'])}; nDCG@5 "
              + ", ".join(f"{k} {v:.2f}" for k, v in best.items()), flush=True)
    modes = ["budget", "none"] if args.unbudgeted else ["budget"]
    tag = {"budget": " (budget)", "none": " (none)"} if args.unbudgeted else {"budget": ""}
    header = ["system", *(f"{k}{tag[m]}" for k in ("recall@5", "nDCG@5", "MRR", "acc@5",
                                                   "tokens") for m in modes),
              "nDCG@5 vs first: W/T/L", "filtered out (all questions)"]
    print()
    print("every system's scored ranking holds only modules of the run's universe: checked")
    for repo in sorted({r for r, _ in rows}):
        part = [row for row in rows if row[0] == repo]
        print(f"\n{repo}: {len(part)} instances, --budget neuralmind")
        print(table(header, summary(part, modes)))
    print(f"\nall: {len(rows)} instances, --budget neuralmind")
    print(table(header, summary(rows, modes)))
    (work / "per-instance.json").write_text(json.dumps(
        [{"id": i["id"], **r} for i, (_repo, r) in zip(instances, rows, strict=True)],
        indent=1))
    print(f"\n(work folder {work}: per-instance.json holds each instance's figures)")


if __name__ == "__main__":
    main()
