"""The askability score (``evaluator/core/askability.py``) against the cold reviews.

The history route judges 3 × ``--count`` candidates and drafts the ``--count`` with the
highest askability, the log-odds of a reviewer keeping a question as drafted under a
logistic model of its subject and grades. This prints, from ``benchmarks/init_review/``:

* the weights fitted (L2-regularised logistic regression, Newton's method) on the tuning
  reviews, next to the rounded weights the module ships;
* leave one review out: fitted on the others, the share kept unedited among each review's
  top 5, 7, 10 and 20 questions by score (20 = all: the baseline), and the share of
  cross-file questions among them;
* the twelfth to sixteenth reviews (held out, paired): the drafts of the tool before
  round 14 and with it, on the same three repositories each, read by the same reviewer in
  one blind pass.

The tuning reviews are every review before round 14 (the ``fresh12-*`` to ``fresh16-*``
files are held out); say so when quoting the figures::

    python benchmarks/bench_askability.py
"""

from __future__ import annotations

from typing import Any

import bench_history_review as review_bench
import numpy as np

from evaluator.core.askability import WEIGHTS, features

HELD_OUT = ("fresh12-", "fresh13-", "fresh14-", "fresh15-", "fresh16-")
NAMES = ("intercept", "two modules", "three or more", "five or more", "short subject",
         "behaviour verb", "code verb", "code span")


def _matrix(questions: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    x = np.array([features(q["question"], q["grades"]) for q in questions], dtype=float)
    y = np.array([q["verdict"] == "keep" for q in questions], dtype=float)
    return x, y


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 50) -> np.ndarray:
    """Logistic regression weights by Newton's method, with an L2 penalty ``l2``."""
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-x @ w))
        gradient = x.T @ (p - y) + l2 * w
        hessian = x.T @ (x * (p * (1 - p))[:, None]) + l2 * np.eye(len(w))
        w -= np.linalg.solve(hessian, gradient)
    return w


def main() -> None:
    reviews = [(path.name, doc) for path, doc in review_bench._reviews(None)]
    tuning = [(name, doc) for name, doc in reviews if not name.startswith(HELD_OUT)]
    questions = [q for _, doc in tuning for q in doc["questions"]]
    x, y = _matrix(questions)
    fitted = fit(x, y)
    print(f"tuning: {len(tuning)} reviews, {len(questions)} questions, "
          f"{int(y.sum())} kept unedited ({y.mean():.0%})")
    print(f"{'weight':16} {'fitted':>7} {'shipped':>8}")
    for name, w, shipped in zip(NAMES, fitted, WEIGHTS, strict=True):
        print(f"{name:16} {w:7.2f} {shipped:8.2f}")

    print("\nleave one review out (fitted on the others): kept unedited among each review's "
          "top k by score")
    tops = (5, 7, 10, 20)
    kept = dict.fromkeys(tops, 0)
    shown = dict.fromkeys(tops, 0)
    cross = dict.fromkeys(tops, 0)
    for name, doc in tuning:
        rest = [q for other, d in tuning if other != name for q in d["questions"]]
        w = fit(*_matrix(rest))
        own_x, own_y = _matrix(doc["questions"])
        order = sorted(range(len(own_y)), key=lambda i: (-float(own_x[i] @ w), i))
        for k in tops:
            top = order[:k]
            kept[k] += int(own_y[top].sum())
            shown[k] += len(top)
            cross[k] += sum(doc["questions"][i]["shape"] == "cross-file" for i in top)
    for k in tops:
        print(f"  top {k:2}: {kept[k]}/{shown[k]} kept ({kept[k] / shown[k]:.0%}), "
              f"cross-file {cross[k] / shown[k]:.0%}")

    for prefix in HELD_OUT:
        held = [doc for name, doc in reviews if name.startswith(prefix)]
        if held:
            _paired(prefix.rstrip("-"), held)


def _paired(review: str, held: list[dict[str, Any]]) -> None:
    """A paired held-out review's figures: round 13's draft against round 14's."""
    print(f"\n{review} (held out, paired: one blind reading of both drafts)")
    totals = {"before": [0, 0, 0, 0], "round 14": [0, 0, 0, 0]}
    for doc in held:
        for label, part in (("before", doc["supplementary_review"]), ("round 14", doc)):
            qs = part["questions"]
            row = [sum(q["verdict"] == "keep" for q in qs),
                   sum(q["verdict"] != "reject" for q in qs), len(qs),
                   sum(q["shape"] == "cross-file" for q in qs)]
            totals[label] = [a + b for a, b in zip(totals[label], row, strict=True)]
            print(f"  {doc['repository']:24} {label:9} kept {row[0]}/{row[2]}, usable "
                  f"{row[1]}, cross-file {row[3]}")
    for label, (k, usable, n, c) in totals.items():
        print(f"  {'all three':24} {label:9} kept {k}/{n} ({k / n:.0%}), usable {usable}, "
              f"cross-file {c}")

if __name__ == "__main__":
    main()
