"""The askability score (``evaluator/core/askability.py``) against the cold reviews.

The history route judges :data:`~evaluator.core.askability.POOL_FACTOR` × ``--count``
candidates and drafts the ``--count`` with the highest askability, the log-odds of a
reviewer keeping a question as drafted under a logistic model of its subject and grades.
The score is fitted on the questions a reviewer read **that the rules of today still let
through**: for every review of ``benchmarks/init_review/`` (history route), this drafts the
review's repository at its evaluated commit with today's rules and a pool of
``--pool-factor`` × 20 candidates, and keeps the pool's questions whose source commit the
review gave a verdict (the draft's own text and grades are the features; a commit the rules
now skip is left out: the score never sees it). It prints:

* the weights fitted (L2-regularised logistic regression, Newton's method) on those
  questions, next to the rounded weights the module ships;
* **leave one repository out** (a repository reviewed twice is left out whole): fitted on
  the others, the share kept unedited among each review's top 5, 7, 10 and all of its
  scored questions (all = the baseline), the cross-file share among them, and the AUC of
  the score pooled over the held-out repositories;
* the same for the weights shipped before round 16 (four features, fitted on reviews 1–11).

Every review up to the nineteenth (``fresh18-*``) is tuning data for the weights of round
16; say so when quoting the figures. Drafting takes a while (every review's repository is
drafted once, about 15 minutes on two cores), so ``--pool FILE`` keeps the pools: written
when absent, read when present::

    python benchmarks/bench_askability.py --clones /tmp/clones --pool /tmp/pool.json

``--clones DIR`` holds one clone per repository, named as the repository (see
``bench_history_review.py``); each is checked out at its review's evaluated commit.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import bench_history_review as review_bench
import numpy as np

import evaluator.authoring as authoring
from evaluator.core import askability as score

NAMES = ("intercept", "two modules", "three or more", "five or more", "short subject",
         "behaviour verb", "code verb", "code span", "condition", "dotted name")
#: The weights of round 14 (fitted on reviews 1–11), over the first eight features.
ROUND_14 = (0.5, -0.6, -1.3, -1.3, -0.9, 0.7, -1.0, -0.5, 0.0, 0.0)
Features = Callable[[dict[str, Any]], Sequence[float]]


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 50) -> np.ndarray:
    """Logistic regression weights by Newton's method, with an L2 penalty ``l2``."""
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-x @ w))
        gradient = x.T @ (p - y) + l2 * w
        hessian = x.T @ (x * (p * (1 - p))[:, None]) + l2 * np.eye(len(w))
        w -= np.linalg.solve(hessian, gradient)
    return w


def auc(scores: Sequence[float], kept: Sequence[bool]) -> float:
    """The chance a kept question scores above one not kept (ties count half)."""
    pos = [s for s, k in zip(scores, kept, strict=True) if k]
    neg = [s for s, k in zip(scores, kept, strict=True) if not k]
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def draft_pools(clones: Path, factor: int) -> dict[str, list[dict[str, Any]]]:
    """Every review's pool: today's rules, ``factor`` × 20 candidates, at its commit."""
    pools: dict[str, list[dict[str, Any]]] = {}
    original_factor, original_candidate = authoring.POOL_FACTOR, authoring.history_candidate
    authoring.POOL_FACTOR = factor
    try:
        for path, review in review_bench._reviews(None):
            clone = clones / review["repository"].split("/")[-1]
            subprocess.run(["git", "-C", str(clone), "checkout", "-q", "--detach",
                            review["evaluated_commit"]], check=True)
            pool: list[dict[str, Any]] = []

            def keep(found: Any, judged: Any, texts: Any, _pool: list[dict[str, Any]] = pool
                     ) -> Any:
                made = original_candidate(found, judged, texts)
                _pool.append({"sha": found.commit.sha, "question": made.question,
                              "grades": dict(made.grades), "shape": made.shape,
                              "facts": list(made.facts)})
                return made

            authoring.history_candidate = keep
            review_bench.draft_at_review(clone, review, 20)
            pools[path.stem] = pool
            print(f"  drafted {path.stem}: {len(pool)} candidates", flush=True)
    finally:
        authoring.POOL_FACTOR, authoring.history_candidate = original_factor, original_candidate
    return pools


