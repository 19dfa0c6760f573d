"""NeuralMind's public benchmark, question by question: does the evaluator's ``embedding``
find what the harness's ``embedding-rag`` finds, and its ``grep`` what ``ripgrep`` finds?

NeuralMind's repository (github.com/dfrostar/neuralmind) holds an honest public benchmark:
``evals/public/manifest.json`` pre-registers 40 questions on four pinned repositories
(requests, click, flask, rich), each with its gold files (the definition site of the symbol
asked about), and ``evals/public/run.py`` scores its baselines on whether **all** gold
files are in the context ("found"). This script reads the manifest and runs the harness's
own backends from a clone of that repository (nothing of it is copied here), and on the
same files:

* the harness: ``backends.run_ripgrep`` (its keywords counted in the source, top 5 files)
  and ``backends.run_embedding_rag`` (top 8 hits of ``NeuralMind.search`` on a NeuralMind
  build of the folder, synapse injection off as ``run_all`` sets it);
* the evaluator: ``retrieval-eval evaluate --systems`` with
  ``neuralmind,bm25,embedding,grep,full-file,oracle`` on a git repository of the same
  folder, with a ground truth of the manifest's questions (each gold file grade 3), the
  real model and a fresh cache. ``grep`` finds a question when every gold file is in its
  top 5 (its context); ``embedding`` (the harness's own definition: ``NeuralMind.search``
  over the run's build) when every gold file holds one of its top 8 hits (its context),
  read from an :class:`evaluator.refsystems.indexsearch.IndexSearch` over the build the
  run left in its cache; ``embedding:chunks=code`` when every gold file holds one of its
  top 8 chunks (its context), read from an
  :class:`evaluator.refsystems.embedding.EmbeddingIndex` on the same checkout's module
  universe (the files the run's ``embedding:chunks=code`` embeds) and cache; each one's
  module ranking is checked against the run's;
* ``grep`` on the harness's files (:func:`harness_files`): the harness keys its files by
  basename, so where two files share a name it reads one of them (flask's ``sansio/app.py``
  for ``app.py``); this row asks the same :class:`~evaluator.refsystems.grep.GrepIndex`
  over the files the harness reads, the like-for-like comparison of the two rankings.

It prints each question's found/not-found on both sides with the files each returned, the
agreement per pair (goal: ≥ 90 % of the questions), and each repository's systems table
from the run (recall@5, nDCG@5, MRR@5, acc@5, faithfulness, mean context tokens). Each
question's gold facts are its manifest ``oracle_symbol`` (``class HTTPBasicAuth``; a
cross-file question's two symbols, split at `` + ``), so faithfulness says whether the
context holds the definition asked about. Asserts nothing.

``--budget N|neuralmind`` is passed to ``evaluate`` (every system's context cut to N
tokens, or to NeuralMind's own count per question). The budget cuts contexts, not
rankings: the script then runs ``evaluate`` once more without it (warm cache) and prints
how many of each system's per-question rankings are the same in both runs, so the
found/not-found agreement (read from the rankings) holds at the budget too.

Usage (clones with their history; the pinned commits must be in them)::

    python benchmarks/bench_public.py --harness PATH/neuralmind \\
        --repo requests=PATH/requests --repo click=PATH/click \\
        --repo flask=PATH/flask --repo rich=PATH/rich [--only click] [--budget neuralmind]

A path may be a work tree or a bare git directory. Nothing is tuned here: the evaluator's
systems are the ones ``evaluate`` runs, and the questions are the harness's pre-registered
ones.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from benchlib import make_checkout, run_cli, table
from suitelib import REPO

sys.path.insert(0, str(REPO))

from evaluator.core.universe import select_universe
from evaluator.model import ModelSource, assemble_packaged
from evaluator.neuralmind_index import NeuralMindIndex
from evaluator.refsystems import embedding, grep
from evaluator.refsystems.embedding import EmbeddingIndex
from evaluator.refsystems.grep import GrepIndex
from evaluator.refsystems.indexsearch import IndexSearch
from evaluator.snapshot import checkout_files

SYSTEMS = "neuralmind,bm25,embedding,embedding:chunks=code,grep,full-file,oracle"
CODE = "embedding:chunks=code"


def export(repo: Path, commit: str, subdir: str, dest: Path) -> Path:
    """``subdir`` of ``commit`` in the git repository ``repo``, written under ``dest``."""
    data = subprocess.run(["git", f"--git-dir={git_dir(repo)}", "archive", "--format=tar",
                           commit, subdir], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        archive.extractall(dest, filter="data")
    return dest / subdir


def git_dir(path: Path) -> Path:
    return path / ".git" if (path / ".git").exists() else path


def load_harness(clone: Path, work: Path) -> tuple[dict[str, Any], Any, Any]:
    """The manifest and the harness's ``backends`` and ``run`` modules, exported from
    ``clone``'s HEAD into ``work`` and imported from there."""
    export(clone, "HEAD", "evals/public", work)
    (work / "evals" / "__init__.py").touch()
    sys.path.insert(0, str(work))
    backends = importlib.import_module("evals.public.backends")
    run = importlib.import_module("evals.public.run")
    manifest = json.loads((work / "evals" / "public" / "manifest.json").read_text())
    return manifest, backends, run


