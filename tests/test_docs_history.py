"""docs/history-rules.md's table of the askability score is the model the code ships: every
weight and every verb of :mod:`evaluator.core.askability`, so a refit cannot leave the page
behind."""

from __future__ import annotations

import re
from pathlib import Path

from evaluator.core import askability

DOC = Path(__file__).resolve().parent.parent / "docs" / "history-rules.md"


def _table() -> dict[str, float]:
    """The score's table: feature text → weight (``−`` read as a minus)."""
    section = DOC.read_text(encoding="utf-8").split("## The askability score", 1)[1]
    section = section.split("\n## ", 1)[0]
    rows = re.findall(r"^\| (.+?) \| ([+−-]?[\d.]+) \|$", section, re.M)
    return {feature: float(weight.replace("−", "-")) for feature, weight in rows}


def test_the_page_lists_every_weight_the_score_uses():
    shown = sorted(_table().values())
    used = sorted(w for w in askability.WEIGHTS[1:])  # the intercept is no feature
    assert shown == used, (shown, used)


def test_the_page_names_every_verb_of_both_lists():
    table = _table()
    for verbs, sign in ((askability.BEHAVIOUR_VERBS, askability.BEHAVIOUR),
                        (askability.CODE_VERBS, askability.CODE)):
        [row] = [feature for feature, weight in table.items() if "verb" in feature
                 and weight == sign]
        words = set(re.findall(r"[a-z']+", row))
        assert verbs <= words, sorted(verbs - words)