def labelled(pools: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The pools' questions a review gave a verdict, each with its review, repository and
    ``kept`` (unedited). A commit read twice in one review (a paired review's two drafts)
    takes the verdict on the newer tool's draft."""
    out = []
    for path, review in review_bench._reviews(None):
        verdicts: dict[str, str] = {}
        older = review.get("supplementary_review")
        for part in ([older] if isinstance(older, dict) else []) + [review]:
            for q in part.get("questions", []):
                if "verdict" in q:
                    verdicts[q["source_commit"]] = q["verdict"]
        for entry in pools.get(path.stem, []):
            if entry["sha"] in verdicts:
                out.append({**entry, "review": path.stem, "repository": review["repository"],
                            "kept": verdicts[entry["sha"]] == "keep"})
    return out


def _x(entry: dict[str, Any]) -> list[float]:
    return list(score.features(entry["question"], entry["grades"]))


def leave_one_repository_out(rows: list[dict[str, Any]],
                             weights: np.ndarray | None = None) -> None:
    """Each repository scored by weights fitted on the others (or by ``weights``)."""
    tops = (5, 7, 10, 0)
    kept, shown, cross = (dict.fromkeys(tops, 0) for _ in range(3))
    scores: list[float] = []
    labels: list[bool] = []
    for repository in sorted({r["repository"] for r in rows}):
        rest = [r for r in rows if r["repository"] != repository]
        w = weights if weights is not None else fit(
            np.array([_x(r) for r in rest]), np.array([float(r["kept"]) for r in rest]))
        for review in sorted({r["review"] for r in rows if r["repository"] == repository}):
            own = [r for r in rows if r["review"] == review]
            own_scores = [float(np.dot(_x(r), w)) for r in own]
            scores += own_scores
            labels += [r["kept"] for r in own]
            order = sorted(range(len(own)), key=lambda i: (-own_scores[i], i))
            for k in tops:
                top = order[:k] if k else order
                kept[k] += sum(own[i]["kept"] for i in top)
                shown[k] += len(top)
                cross[k] += sum(own[i]["shape"] == "cross-file" for i in top)
    for k in tops:
        print(f"  top {k or 'all':>3}: {kept[k]}/{shown[k]} kept ({kept[k] / shown[k]:.0%}), "
              f"cross-file {cross[k] / shown[k]:.0%}")
    print(f"  AUC {auc(scores, labels):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clones", type=Path, required=True)
    parser.add_argument("--pool", type=Path, required=True,
                        help="the drafted pools: written when absent, read when present")
    parser.add_argument("--pool-factor", type=int, default=score.POOL_FACTOR)
    args = parser.parse_args()
    if args.pool.exists():
        pools = json.loads(args.pool.read_text(encoding="utf-8"))
    else:
        pools = draft_pools(args.clones, args.pool_factor)
        args.pool.write_text(json.dumps(pools), encoding="utf-8")
    rows = labelled(pools)
    x = np.array([_x(r) for r in rows])
    y = np.array([float(r["kept"]) for r in rows])
    print(f"{sum(map(len, pools.values()))} candidates in {len(pools)} reviews' pools; "
          f"{len(rows)} reviewed, {int(y.sum())} kept unedited ({y.mean():.0%})")
    print(f"{'weight':16} {'fitted':>7} {'shipped':>8} {'round 14':>9}")
    for name, w, shipped, old in zip(NAMES, fit(x, y), score.WEIGHTS, ROUND_14, strict=True):
        print(f"{name:16} {w:7.2f} {shipped:8.2f} {old:9.2f}")
    print("\nleave one repository out (fitted on the others): kept unedited among each "
          "review's top k by score")
    leave_one_repository_out(rows)
    print("\nthe shipped weights")
    leave_one_repository_out(rows, np.array(score.WEIGHTS))
    print("\nround 14's weights")
    leave_one_repository_out(rows, np.array(ROUND_14))


if __name__ == "__main__":
    main()