def harness_side(repo: dict[str, Any], src: Path, backends: Any, run: Any,
                 model: Path) -> dict[str, dict[str, list[str]]]:
    """Per question, the files each harness backend puts in context."""
    os.environ["NEURALMIND_SYNAPSE_INJECT"] = "0"  # as run_all pins it
    os.environ["NEURALMIND_ONNX_MODEL_DIR"] = str(model)
    files = backends.RepoFiles.load(src)
    with contextlib.redirect_stdout(sys.stderr):
        nm = run._build_nm(src)
    if nm is None:
        raise SystemExit(f"{repo['name']}: the harness's NeuralMind build failed")
    out = {}
    for q in repo["queries"]:
        rg = backends.run_ripgrep(q["id"], q["question"], q["gold_files"], files)
        rag = backends.run_embedding_rag(q["id"], q["question"], q["gold_files"], nm)
        out[q["id"]] = {"ripgrep": rg.context_files, "embedding-rag": rag.context_files}
    return out


def gold_paths(repo: dict[str, Any], files: tuple[str, ...]) -> dict[str, list[str]]:
    """Each question's gold files as checkout paths (the manifest names them by basename,
    as the harness keys its files)."""
    by_name: dict[str, str] = {}
    for f in files:
        by_name.setdefault(Path(f).name, f)
    return {q["id"]: [by_name[g] for g in q["gold_files"]] for q in repo["queries"]}


def evaluator_side(repo: dict[str, Any], checkout: Path, work: Path, model: Path,
                   budget: str | None = None
                   ) -> tuple[dict[str, dict[str, list[str]]], dict[str, Any], list[str]]:
    """Per question, the files ``grep`` and ``embedding`` put in context, the run's
    results (at ``budget`` when given), and with a budget the ``system/question`` rankings
    that differ from a run without it."""
    files = tuple(f for f in checkout_files(checkout) if f != "retrieval_queries.json")
    gold = gold_paths(repo, files)
    queries = [{"id": q["id"], "question": q["question"],
                "shape": q.get("shape", "focused"),
                "relevance_grades": dict.fromkeys(gold[q["id"]], 3),
                "gold_facts": q["oracle_symbol"].split(" + ")}
               for q in repo["queries"]]
    (checkout / "retrieval_queries.json").write_text(json.dumps({"queries": queries}))
    make_checkout(checkout, f"{repo['name']} {repo['commit'][:12]}")
    cache = work / "cache"
    argv = ["evaluate", str(checkout), "--systems", SYSTEMS, "--cache-dir", str(cache),
            "--quiet"]
    result = run_cli([*argv, *(["--budget", budget] if budget else [])], work / "out")
    blocks = {b["label"]: b for b in result.results["systems"]}
    changed: list[str] = []
    if budget:
        free = run_cli(argv, work / "out-unbudgeted").results["systems"]
        changed = [f"{b['label']}/{q['id']}" for b in free
                   for q, r in zip(b["queries"], blocks[b["label"]]["queries"], strict=True)
                   if q["ranked_modules"] != r["ranked_modules"]]
    # The run's embedding ranks (and embeds) the module universe's files only.
    modules = select_universe(files).modules
    if len(modules) != result.results["run"]["universe"]["modules"]:
        raise SystemExit(f"{repo['name']}: the universe differs from the run's")
    index = EmbeddingIndex(checkout, modules, model=ModelSource(model, "env"),
                           cache_dir=cache)
    shadowed = GrepIndex(checkout, harness_files(checkout))
    build = run_build(cache, model)
    searcher = IndexSearch(modules, index=build, depth=result.results["run"]["depth"])
    out: dict[str, dict[str, list[str]]] = {}
    try:
        for q in repo["queries"]:
            row = {name: next(r for r in blocks[name]["queries"] if r["id"] == q["id"])
                   for name in ("embedding", CODE, "grep")}
            order = index.rank(q["question"])
            ranked = list(dict.fromkeys(index.chunks[i].module for i in order))
            if ranked[:len(row[CODE]["ranked_modules"])] != row[CODE]["ranked_modules"]:
                raise SystemExit(f"{q['id']}: the {CODE} ranking differs from the run's")
            hits, searched = searcher.ranking(q["question"])
            if [m for m in searched if m in modules] != row["embedding"]["ranked_modules"]:
                raise SystemExit(f"{q['id']}: the embedding ranking differs from the run's")
            out[q["id"]] = {
                "grep": row["grep"]["ranked_modules"][:grep.CONTEXT_FILES],
                "embedding": list(dict.fromkeys(h.module for h in hits if h.module)),
                CODE: list(dict.fromkeys(index.chunks[i].module
                                         for i in order[:embedding.TOP_CHUNKS])),
                "grep on its files": list(shadowed.ask(q["question"]).ranked_modules[
                    :grep.CONTEXT_FILES])}
    finally:
        build.close()
    return out, result.results, changed


