"""How far two careful readings of the judge's labelled pairs agree (issue 22).

The judge is measured against labels (``benchmarks/judge_agreement/<package>.json``); a
figure against labels means little unless another reader, who never saw them, labels the
same pairs alike. ``benchmarks/judge_agreement/second_reading/<package>.json`` holds such a
second reading of the fresh held-out packages: the same facts, in the same order, each
labelled on its own, previous and next context by a reader who saw only the chunk and the
fact (never the first labels, the false versions or the judge).

Figures, per package and in all, over the (context, fact) pairs both readings label:

* agreement = pairs labelled alike / pairs;
* Cohen's kappa on the three labels (supported / partial / unsupported) and on "supported
  or not" (the judge's question): ``(p_o - p_e) / (1 - p_e)``, where ``p_o`` is the
  agreement and ``p_e = sum over labels of (share of reader 1) * (share of reader 2)`` the
  agreement expected by chance (Cohen 1960, "A coefficient of agreement for nominal
  scales"). When ``p_e == 1`` (both readers gave one and the same label to every pair) kappa
  is 1.0 if they agree, as the agreement is then perfect, and it is not defined otherwise.

Run: ``python benchmarks/bench_readers.py`` (reads only the JSON files; no sources needed).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIRST = HERE / "judge_agreement"
SECOND = FIRST / "second_reading"
WHERE = ("label", "prev", "next")


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float:
    """Cohen's kappa of two readers' labels, ``pairs`` = (reader 1, reader 2) per item."""
    if not pairs:
        raise ValueError("no pairs")
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    first = Counter(a for a, _ in pairs)
    second = Counter(b for _, b in pairs)
    chance = sum(first[k] * second[k] for k in first) / (n * n)
    if chance == 1.0:
        return 1.0  # one label for every pair, by both readers: they agree on all
    return (observed - chance) / (1.0 - chance)


def labelled_pairs(first: dict, second: dict) -> list[tuple[str, str]]:
    """(first label, second label) of every pair, checking both readings hold the same facts
    in the same order."""
    facts, labels = first["facts"], second["labels"]
    if [(f["context"], f["fact"]) for f in facts] != [(x["context"], x["fact"])
                                                        for x in labels]:
        raise SystemExit(f"{second['package']}: the second reading does not hold the first "
                         "reading's facts in the same order")
    return [(f[w], x[w]) for f, x in zip(facts, labels, strict=True) for w in WHERE]


def _row(name: str, pairs: Sequence[tuple[str, str]]) -> str:
    binary = [(str(a == "supported"), str(b == "supported")) for a, b in pairs]
    alike = sum(a == b for a, b in pairs)
    return (f"| {name} | {len(pairs)} | {alike / len(pairs):.3f} ({alike}/{len(pairs)}) "
            f"| {cohen_kappa(pairs):.3f} | {cohen_kappa(binary):.3f} |")


def main(argv: Sequence[str] | None = None) -> int:
    del argv
    rows, every, differ = [], [], Counter()
    for path in sorted(SECOND.glob("*.json")):
        second = json.loads(path.read_text(encoding="utf-8"))
        first = json.loads((FIRST / path.name).read_text(encoding="utf-8"))
        pairs = labelled_pairs(first, second)
        rows.append(_row(f"{first['package']} {first['version']}", pairs))
        every += pairs
        differ.update((a, b) for a, b in pairs if a != b)
    if not every:
        print("no second reading found", file=sys.stderr)
        return 1
    print("| package | pairs | agreement | kappa (3 labels) | kappa (supported or not) |")
    print("|---|---:|---:|---:|---:|")
    print("\n".join(rows))
    print(_row("all", every))
    print("\ndisagreements (first reading -> second):",
          ", ".join(f"{a} -> {b}: {n}" for (a, b), n in sorted(differ.items())) or "none")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
