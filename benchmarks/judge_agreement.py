"""Agreement of the faithfulness judge with hand-written labels, per split (issue 22).

``benchmarks/judge_agreement/<package>.json`` holds, per package (a pinned PyPI sdist, read
with :func:`suitelib.fetch_sdist`; only line ranges are stored, never the code), contexts
(a file and an inclusive line range, the shape of a retrieved chunk) and facts written by
reading them. Each fact is labelled ``supported`` / ``partial`` / ``unsupported`` on its own
context and on the previous and next contexts of its package (wrapping): three labelled
(context, fact) pairs. Each supported fact carries a hand-written false version (negated;
numbers, names or roles swapped) and a paraphrase. The labels were committed before the
judge was run on them.

Split (by package): ``split`` in each file, ``tuning`` or ``held-out``; a held-out package
is one no rule or threshold was chosen on. Tuning (4 packages): markupsafe, the tuning part
of judges 3 and 4, and itsdangerous, packaging and idna, held out until they judged the
first judge-5 attempt and tuning data since (the second attempt was tuned on them).
Held out (3 packages, fresh): cachetools, tomli and humanize, labelled cold by AI helper
sessions that never ran the judge (``labelled_by`` in each file) and measured once, on
2026-12-01, judge 4 beside the second judge-5 candidate (docs/judge.md). Their second cold
reading is in ``judge_agreement/second_reading/``; ``bench_readers.py`` prints how far the
two readings agree (Cohen's kappa).

Figures, per split and judge:

* precision = labelled supported / credited (a partial credited counts against it);
  recall = credited / labelled supported — over the labelled pairs;
* false-version credit = credited false versions / false versions, each on its fact's own
  context;
* decoy credit = credited / decoys, a decoy being the fact's words shuffled (fixed seed)
  with no code (no punctuation at all), judged as the context of the fact;
* paraphrase recall = credited paraphrases / paraphrases, each on its fact's own context.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from suitelib import fetch_sdist

HERE = Path(__file__).resolve().parent
DATA = HERE / "judge_agreement"

# A judge: (context, fact) pairs in, whether each fact is credited out.
Judge = Callable[[Sequence[tuple[str, str]]], list[bool]]


@dataclass(frozen=True)
class Pair:
    package: str
    split: str
    context: str
    fact: str
    label: str


@dataclass(frozen=True)
class Probe:
    """A supported fact with its adversarial versions."""

    package: str
    split: str
    context: str
    fact: str
    false: str
    paraphrase: str
    decoy: str


def decoy_of(fact: str, seed: int) -> str:
    """The fact's words (runs of letters, digits and underscores: no code syntax) in a
    shuffled order (never the original order when it has two different words)."""
    words = re.findall(r"\w+", fact)
    rng = random.Random(seed)
    shuffled = words[:]
    for _ in range(20):
        rng.shuffle(shuffled)
        if shuffled != words or len(set(words)) < 2:
            break
    return " ".join(shuffled)


def load(cache: Path) -> tuple[list[Pair], list[Probe]]:
    pairs: list[Pair] = []
    probes: list[Probe] = []
    for path in sorted(DATA.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        root = fetch_sdist(data["package"], data["version"], cache)
        ids = list(data["contexts"])
        texts = {}
        for cid, where in data["contexts"].items():
            lines = (root / where["file"]).read_text(encoding="utf-8").splitlines()
            first, last = where["lines"]
            texts[cid] = "\n".join(lines[first - 1:last])
        pkg, split = data["package"], data["split"]
        for n, fact in enumerate(data["facts"]):
            i = ids.index(fact["context"])
            for where, cid in (("label", ids[i]), ("next", ids[(i + 1) % len(ids)]),
                               ("prev", ids[i - 1])):
                pairs.append(Pair(pkg, split, texts[cid], fact["fact"], fact[where]))
            if fact["label"] == "supported":
                probes.append(Probe(pkg, split, texts[ids[i]], fact["fact"], fact["false"],
                                    fact["paraphrase"],
                                    decoy_of(fact["fact"], seed=hash_seed(pkg, n))))
    return pairs, probes


def hash_seed(package: str, n: int) -> int:
    return sum(ord(c) for c in package) * 1000 + n


def _share(hits: Sequence[bool]) -> str:
    return f"{sum(hits) / len(hits):.2f} ({sum(hits)}/{len(hits)})" if hits else "n/a"


def report(name: str, judge: Judge, pairs: Sequence[Pair], probes: Sequence[Probe],
           split: str, package: str | None = None) -> list[str]:
    """One row of figures for ``judge`` on ``split`` (see the module docstring), or on one
    ``package`` of it (the row's split column then names the package)."""
    ps = [p for p in pairs if p.split == split and package in (None, p.package)]
    rs = [p for p in probes if p.split == split and package in (None, p.package)]
    credited = judge([(p.context, p.fact) for p in ps])
    right = [c for c, p in zip(credited, ps, strict=True) if c and p.label == "supported"]
    partial = [c for c, p in zip(credited, ps, strict=True) if c and p.label == "partial"]
    n_credited = sum(credited)
    supported = [c for c, p in zip(credited, ps, strict=True) if p.label == "supported"]
    precision = (f"{len(right) / n_credited:.2f} ({len(right)}/{n_credited}; "
                 f"{len(partial)} partial)" if n_credited else "n/a")
    false = judge([(r.context, r.false) for r in rs])
    decoy = judge([(r.decoy, r.fact) for r in rs])
    para = judge([(r.context, r.paraphrase) for r in rs])
    where = split if package is None else f"{split}: {package}"
    return [name, where, str(len(ps)), precision, _share(supported), _share(false),
            _share(decoy), _share(para)]


HEADERS = ("judge", "split", "pairs", "precision", "recall", "false versions credited",
           "decoys credited", "paraphrase recall")