def run_build(cache: Path, model: Path) -> NeuralMindIndex:
    """The NeuralMind build the run left in ``cache`` (its head snapshot), opened to be
    searched: the one the run's ``embedding`` searched."""
    stamps = list(cache.glob("snapshots/**/.neuralmind/retrieval-eval-index.json"))
    if len(stamps) != 1:
        raise SystemExit(f"expected one NeuralMind build in {cache}, found {len(stamps)}")
    build = NeuralMindIndex(stamps[0].parent.parent, backend="auto", graph_source="builtin",
                            model=ModelSource(model, "env"))
    with build._library():
        build._mind = build._new_mind(io.StringIO())
    return build


def harness_files(checkout: Path) -> list[str]:
    """The files the harness's ``RepoFiles.load`` reads, as checkout paths: every ``*.py``
    but ``test_*``, keyed by basename, so that of two files with one name the later path
    (in sorted order) is the one it reads: flask's ``sansio/app.py`` for ``app.py``."""
    kept: dict[str, Path] = {}
    for path in sorted(checkout.rglob("*.py")):
        if not path.name.startswith("test_"):
            kept[path.name] = path
    return sorted(p.relative_to(checkout).as_posix() for p in kept.values())


def found(context: list[str], gold: list[str]) -> bool:
    return set(gold) <= {Path(f).name for f in context}


def short(files: list[str]) -> str:
    return ", ".join(Path(f).name for f in files[:5]) or "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--harness", type=Path, required=True,
                        help="a clone of github.com/dfrostar/neuralmind")
    parser.add_argument("--repo", action="append", default=[], metavar="NAME=PATH",
                        help="a clone of a manifest repository (with its pinned commit)")
    parser.add_argument("--only", help="one repository of the manifest")
    parser.add_argument("--budget", metavar="N|neuralmind",
                        help="passed to evaluate: every system's context cut to this budget")
    args = parser.parse_args()
    clones = dict(item.split("=", 1) for item in args.repo)
    work = Path(tempfile.mkdtemp(prefix="bench-public-"))
    model = assemble_packaged(work / "model-cache")
    if model is None:
        raise SystemExit("install the model extra (the real MiniLM model)")
    manifest, backends, run = load_harness(args.harness, work / "harness")
    pairs = (("ripgrep", "grep"), ("embedding-rag", "embedding"), ("embedding-rag", CODE),
             ("ripgrep", "grep on its files"))
    agree = dict.fromkeys(pairs, 0)
    total = 0
    rows, summaries, changed = [], [], []
    for repo in manifest["repos"]:
        if (args.only and repo["name"] != args.only) or repo["name"] not in clones:
            continue
        clone = Path(clones[repo["name"]])
        src = export(clone, repo["commit"], repo["subdir"], work / "h" / repo["name"])
        theirs = harness_side(repo, src, backends, run, model)
        checkout = export(clone, repo["commit"], repo["subdir"], work / "e" / repo["name"])
        checkout = checkout.rename(work / "e" / f"{repo['name']}-checkout")
        mine, results, moved = evaluator_side(repo, checkout, work / "e" / repo["name"],
                                              model, args.budget)
        changed += moved
        for q in repo["queries"]:
            gold, total = q["gold_files"], total + 1
            row: list[object] = [f"{repo['name']}/{q['id']}"]
            for harness_backend, system in pairs:
                a = found(theirs[q["id"]][harness_backend], gold)
                b = found(mine[q["id"]][system], gold)
                agree[(harness_backend, system)] += a == b
                row += [f"{'found' if a else 'MISSED'} / {'found' if b else 'MISSED'}"
                        + ("" if a == b else " ≠")]
            rows.append(row)
            if any(found(theirs[q["id"]][h], gold) != found(mine[q["id"]][s], gold)
                   for h, s in pairs):
                print(f"{repo['name']}/{q['id']} (gold {', '.join(gold)}): "
                      + "; ".join(f"{h} {short(theirs[q['id']][h])} | {s} "
                                  f"{short(mine[q['id']][s])}" for h, s in pairs))
        for block in results["systems"]:
            m = block["overall"]["metrics"]
            summaries.append([f"{repo['name']} {block['label']}", *(
                "-" if m[k] is None else f"{m[k]:.3f}"
                for k in ("recall@5", "ndcg@5", "mrr", "acc@5", "faithfulness")),
                f"{m['context_tokens']:.0f}"])
    print()
    print(table(["question", "ripgrep / grep", "embedding-rag / embedding",
                 f"embedding-rag / {CODE}", "ripgrep / grep on the harness's files"], rows))
    print()
    for (h, s), n in agree.items():
        print(f"{h} vs {s}: agree on {n} of {total} questions ({n / max(total, 1):.0%})")
    if args.budget:
        print(f"rankings with --budget {args.budget} = without: "
              f"{'all' if not changed else 'NOT ' + ', '.join(changed)}")
    print()
    print(table(["repository system", "recall@5", "nDCG@5", "MRR@5", "acc@5", "faithfulness",
                 "context tokens"], summaries))
    if args.budget:
        print(f"(every system at --budget {args.budget})")
    print(f"\n(work folder {work})")


if __name__ == "__main__":
    main()
