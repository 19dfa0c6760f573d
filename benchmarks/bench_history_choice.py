"""Would choosing history questions by quality beat the newest-first order? (issue 24)

``init --from-history`` drafts the NEWEST candidates until ``--count`` is met. This asks
whether a score over features a drafted question carries (not word lists of its subject)
ranks the cold reviews' KEPT questions above the edited and rejected ones, in a repository
the score was not fitted on: **leave-one-repository-out**. For each repository reviewed
(``benchmarks/init_review/*.json`` of the history route; a repository reviewed twice is
left out whole), a logistic regression is fitted on the other repositories' reviewed
questions and scores the held-out one's; printed per held-out repository:

* the AUC of the score (kept vs not kept; 0.5 is chance), and of the draft's own order
  (newest first) for comparison;
* the kept share of the score's top half against the kept share of all its questions
  (what choosing the better half of twice as many candidates would give, were the other
  half like these).

Features, per question (its source commit read in the clone): a pull-request number in the
subject or a GitHub merge (``pr``), a merge commit (``merge``), graded modules (``graded``,
and ``many`` for more than 3), the question's words (``words``) and code-like tokens
(``code``: backticks, calls, ``_``, dots, inner capitals), facts drafted (``facts``), the
commit's changed module lines (``log_lines``), its body's length (``log_body``) and its
place in the draft (``position``, 0 for the newest). The reviews are the data the score
would be tuned on: every figure here is a held-out-repository figure of that tuning data::

    python benchmarks/bench_history_choice.py --clones /tmp/clones

``--clones DIR`` holds one clone per repository, named as the repository (see
``bench_history_review.py``).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

REVIEWS = Path(__file__).resolve().parent / "init_review"
FEATURES = ("pr", "merge", "graded", "many", "words", "code", "facts", "log_lines",
            "log_body", "position")
#: What the tool knows of a candidate when it judges it (``git log`` keeps only a body's
#: first line, and a draft's order is what the score would replace).
TOOL_FEATURES = FEATURES[:8]
_CODE = re.compile(r"`[^`]+`|\w+\(\)|\b\w+_\w+\b|\b\w+\.\w+\b|\b[a-z]+[A-Z]\w*|"
                   r"\b[A-Z][a-z]+[A-Z]\w*")


def _git(clone: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(clone), *args], capture_output=True, text=True,
                          check=True).stdout


def features(clone: Path, q: dict[str, Any], position: int) -> list[float]:
    sha = q["source_commit"]
    head = _git(clone, "log", "-1", "--format=%P%x00%s%x00%b", sha)
    parents, subject, body = head.split("\0", 2)
    graded = [m for m, g in q["grades"].items() if g]
    numstat = _git(clone, "show", "--numstat", "--format=", "-m", "--first-parent", sha)
    lines = 0
    for row in numstat.splitlines():
        parts = row.split("\t")
        if len(parts) == 3 and parts[0].isdigit() and any(
                parts[2].endswith(m.rsplit("/", 1)[-1]) for m in graded):
            lines += int(parts[0]) + int(parts[1])
    pr = bool(re.search(r"\(#\d+\)\s*$", subject) or subject.startswith("Merge pull request"))
    return [float(pr), float(len(parents.split()) > 1), float(len(graded)),
            float(len(graded) > 3), float(len(q["question"].split())),
            float(len(_CODE.findall(q["question"]))), float(q["facts"]),
            math.log1p(lines), math.log1p(len(body.strip())), float(position)]


def _fit(x: np.ndarray, y: np.ndarray, *, l2: float = 1.0, steps: int = 3000) \
        -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    mean, std = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = (x - mean) / std
    w = np.zeros(z.shape[1] + 1)
    zb = np.hstack([z, np.ones((len(z), 1))])
    for _ in range(steps):  # plain gradient descent on the L2-penalised log loss
        p = 1 / (1 + np.exp(-zb @ w))
        grad = zb.T @ (p - y) / len(y) + l2 * np.r_[w[:-1], 0] / len(y)
        w -= 0.5 * grad
    return w, mean, std


def _score(model: tuple[np.ndarray, np.ndarray, np.ndarray], x: np.ndarray) -> np.ndarray:
    w, mean, std = model
    return np.hstack([(x - mean) / std, np.ones((len(x), 1))]) @ w


def auc(scores: np.ndarray, y: np.ndarray) -> float:
    """The chance a kept question scores above a not-kept one (ties count half)."""
    pos, neg = scores[y == 1], scores[y == 0]
    if not len(pos) or not len(neg):
        return float("nan")
    wins = sum(float((p > neg).sum()) + 0.5 * float((p == neg).sum()) for p in pos)
    return wins / (len(pos) * len(neg))


def top_half(scores: np.ndarray, y: np.ndarray) -> float:
    order = sorted(range(len(y)), key=lambda i: (-scores[i], i))
    half = order[:len(y) // 2]
    return float(y[half].mean())


def _still_drafted(clone: Path, doc: dict[str, Any]) -> set[str]:
    """The ids of the review's questions the history route drafts now (its source commit,
    or the pull request that asks it)."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_history_review import measure
    got = measure(clone, doc, len(doc["questions"]))
    return {row["id"] for row in got["rows"] if row["kept_now"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clones", type=Path, required=True)
    parser.add_argument("--tool-features", action="store_true",
                        help=f"only {', '.join(TOOL_FEATURES)} (what the route knows)")
    parser.add_argument("--current", action="store_true",
                        help="only the reviewed questions the tool as it is now still drafts "
                             "(runs the history route in each clone)")
    args = parser.parse_args()
    columns = [FEATURES.index(f) for f in (TOOL_FEATURES if args.tool_features else FEATURES)]
    rows: list[tuple[str, list[float], int]] = []
    for path in sorted(REVIEWS.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("route") != "history":
            continue
        repo = doc["repository"].split("/")[-1]
        clone = args.clones / repo
        still = _still_drafted(clone, doc) if args.current else None
        for n, q in enumerate(doc["questions"]):
            if still is None or q["id"] in still:
                row = features(clone, q, n)
                rows.append((repo, [row[c] for c in columns], int(q["verdict"] == "keep")))
    repos = sorted({r for r, _, _ in rows})
    x = np.array([f for _, f, _ in rows])
    y = np.array([k for _, _, k in rows])
    group = np.array([r for r, _, _ in rows])
    positions = [p for p, _ in enumerate(rows)]  # reviews list the newest first
    print(f"{len(rows)} reviewed questions, {len(repos)} repositories, "
          f"{int(y.sum())} kept ({y.mean():.0%})\n")
    print("| held-out repository | questions | kept | AUC score | AUC newest-first | "
          "kept, top half by score | kept, all |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    aucs, orders, tops, alls = [], [], [], []
    for repo in repos:
        test = group == repo
        model = _fit(x[~test], y[~test])
        s = _score(model, x[test])
        a = auc(s, y[test])
        o = auc(-np.array(positions)[test], y[test])
        t, al = top_half(s, y[test]), float(y[test].mean())
        aucs.append(a)
        orders.append(o)
        tops.append(t)
        alls.append(al)
        print(f"| {repo} | {int(test.sum())} | {int(y[test].sum())} | {a:.2f} | {o:.2f} | "
              f"{t:.0%} | {al:.0%} |")
    print(f"| mean of {len(repos)} | | | {np.nanmean(aucs):.2f} | {np.nanmean(orders):.2f} | "
          f"{np.mean(tops):.0%} | {np.mean(alls):.0%} |")
    better = sum(1 for t, al in zip(tops, alls, strict=True) if t > al)
    worse = sum(1 for t, al in zip(tops, alls, strict=True) if t < al)
    print(f"\ntop half kept more than all in {better} held-out repositories, less in {worse}")
    w, _mean, _std = _fit(x, y)
    print("\nweights fitted on all (standardised features):")
    names = [FEATURES[c] for c in columns]
    for name, weight in sorted(zip(names, w[:-1], strict=True), key=lambda t: -abs(t[1])):
        print(f"  {name:10s} {weight:+.2f}")


if __name__ == "__main__":
    main()
