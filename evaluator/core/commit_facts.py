"""Facts for a history question: the lines a commit added that still exist today
(:func:`evidence_facts`), read from its ``git show -U0`` patch (:func:`added_lines`).

Split from :mod:`evaluator.core.commits` (issue 21's module size); pure, as it is.
"""

from __future__ import annotations

import keyword
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from evaluator.core.commit_filters import patch_sides
from evaluator.core.commits import one_line
from evaluator.core.giveaway import words
from evaluator.core.groundtruth import MIN_FACTS, fact_problem

MAX_FACTS = 4
MIN_FACT_CHARS = 12
MAX_FACT_CHARS = 120
#: A line today's file holds more often is boilerplate, no fact (a sync and an async twin
#: hold a line twice).
MAX_REPEATS = 2


def added_lines(patch: bytes) -> dict[str, list[str]]:
    """The lines a ``git show -U0`` patch adds, by the file's path after the commit, as
    :func:`evaluator.core.commit_filters.patch_sides` reads them, each one line (control
    characters and runs of whitespace one space, empty ones left out)."""
    out: dict[str, list[str]] = {}
    for path, side in patch_sides(patch).items():
        lines = [line for _, text in side.added if (line := one_line(text))]
        if lines:
            out[path] = lines
    return out


_CONTINUED = re.compile(r"^(?:[)\]},.+*/%|&=<>-]|(?:or|and|not|in|is|else|if|for)\b)")
#: A block's header (``if bracket_depth > 0:``, ``if (md->used < n) {``) is a statement, not a
#: conditional expression or a comprehension continued: the lines the three paired
#: reviews of round 14 asked for most often in place of the drafted facts.
_HEADER = re.compile(r"^(?:if|for|while|else)\b.*[:{]\s*(?:(?:#|//).*)?$")
#: A line that says nothing until the next one: a bare call opened with its arguments on
#: the lines below (``LOGGER.warning(``), a bare name or argument (``_INSECURE_FALLBACK_ENV,``),
#: a decorator without arguments (``@classmethod``), a line continued by a backslash: the
#: tenth review's virtualenv history-11 and -20 (issue 24 round 13). A ``def f(``, a
#: ``raise ValueError(`` or an assignment opening a call names what it defines or raises
#: and stays: reviewers kept such facts (jinja "async def do_unique(").
_UNFINISHED = re.compile(r"^(?:[\w.]+\(|[\w.]+,?|@[\w.]+)$|\\$")


def fragment(line: str) -> bool:
    """A line that is no statement of its own: it continues the one before (starts with a
    closing bracket, an operator or ``or``/``and``…, or with ``if``/``for``/``else`` but is
    no block header), the next one completes it
    (:data:`_UNFINISHED`), or it is mostly punctuation and keywords (``) or x is None:``,
    ``}, {``) with under 3 names: a call writing code
    (``self.writeline("finally: await agen.aclose()")``) is a statement."""
    code = line.split("  #", 1)[0].strip()
    stripped = line.strip()
    continued = _CONTINUED.match(stripped) and not _HEADER.match(stripped)
    if continued or _UNFINISHED.search(code):
        return True
    names = [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]+", line)
             if not keyword.iskeyword(w) and w not in ("self", "cls")]
    return len(names) < 3 and sum(map(len, names)) * 2 < len("".join(line.split()))


#: A local name set from a lone name, attribute, number or empty value (``target = child``,
#: ``bracket_depth = 0``, ``seen_content_length = None``, ``htkeys_t *keys = md->keys;``),
#: or from itself converted (``root = Path(root)``); a counter stepped (``depth += 1``); a
#: lone value returned (``return output``). An attribute, a constant or an annotated name
#: set stays: it declares (``self.max_count = max``, ``END_BOUNDARY = 11`` were asked for;
#: werkzeug's class-level ``parameter_storage_class: None = None`` was kept).
_LOCAL_SET = re.compile(r"^(?:(?:const\s+)?[A-Za-z_]\w*\s*\*+\s*)?(?P<name>[a-z_][a-z0-9_]*)"
                        r"\s*=(?!=)\s*(?P<value>.+)$")
