"""Does the faithfulness judge tell right context from wrong? Prints the separation tables.

For every question of every suite (the bundled example and ``benchmarks/suites/*``), two
contexts are judged against its gold facts:

* **right**: the full source of its modules of grade ≥ 2, best grade first;
* **wrong**: the full source of a grade-3 module of *another* question, one this question
  grades 0 (the next such question in file order).

``separation`` = mean score on right − mean score on wrong. Goals (issue 12): ≥ 0.9 on the
example, ≥ 0.8 on every real suite, mean wrong ≤ 0.1.

Columns: the N-15 judge (``neuralmind.ragas``: faithfulness and fact recall), the
evaluator's judge (``evaluator.core.judge``) by its terms rule alone (what a run without the
model gets), and with the MiniLM model (on unless ``--no-embed``): the headline judge (terms
and the similarity route for prose facts), the fact-vs-segment similarity judge over every
segment, lexical-or-similarity (``faithfulness_embed``), the new ``context_recall`` /
``context_precision`` and the N-15 embedding columns.

First, the agreement with people on the labelled sets of ``benchmarks/judge_agreement``
(:mod:`judge_agreement`: precision and recall against the labels, false-version credit,
decoy credit and paraphrase recall, on the held-out part and on the tuning part, each in
all and per package), for the
terms rule and the headline judge with the model; ``--before REF`` adds the judge as it was
at git revision ``REF`` (e.g. the previous judge) for a before/after table.

Per suite, also the false versions of the facts (the self-check's) and shuffled-word decoys
credited, for this judge and the ``--before`` one.

``--grid`` adds the calibration grid (stretch lines × coverage threshold × idf weights).
The judge's share of an evaluation's wall time is printed by ``bench_systems.py``.

Run from the repository root: ``/work/venv/bin/python benchmarks/bench_judge.py``.
Nothing is asserted; figures are printed.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

from suitelib import DEFAULT_CACHE, REPO, Suite, load_suite, suite_names

sys.path.insert(0, str(REPO))

from benchlib import table as plain_table
from judge_agreement import HEADERS, load, report

from evaluator.core.groundtruth import Query
from evaluator.core.judge import (
    FACT_SIMILARITY_THRESHOLD,
    JUDGE_VERSION,
    JudgeConfig,
    idf_weights,
    judge,
)
from evaluator.core.judgecheck import check_pairs
from evaluator.core.judgevectors import max_similarities
from evaluator.judging import embed_segments, n15_columns, similarity_of

TEXT_SUFFIXES = (".py", ".md", ".rst", ".txt", ".toml", ".cfg", ".yaml", ".yml", ".json")


def read(root: Path, module: str) -> str:
    return (root / module).read_text(encoding="utf-8", errors="replace")


def contexts(suite: Suite) -> list[tuple[Query, tuple[str, list[str]], tuple[str, list[str]]]]:
    """Per query: (right text, its modules' texts), (wrong text, [wrong text]) — the pairs of
    the evaluator's own self-check (:func:`evaluator.core.judgecheck.check_pairs`)."""
    pairs, skipped = check_pairs(suite.ground_truth)
    if skipped:
        print(f"{suite.name}: skipped (no right or no wrong module): {', '.join(skipped)}")
    out = []
    for pair in pairs:
        docs = [read(suite.root, m) for m in pair.right_modules]
        wrong = read(suite.root, pair.wrong_module)
        out.append((pair.query, ("\n\n".join(docs), docs), (wrong, [wrong])))
    return out


def corpus(root: Path) -> list[str]:
    files = [p for p in sorted(root.rglob("*")) if p.is_file() and p.suffix in TEXT_SUFFIXES
             and ".neuralmind" not in p.parts]
    return [p.read_text(encoding="utf-8", errors="replace") for p in files]


Scorer = Callable[[Query, str, list[str]], float]


def table(rows: Sequence[tuple[str, list[float], list[float]]], title: str) -> None:
    print(f"\n{title}")
    print(f"| {'column':<52} | right | wrong | separation |")
    print(f"|{'-' * 54}|-------|-------|------------|")
    for name, right, wrong in rows:
        r, w = statistics.fmean(right), statistics.fmean(wrong)
        print(f"| {name:<52} | {r:5.2f} | {w:5.2f} | {r - w:10.2f} |")


def suite_rows(suite: Suite, embed: Callable[[Sequence[str]], list[list[float]]] | None,
               grid: bool, columns: bool = True, before: tuple[str, ModuleType] | None = None,
               ) -> list[tuple[str, list[float], list[float]]]:
    pairs = contexts(suite)
    scorers: dict[str, Scorer] = {
        "faithfulness_n15 (neuralmind.ragas)":
            lambda q, ctx, docs: n15_columns(ctx, q.gold_facts)[0],
        "fact_recall_n15": lambda q, ctx, docs: n15_columns(ctx, q.gold_facts)[1],
        "faithfulness, terms rule alone (in_memory)":
            lambda q, ctx, docs: judge(ctx, q.gold_facts).faithfulness,
    }
    if before is not None:
        ref, old = before
        scorers[f"faithfulness, judge at {ref}, terms rule alone"] = (
            lambda q, ctx, docs: old.judge(ctx, q.gold_facts).faithfulness)
    if embed is not None:
        similar = similarity_of(embed)
        scorers["faithfulness (headline: terms + similarity route)"] = (
            lambda q, ctx, docs: judge(ctx, q.gold_facts, similar=similar).faithfulness)
    if grid:
        weights = idf_weights(corpus(suite.root))
        for span in (6, 10, 15):
            for threshold in (0.5, 0.6, 0.7, 0.8):
                for idf in (False, True):
                    cfg = JudgeConfig(stretch_lines=span, coverage_threshold=threshold)
                    w = weights if idf else None
                    label = f"grid lines={span} t={threshold} idf={'y' if idf else 'n'}"
                    scorers[label] = (lambda q, ctx, docs, cfg=cfg, w=w:
                                      judge(ctx, q.gold_facts, config=cfg,
                                            weights=w).faithfulness)
    rows = []
    for name, scorer in scorers.items():
        rows.append((name, [scorer(q, r[0], r[1]) for q, r, _ in pairs],
                     [scorer(q, w[0], w[1]) for q, _, w in pairs]))
    if embed is not None and columns:
        rows += embed_rows(pairs, embed)
    return rows


def embed_rows(pairs: list[tuple[Query, tuple[str, list[str]], tuple[str, list[str]]]],
               embed: Callable[[Sequence[str]], list[list[float]]],
               ) -> list[tuple[str, list[float], list[float]]]:
    """The embedding columns. Each text's segments are embedded once (cached), then every
    column is computed from the vectors, the way ``evaluator.judging`` defines it."""
    from neuralmind import ragas

    cache: dict[str, list[list[float]]] = {}
    similar = similarity_of(embed)

    def vectors(text: str) -> list[list[float]]:
        if text not in cache:
            pieces = list(embed_segments(text))
            cache[text] = embed(pieces) if pieces else []
        return cache[text]

    whole: dict[str, list[float]] = {}

    def single(text: str) -> list[float]:  # N-15 embeds whole texts (the model truncates)
        if text not in whole:
            whole[text] = embed([text])[0]
        return whole[text]

    names = ("MiniLM max-sim fact recall ≥ 0.4", "MiniLM max-sim fact recall ≥ 0.5",
             "MiniLM max-sim fact recall ≥ 0.6", "context_precision (new, docs = modules)",
             "faithfulness_embed (headline judge or sim ≥ 0.5)", "context_precision_n15",
             "context_recall_n15", "answer_relevance_n15")
    cols: dict[str, tuple[list[float], list[float]]] = {n: ([], []) for n in names}
    for q, right, wrong in pairs:
        fact_vectors = embed(list(q.gold_facts))
        for side, (ctx, docs) in enumerate((right, wrong)):
            sims = max_similarities(fact_vectors, vectors(ctx))
            for t in (0.4, 0.5, 0.6):
                cols[f"MiniLM max-sim fact recall ≥ {t}"][side].append(
                    sum(x >= t for x in sims) / len(sims))
            per_doc = [max_similarities(fact_vectors, vectors(d)) for d in docs]
            cols["context_precision (new, docs = modules)"][side].append(
                sum(sum(x >= 0.5 for x in s) / len(s) for s in per_doc) / len(per_doc))
            verdict = judge(ctx, q.gold_facts, similar=similar)  # as the evaluator does
            combo = [(f.found or sim >= 0.5) and not f.contradicted  # as evaluator.judging
                     for f, sim in zip(verdict.facts, sims, strict=True)]
            cols["faithfulness_embed (headline judge or sim ≥ 0.5)"][side].append(
                sum(combo) / len(combo))
            old = ragas.score(query=q.question, retrieved=docs, answer=ctx,
                              gold_facts=list(q.gold_facts), embed_fn=single)
            cols["context_precision_n15"][side].append(old.context_precision or 0)
            cols["context_recall_n15"][side].append(old.context_recall or 0)
            cols["answer_relevance_n15"][side].append(old.answer_relevance or 0)
    return [(name, r, w) for name, (r, w) in cols.items()]


DECOY_SEEDS = 8


def adversarial(suite: Suite, judges: Sequence[tuple[str, Callable[..., object]]]) -> None:
    """Per judge (terms rule), on the suite's facts each judge credits on their right
    source: the self-check's false versions (:func:`evaluator.core.judgecheck.false_versions`)
    credited on that source, and decoys (:func:`judge_agreement.decoy_of`, the fact's words
    shuffled, :data:`DECOY_SEEDS` seeds each) credited as the context."""
    from judge_agreement import decoy_of

    from evaluator.core.judgecheck import false_versions

    print(f"\n{suite.name}: false versions and decoys of the facts credited on the right source")
    for name, judge_fn in judges:
        def credited(context: str, fact: str, j: Callable[..., object] = judge_fn) -> bool:
            return getattr(j(context, [fact]), "faithfulness", 0.0) == 1.0

        facts = [(q, right[0], f) for q, right, _ in contexts(suite) for f in q.gold_facts]
        true = [(ctx, f) for _, ctx, f in facts if credited(ctx, f)]
        false = [credited(ctx, v) for ctx, f in true for v in false_versions(f)]
        decoys = [credited(decoy_of(f, seed=n * 7919 + sum(map(ord, f))), f)
                  for _, f in true for n in range(DECOY_SEEDS)]
        print(f"  {name}: {len(true)} of {len(facts)} facts credited; false versions "
              f"{sum(false)}/{len(false)}; decoys {sum(decoys)}/{len(decoys)}")


def calibration(suite: Suite, embed: Callable[[Sequence[str]], list[list[float]]]) -> None:
    """The similarity threshold's calibration rule, shown on ``suite``: the highest cosine of
    a prose fact the route asks about with its candidate in *another* question's source;
    the threshold is the smallest 0.01 step above it on the bundled example."""
    asked: list[float] = []
    inner = similarity_of(embed)

    def recording(pairs: Sequence[tuple[str, str]]) -> list[float]:
        cosines = list(inner(pairs))
        asked.extend(cosines)
        return cosines

    for q, _right, (wrong, _docs) in contexts(suite):
        judge(wrong, q.gold_facts, similar=recording)
    top = max(asked, default=0.0)
    step = math.floor(top * 100 + 1) / 100
    print(f"\ncalibration on {suite.name}: {len(asked)} prose facts asked on another "
          f"question's source, highest cosine {top:.3f} → threshold {step:.2f} "
          f"(in use: {FACT_SIMILARITY_THRESHOLD})")


# The judge's modules, each importing only those before it (and the rest of the evaluator).
JUDGE_MODULES = ("judgetext", "judgeread", "judgeorder", "judgevectors", "judge")


def old_judge(ref: str) -> ModuleType:
    """``evaluator/core/judge.py`` as it was at git revision ``ref``, loaded as a module
    with the judge's other modules (:data:`JUDGE_MODULES`) as they were there too: each is
    put in ``sys.modules`` under its own name while the next ones load, then the current
    ones are put back (the loaded modules keep their references to each other)."""
    listed = subprocess.run(["git", "-C", str(REPO), "ls-tree", "--name-only", ref,
                             "evaluator/core/"], check=True, capture_output=True,
                            text=True).stdout.split()
    saved = {name: sys.modules.get(f"evaluator.core.{name}") for name in JUDGE_MODULES}
    module = ModuleType(f"judge_at_{ref}")
    try:
        for name in JUDGE_MODULES:
            path = f"evaluator/core/{name}.py"
            if path not in listed:
                continue
            source = subprocess.run(["git", "-C", str(REPO), "show", f"{ref}:{path}"],
                                    check=True, capture_output=True, text=True).stdout
            module = ModuleType(f"evaluator.core.{name}")
            sys.modules[module.__name__] = module
            exec(compile(source, f"{ref}:{path}", "exec"), module.__dict__)
    finally:
        for name, current in saved.items():
            if current is None:
                sys.modules.pop(f"evaluator.core.{name}", None)
            else:
                sys.modules[f"evaluator.core.{name}"] = current
    return module


def agreement(cache: Path, embed: Callable[[Sequence[str]], list[list[float]]] | None,
              before: str | None) -> None:
    """The agreement tables (module :mod:`judge_agreement`)."""
    pairs, probes = load(cache)
    judges: dict[str, Callable[[Sequence[tuple[str, str]]], list[bool]]] = {}
    modules = [(f"judge {JUDGE_VERSION} (this)", judge)]
    if before:
        old = old_judge(before)
        modules.append((f"judge at {before}", old.judge))
    for name, judge_fn in modules:
        judges[f"{name}, terms"] = (lambda items, j=judge_fn: [
            j(c, [f]).faithfulness == 1.0 for c, f in items])
        if embed is not None:
            similar = similarity_of(embed)
            judges[f"{name}, terms + MiniLM"] = (lambda items, j=judge_fn, s=similar: [
                j(c, [f], similar=s).faithfulness == 1.0 for c, f in items])
    packages = sorted({(p.split, p.package) for p in pairs})
    print("## Agreement with labels (benchmarks/judge_agreement)")
    print("packages: " + ", ".join(f"{pkg} ({split})" for split, pkg in packages))
    for split in ("held-out", "tuning"):
        names = [pkg for s, pkg in packages if s == split]
        if not names:
            print(f"\n{split}: no package")
            continue
        rows = [report(name, fn, pairs, probes, split) for name, fn in judges.items()]
        rows += [report(name, fn, pairs, probes, split, package)
                 for package in names for name, fn in judges.items()]
        print(f"\n### {split} ({', '.join(names)})")
        print(plain_table(HEADERS, rows))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", default=",".join(suite_names()))
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--no-embed", action="store_true")
    parser.add_argument("--grid", action="store_true")
    parser.add_argument("--before", metavar="REF", help="also the judge at git revision REF")
    parser.add_argument("--agreement-only", action="store_true")
    parser.add_argument("--no-agreement", action="store_true")
    parser.add_argument("--headline-only", action="store_true",
                        help="leave out the --embed columns (the slow part)")
    args = parser.parse_args(argv)
    embed = None
    if not args.no_embed:
        from evaluator.judging import minilm_embedder
        from evaluator.model import resolve_model
        from evaluator.neuralmind_index import cached_model_dir

        model = resolve_model(args.cache / "model-cache", os.environ,
                              cached_model_dir=cached_model_dir)
        os.environ.setdefault("NEURALMIND_ONNX_MODEL_DIR", str(model.path or ""))
        embed = minilm_embedder(model.path)
    if not args.no_agreement:
        t = time.perf_counter()
        agreement(args.cache, embed, args.before)
        print(f"({time.perf_counter() - t:.1f}s)")
    if args.agreement_only:
        return
    before = (args.before, old_judge(args.before)) if args.before else None
    for name in args.suites.split(","):
        suite = load_suite(name, args.cache)
        t = time.perf_counter()
        rows = suite_rows(suite, embed, args.grid, columns=not args.headline_only,
                          before=before)
        table(rows, f"## {suite.name}: {len(suite.ground_truth.queries)} questions "
                    f"({time.perf_counter() - t:.1f}s)")
        adversarial(suite, [(f"judge {JUDGE_VERSION} (this)", judge)]
                    + ([(f"judge at {before[0]}", before[1].judge)] if before else []))
        if embed is not None:
            calibration(suite, embed)


if __name__ == "__main__":
    main()