_ATOM = re.compile(r"^(?:[A-Za-z_][\w.]*(?:->\w+)*|-?\d+(?:\.\d+)?|\[\]|\{\}|\(\)|"
                   r"[bru]?(?:\"\"|'')|\w+\(\))$")
_STEP = re.compile(r"^[A-Za-z_][\w.]*(?:->\w+)*\s*[-+]=\s*\d+$")
_RETURN_ATOM = re.compile(r"^return(?:\s+(?:[A-Za-z_][\w.]*|-?\d+))?$")


def says_little(line: str) -> bool:
    """A line that tells a reader nothing about the change by itself: a local name set
    from a lone value or converted from itself, a counter stepped by a number, a lone
    value returned (:data:`_LOCAL_SET`). The paired reviews of round 14 replaced such
    facts in 8 of the 35 questions edited for their facts alone ("a bare assignment that
    says nothing alone": black ``target = child``, h11 ``seen_content_length = None``,
    setuptools_scm ``root = Path(root)``). Such a line is never a fact, not even to complete
    the two a question needs: tried, it completed mkdocs' kept "Fix crash when
    mkdocs_theme.yml is empty" (``theme_config = {}``), but on the held-out seventeenth
    review it gave python-dotenv's "Allow any text stream" (kept as retrieval-only)
    ``dotenv_path = find_dotenv()``, and reviewers accept a question without facts."""
    code = re.split(r"\s(?:#|//)", line, maxsplit=1)[0].strip().removesuffix(";").strip()
    if _STEP.match(code) or _RETURN_ATOM.match(code):
        return True
    found = _LOCAL_SET.match(code)
    if found is None:
        return False
    value = found.group("value").strip()
    return bool(_ATOM.match(value)) or \
        re.fullmatch(rf"[\w.]+\(\s*{re.escape(found.group('name'))}\s*\)", value) is not None


#: A condition's or a handler's header (not ``for``: a loop is rarely the change), ranked
#: before other code; :data:`_HEADER` is any block header, read to tell a fragment.
_BLOCK = re.compile(r"^(?:(?:el)?if|while|case|match|except|with)\b|^}?\s*else\s+if\b")
_CODE_MARK = re.compile(r"[()\[\]{}=;<>]")
_STATEMENT = re.compile(r"(?:(?:el)?if|while|for|case|match|except|with|else|try|finally|return|"
                        r"raise|yield|assert|del|def|class|async|await|import|from)\b")


_DOC_OPEN = re.compile(r"^[rRuU]?(\"\"\"|''')")


def prose(line: str) -> bool:
    """A line of words, no code: a docstring's or a text block's line (no bracket, ``=``,
    ``;`` or comparison, not a string literal, not opened by a statement's keyword, three
    words or more), or a docstring's opening line of three words or more whatever it
    quotes (``\"\"\"A tuple that ensures that hash() will be called …``: the twenty-first
    review's cachetools history-13 and setuptools_scm's ``\"\"\"return a mapping from
    mime/pseudo-mime content`` were replaced by code)."""
    stripped = line.strip()
    opened = _DOC_OPEN.match(stripped)
    if opened is not None:
        text = stripped[opened.end():].removesuffix(opened.group(1))
        return len(re.findall(r"[A-Za-z]{2,}", text)) >= 3
    return not _CODE_MARK.search(stripped) and not stripped.startswith(("'", '"')) and \
        not _STATEMENT.match(stripped) and len(re.findall(r"[A-Za-z]{2,}", stripped)) >= 3


def _stems(text: str) -> set[str]:
    """:func:`words`, each with a plural or verb ending cut (``ordinals`` → ``ordinal``,
    ``years`` → ``year``, ``appending`` → ``append``). Deliberately not the judge's
    Snowball :func:`~evaluator.core.judgetext.stem`: swapped in, it reorders the facts of
    3 of the 120 questions the round-15 held-out reviews read, so it waits for a review."""
    return {re.sub(r"(?<=\w{3})(?:ing|ed|s)$", "", w) if not w.endswith("ss") else w
            for w in words(text)}


def _fact_score(line: str, asked: set[str], repeats: int) -> tuple[int, ...]:
    """The order of a module's facts: those sharing the most words with the question
    first; then code before prose (:func:`prose`), a line today's file holds once before
    one it holds twice (mkdocs' ``dropdown.classList.remove('open');`` pinned neither of
    the two fixes that hold it), a condition or a block's header
    (``if encoding_overwrite is not None:``) before other code: the line the paired reviews
    of round 14 asked for most often in place of a drafted fact; then the most distinct
    words, the shorter."""
    found = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]{3,}", line))
    return (-len(asked & _stems(line)), prose(line), repeats,
            not _BLOCK.match(line.strip()), -len(found), len(line))


def evidence_facts(added: Sequence[str], today_lines: Iterable[str], *,
                   limit: int = MAX_FACTS, about: str = "") -> list[str]:
    """Up to ``limit`` added lines that exist, word for word (whitespace collapsed), once
    or twice (:data:`MAX_REPEATS`) in today's file, each spelt as the file spells it today
    (its inner spacing kept; collapsed only when that spelling is no valid fact): specific
    ones (a fact the judge can use, 12–120 characters, not a comment marker or a lone
    bracket, not a fragment, not a line that :func:`says_little`), in :func:`_fact_score`'s
    order. A line the file
    repeats more often (``raise ValueError(`` 9 times in arrow's ``arrow.py``, isort's
    ``return output`` 7 times, a signature every locale repeats) tells no reader where the
    answer is: the twelfth held-out review's reviewers replaced such facts (issue 24,
    round 14)."""
    present: Counter[str] = Counter()
    verbatim: dict[str, str] = {}  # a line as today's file spells it (its inner spacing)
    for today in today_lines:
        present[(line := " ".join(today.split()))] += 1
        verbatim.setdefault(line, today.strip())
    kept: dict[str, int] = {}  # each fact as spelt today, and how often the file holds it
    for line in dict.fromkeys(added):
        if not 1 <= present[line] <= MAX_REPEATS or \
                not MIN_FACT_CHARS <= len(line) <= MAX_FACT_CHARS:
            continue
        if line.startswith(("#", "//", "/*", "*", "import ", "from ")) or \
                fact_problem(line) is not None or fragment(line) or says_little(line):
            continue
        today = verbatim[line]  # isort: two spaces before a "#" stay two
        spelt = today if today.isprintable() and len(today) <= MAX_FACT_CHARS and \
            fact_problem(today) is None else line
        kept[spelt] = present[line]
    asked = _stems(about)
    chosen = sorted(kept, key=lambda fact: _fact_score(fact, asked, kept[fact]))[:limit]
    # a docstring's prose completes the two facts a question needs, never one more: the
    # twentieth and twenty-first reviews edited such lines beside two of code or more
    # (markdown "dealing with lists.", cachetools "times on a cache miss. See also …",
    # babel "Resolve a locale identifier to a `.dat` path on disk."); none takes its place
    if sum(not prose(fact) for fact in chosen) >= MIN_FACTS:
        chosen = [fact for fact in chosen if not prose(fact)]
    return chosen


def ranked_facts(groups: Sequence[tuple[int, Sequence[str]]], *, about: str,
                 limit: int = MAX_FACTS) -> list[str]:
    """Up to ``limit`` facts of a question from its modules' facts (``groups``: each
    module's grade and its :func:`evidence_facts`, in the draft's module order): the
    graded-3 modules' first and, among them, those sharing most words with the question
    ``about`` first, whichever module of grade 3 holds them (a second module's answer
    before a first module's other topic); then the same for grade 2. Each fact once."""
    asked = _stems(about)
    seen: dict[str, tuple[int, int]] = {}
    for grade, facts in groups:
        for fact in facts:
            seen.setdefault(fact, (-grade, -len(asked & _stems(fact))))
    return sorted(seen, key=lambda fact: seen[fact])[:limit]
