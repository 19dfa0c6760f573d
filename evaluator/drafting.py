"""The question planner of ``init``'s docstring route: candidate questions over the code
map (:mod:`evaluator.codemap`), and the plan that picks ``--count`` of them in the shape mix.

* candidate questions of the three shapes — *identity* about exported names, *focused*
  about one documented function or class, *cross-file* along a call path of two or three
  modules starting at a public entry point — each with grades and a one-line reason per
  non-zero grade, and 2–4 facts quoted verbatim from a module graded ≥ 2 (whole words,
  never generic: :func:`evaluator.core.groundtruth.fact_problem`);
* every question is phrased from what the code does (:mod:`evaluator.core.phrasing`), never
  from its names: a candidate whose docstring gives no sentence to ask from, or whose
  question would still name its answer (:mod:`evaluator.core.giveaway`, the rule ``validate``
  warns with), is skipped, counted by reason, and the plan drafts another.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from evaluator.codemap import CodeMap, Edge, Symbol, defining
from evaluator.core import phrasing
from evaluator.core.evidence import source_span
from evaluator.core.giveaway import AnswerNames, answer_names, overlap
from evaluator.core.groundtruth import DEFAULT_MIX, KNOWN_SHAPES, fact_problem

SHAPES = KNOWN_SHAPES
_Item = TypeVar("_Item")
MAX_FACT_CHARS = 80
HUB_CALLS = 6  # a function called from more places than this is a hub, not a path step


# ----------------------------------------------------------------------------- facts


def verbatim(fact: str, source: str) -> bool:
    """Whether ``fact`` occurs in ``source``, case-insensitively, on word boundaries."""
    low, key = source.lower(), fact.lower()  # once: a module may hold many near misses
    index = low.find(key)
    while index >= 0:
        before = source[index - 1] if index > 0 else " "
        after_i = index + len(fact)
        after = source[after_i] if after_i < len(source) else " "
        if not (fact[0].isalnum() and (before.isalnum() or before == "_")) and not (
                fact[-1].isalnum() and (after.isalnum() or after == "_")):
            return True
        index = low.find(key, index + 1)
    return False


_DANGLING = frozenset({"a", "an", "the", "of", "to", "for", "with", "and", "or", "in", "on",
                       "by", "as", "from", "that", "is", "are", "be"})


def _clause(text: str, max_words: int = 12) -> str:
    """A leading clause of ``text`` that ends where the writer ended it: at the first
    comma, semicolon, colon or full stop followed by a space, or at the end of a line that
    ends a sentence. ``''`` when that clause runs past ``max_words`` words or to the next
    line, holds Sphinx markup (``:class:`X```), or ends on a word that needs a follow-up
    ("a", "the", "of" …): never a phrase cut short."""
    text = text.strip()
    match = re.match(r"(.+?)(?:[,;]|:\s|\.(?:\s|$))", text)
    if match is not None:
        cut = match.group(1).strip()
    elif text.endswith((".", "!", "?")):
        cut = text[:-1]
    else:
        return ""
    words = cut.split()
    if not words or len(words) > max_words or re.search(r":\w+:`", cut) \
            or words[-1].lower() in _DANGLING or cut.count("(") != cut.count(")"):
        return ""
    return cut


def usable(fact: str, source: str) -> bool:
    return (2 <= len(fact) <= MAX_FACT_CHARS and fact_problem(fact) is None
            and verbatim(fact, source))


def symbol_facts(symbol: Symbol, source: str) -> list[str]:
    """Facts about one symbol, each verified verbatim in ``source``: its signature line (or
    its head, cut after a parameter), and a clause of its docstring."""
    out: list[str] = []
    signature = symbol.signature
    if len(signature) > 60 and "(" in signature:
        signature = signature[: signature.index("(") + 1]
    if signature and usable(signature, source):
        out.append(signature)
    if symbol.doc_line:
        clause = _clause(symbol.doc_line)
        if len(clause.split()) >= 3 and usable(clause, source):
            out.append(clause)
    if len(out) < 3:
        body = [line.rstrip(",") for line in symbol.body_lines
                if len(line) >= 12 and len(re.findall(r"[A-Za-z0-9]+", line)) >= 3]
        out += [line for line in body if usable(line, source)][:3 - len(out)]
    return out


def anchored(fact: str, sources: Iterable[str]) -> str | dict[str, str]:
    """A drafted fact as the ground truth holds it: ``{"fact", "evidence"}`` with the whole
    source line(s) it was quoted from, found in the first of ``sources`` (the question's
    grade >= 2 modules) that holds it; the plain fact when none does (as written, it could
    never pass ``validate``)."""
    for source in sources:
        span = source_span(fact, source)
        if span is not None:
            return {"fact": fact, "evidence": span}
    return fact


def _dedupe(facts: Iterable[str], limit: int = 4) -> list[str]:
    seen: set[str] = set()
    out = []
    for fact in facts:
        key = fact.lower()
        if key not in seen and not any(key in s or s in key for s in seen):
            seen.add(key)
            out.append(fact)
            if len(out) == limit:  # ``seen`` stays small: at most ``limit`` comparisons each
                break
    return out


# ----------------------------------------------------------------------------- candidates


@dataclass(frozen=True)
class Candidate:
    shape: str
    question: str
    grades: Mapping[str, int]
    reasons: Mapping[str, str]
    facts: tuple[str, ...]
    key: str                     # the symbol / path it is about (one question per key)
    #: {commit, subject[, pull_request, title]}: drafted from history
    source: Mapping[str, str | int] | None = None
    about: tuple[str, ...] = ()  # the code names it is about (never in its question)


NO_FACTS = "fewer than 2 facts to quote from its code"


class Gate:
    """Drafts a candidate's question, or counts why not (:data:`skipped`): its docstring
    gives no sentence to ask from, its question would name its answer (a grade-3 module's
    file or symbol, :mod:`evaluator.core.giveaway`), or it has fewer than 2 facts."""

    def __init__(self, code: CodeMap) -> None:
        self.code = code
        self.skipped: Counter[str] = Counter()
        self._names: dict[str, AnswerNames] = {}

    def names(self, module: str) -> AnswerNames:
        if module not in self._names:
            info = self.code.modules.get(module)
            self._names[module] = answer_names(module, info.source if info else None)
        return self._names[module]

    def question(self, text: str | None, grades: Mapping[str, int]) -> str | None:
        if text is None:
            self.skipped[phrasing.NO_SENTENCE] += 1
            return None
        answers = [self.names(m) for m, g in grades.items() if g == 3]
        seconds = [self.names(m) for m, g in grades.items() if g == 2]
        if overlap(text, answers, seconds=seconds).names_answer:
            self.skipped[phrasing.NAMES_ANSWER] += 1
            return None
        return text


@dataclass
class _Grading:
    grades: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)

    def set(self, module: str, grade: int, reason: str) -> None:
        if grade > self.grades.get(module, 0):
            self.grades[module] = grade
            self.reasons[module] = reason

    def candidate(self, shape: str, question: str | None, facts: Sequence[str], *,
                  key: str, about: Sequence[str], gate: Gate) -> Candidate | None:
        """The candidate with these grades, or ``None`` (counted by ``gate``) with fewer
        than 2 distinct facts or no question that keeps its answer unnamed."""
        kept = _dedupe(list(facts))
        if len(kept) < 2:
            gate.skipped[NO_FACTS] += 1
            return None
        asked = gate.question(question, self.grades)
        if asked is None:
            return None
        return Candidate(shape, asked, self.grades, self.reasons, tuple(kept), key,
                         about=tuple(dict.fromkeys(about)))


def _round_robin(groups: dict[str, list[_Item]], order: Callable[[str], Any]) -> list[_Item]:
    """One item of each group in turn (groups sorted by ``order`` before every round), so
    the drafted questions spread over the package's modules."""
    out: list[_Item] = []
    while any(groups.values()):
        for name in sorted(groups, key=order):
            if groups[name]:
                out.append(groups[name].pop(0))
    return out


def _neighbours(code: CodeMap, grading: _Grading, module: str, name: str,
                limit: int = 3) -> None:
    """Grade 1: other modules whose functions call ``name``, or that ``name`` calls."""
    added = 0
    for edge in code.edges:
        if added >= limit:
            break
        if edge.dst == module and edge.callee == name and edge.src not in grading.grades:
            grading.set(edge.src, 1, f"related: `{edge.caller}` there calls `{name}`")
            added += 1
        elif edge.src == module and edge.caller == name and edge.dst not in grading.grades:
            grading.set(edge.dst, 1, f"related: `{name}` calls `{edge.callee}` defined there")
            added += 1


def _references(code: CodeMap) -> Counter[tuple[str, str]]:
    return Counter((e.dst, e.callee) for e in code.edges)


def _base_module(code: CodeMap, module: str, base: str) -> tuple[str, str] | None:
    """Where the base class ``base`` (``Name`` or ``alias.Name``) of a class in ``module``
    is defined."""
    head, _, attr = base.partition(".")
    if not attr:
        return defining(code.modules, module, head)
    imported = code.modules[module].imported.get(head)
    if imported is None or imported[1] is not None:
        return None
    return defining(code.modules, imported[0], attr)


def _api(code: CodeMap) -> dict[str, tuple[str, str]]:
    """The public API: the package's exports, or else the names other modules import."""
    if code.exports:
        return dict(code.exports)
    importers: Counter[tuple[str, str]] = Counter()
    for info in code.modules.values():
        for module, name in info.imported.values():
            found = defining(code.modules, module, name) if name else None
            if found and found[0] != info.path:
                importers[found] += 1
    return {sym: (module, sym) for (module, sym), _n in importers.most_common()
            if "." not in sym}


def _identity_items(code: CodeMap) -> list[tuple[str, str, str, str]]:
    """``(public name, module, symbol, how)``: entry points, then the API round-robin over
    the defining modules (most referenced first; names defined in the exporting
    ``__init__`` last)."""
    refs = _references(code)
    items = [(script, module, func, "entry")
             for script, (module, func) in sorted(code.entry_points.items())]
    ranked = sorted(_api(code).items(), key=lambda kv: (
        kv[1][0] == code.export_modules.get(kv[0]), -refs[kv[1]], kv[0]))
    per_module: dict[str, list[tuple[str, str, str, str]]] = defaultdict(list)
    for name, (module, sym) in ranked:
        per_module[module].append((name, module, sym, "export"))
    return items + _round_robin(per_module, lambda m: (
        m in code.export_modules.values(), -len(per_module[m]), m))


def _identity_candidate(code: CodeMap, public: str, symbol: Symbol, how: str,
                        gate: Gate) -> Candidate | None:
    module, name = symbol.module, symbol.name
    grading = _Grading()
    grading.set(module, 3, f"defines `{name}`")
    question = phrasing.entry_point() if how == "entry" else \
        phrasing.identity(symbol.doc_sentence, kind=symbol.kind)
    exporter = code.export_modules.get(public)
    if exporter and exporter != module:
        grading.set(exporter, 1, f"related: exports `{public}` in the public API")
    for base in symbol.bases:
        found = _base_module(code, module, base)
        if found and found[0] != module:
            grading.set(found[0], 2, f"needed: defines `{found[1]}`, the base class "
                                     f"of `{name}`")
    _neighbours(code, grading, module, name)
    source = code.modules[module].source
    facts = symbol_facts(symbol, source)
    if len(facts) < 2:
        methods = [s for s in code.modules[module].symbols.values()
                   if s.name.startswith(f"{name}.") and s.public and s.doc_line]
        for method in methods[:2]:
            facts += symbol_facts(method, source)
    return grading.candidate("identity", question, facts, key=f"{module}:{name}",
                             about=(public, symbol.short), gate=gate)


def identity_candidates(code: CodeMap, gate: Gate) -> list[Candidate]:
    """Questions about the public API: entry points and exported names."""
    out: list[Candidate] = []
    for public, module, name, how in _identity_items(code):
        symbol = code.symbol(module, name)
        if symbol is not None and symbol.public and (candidate := _identity_candidate(
                code, public, symbol, how, gate)) is not None:
            out.append(candidate)
    return out


def focused_candidates(code: CodeMap, gate: Gate, *, skip: set[str]) -> list[Candidate]:
    refs = _references(code)
    symbols = [s for info in code.modules.values() for s in info.symbols.values()
               if s.public and s.doc_sentence and f"{s.module}:{s.name}" not in skip
               and not s.short.startswith("__")]
    exported = set(code.exports.values())
    symbols.sort(key=lambda s: (posixpath.basename(s.module).startswith("_"),
                                -(refs[(s.module, s.name)] + 3 * ((s.module, s.name)
                                                                  in exported)),
                                s.module, s.line))
    per_module: dict[str, list[Symbol]] = defaultdict(list)
    for s in symbols:
        per_module[s.module].append(s)
    out = []
    for symbol in _round_robin(per_module, lambda m: -len(per_module[m])):
        facts = symbol_facts(symbol, code.modules[symbol.module].source)
        grading = _Grading()
        grading.set(symbol.module, 3, f"defines `{symbol.name}`")
        _neighbours(code, grading, symbol.module, symbol.name)
        candidate = grading.candidate(
            "focused", phrasing.focused(symbol.doc_sentence, kind=symbol.kind), facts,
            key=f"{symbol.module}:{symbol.name}", about=(symbol.short,), gate=gate)
        if candidate is not None:
            out.append(candidate)
    return out


def _call_paths(code: CodeMap) -> list[list[Edge]]:
    """Call paths of two or three modules, best first: public (exported) starts, public
    documented functions along the way, three modules before two."""
    exported = set(code.exports.values()) | set(code.entry_points.values())
    by_src: dict[tuple[str, str], list[Edge]] = defaultdict(list)
    for edge in code.edges:
        by_src[(edge.src, edge.caller)].append(edge)
    callers = _references(code)
    paths: list[tuple[int, list[Edge]]] = []
    for edge in code.edges:
        start = code.symbol(edge.src, edge.caller)
        end = code.symbol(edge.dst, edge.callee)
        if start is None or end is None or not start.public or start.short.startswith("__"):
            continue
        # A hub (a helper called from everywhere, like ``echo``) makes a trivial path.
        hub = callers[(edge.dst, edge.callee)] > HUB_CALLS
        onward = [] if hub else [
            e for e in by_src.get((edge.dst, edge.callee), [])
            if e.dst not in (edge.src, edge.dst)
            and (nxt := code.symbol(e.dst, e.callee)) is not None and nxt.public
            and nxt.kind != "class" and callers[(e.dst, e.callee)] <= HUB_CALLS]
        score = (4 * ((edge.src, edge.caller) in exported) + 2 * end.public
                 + (end.kind != "class") + bool(end.doc_sentence) - 8 * hub)
        if onward:
            paths.append((score + 1, [edge, onward[0]]))
        paths.append((score, [edge]))
    paths.sort(key=lambda p: (-p[0], -len(p[1]), p[1][0].src, p[1][0].caller))
    return [path for _score, path in paths]


def _path_candidate(code: CodeMap, path: Sequence[Edge], gate: Gate) -> Candidate | None:
    """A cross-file question along ``path``: 3 where it starts, 2 on the rest."""
    first = path[0]
    start = code.symbol(first.src, first.caller)
    mid = code.symbol(first.dst, first.callee)
    assert start is not None
    assert mid is not None
    grading = _Grading()
    grading.set(first.src, 3, f"defines `{first.caller}`, where the path starts")
    grading.set(first.dst, 2, f"needed: defines `{first.callee}`, called by "
                              f"`{first.caller}`")
    facts = symbol_facts(start, code.modules[first.src].source)[:1]
    facts += symbol_facts(mid, code.modules[first.dst].source)[:1]
    call = first.line.rstrip(",")
    if usable(call, code.modules[first.src].source):
        facts.append(call)
    about = [start.short, mid.short]
    sentences = [start.doc_sentence, mid.doc_sentence]
    if len(path) == 2:
        last = path[1]
        end = code.symbol(last.dst, last.callee)
        assert end is not None
        grading.set(last.dst, 2, f"needed: defines `{last.callee}`, called by "
                                 f"`{last.caller}`")
        facts += symbol_facts(end, code.modules[last.dst].source)[:1]
        about.append(end.short)
        sentences.append(end.doc_sentence)
    return grading.candidate("cross-file", phrasing.along(*sentences), facts,
                             key=f"{first.src}:{first.caller}", about=about, gate=gate)


def cross_file_candidates(code: CodeMap, gate: Gate) -> list[Candidate]:
    """Questions along call paths of two or three modules, from public callers first; a
    module pair, a start and a callee are each used once."""
    out: list[Candidate] = []
    used_pairs: set[tuple[str, str]] = set()
    used_starts: set[tuple[str, str]] = set()
    used_callees: set[tuple[str, str]] = set()
    for path in _call_paths(code):
        first = path[0]
        pair = (first.src, first.dst)
        callees = {(e.dst, e.callee) for e in path}
        if pair in used_pairs or (first.src, first.caller) in used_starts \
                or callees & used_callees:
            continue
        candidate = _path_candidate(code, path, gate)
        if candidate is None:
            continue
        used_pairs.add(pair)
        used_starts.add((first.src, first.caller))
        used_callees |= callees
        out.append(candidate)
    return out


# ----------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class Plan:
    """The drafted candidates and, per missing slot, why it could not be filled."""

    chosen: tuple[Candidate, ...]
    shortfall: tuple[str, ...]


def split_count(count: int, mix: Mapping[str, float]) -> dict[str, int]:
    """``count`` slots over the shapes by the weights in ``mix`` (largest remainder; every
    shape with a positive weight gets at least one slot when ``count`` allows)."""
    weights = {s: max(0.0, float(mix.get(s, 0.0))) for s in SHAPES}
    total = sum(weights.values()) or 1.0
    raw = {s: count * w / total for s, w in weights.items()}
    out = {s: int(v) for s, v in raw.items()}
    for s in sorted(SHAPES, key=lambda s: -(raw[s] - out[s])):
        if sum(out.values()) >= count:
            break
        out[s] += 1
    for s in SHAPES:
        if weights[s] > 0 and out[s] == 0 and count >= len([w for w in weights.values()
                                                             if w > 0]):
            donor = max(SHAPES, key=lambda d: out[d])
            out[donor] -= 1
            out[s] += 1
    return out


_WHY_NONE = {
    "identity": "no more exported names (the package's __init__ exports, __all__, "
                "[project.scripts]) with a signature and a docstring to quote",
    "cross-file": "no more call paths between two modules of the universe (a call to a "
                  "name imported from another module) with facts to quote",
    "focused": "no more public, documented functions or classes with two facts to quote",
}


def plan(candidates: Mapping[str, Sequence[Candidate]], count: int,
         mix: Mapping[str, float] = DEFAULT_MIX) -> Plan:
    """Pick ``count`` questions in the mix; a shape that runs short lends its slots to the
    others, and every slot left empty gets its reason."""
    targets = split_count(count, mix)
    pools = {s: list(candidates.get(s, ())) for s in SHAPES}
    chosen: dict[str, list[Candidate]] = {s: [] for s in SHAPES}
    used_keys: set[str] = set()
    used_questions: set[str] = set()

    def take(shape: str) -> bool:
        while pools[shape]:
            c = pools[shape].pop(0)
            if c.key in used_keys or c.question.lower() in used_questions:
                continue
            used_keys.add(c.key)
            used_questions.add(c.question.lower())
            chosen[shape].append(c)
            return True
        return False

    short: dict[str, int] = {}
    for shape in SHAPES:
        for _ in range(targets[shape]):
            if not take(shape):
                short[shape] = short.get(shape, 0) + 1
    lent: list[str] = []
    for shape, missing in short.items():
        for _ in range(missing):
            for other in sorted(SHAPES, key=lambda s: -len(pools[s])):
                if other != shape and take(other):
                    lent.append(f"{shape} slot filled with a {other} question: "
                                f"{_WHY_NONE[shape]}")
                    break
            else:
                lent.append(f"{shape} slot left empty: {_WHY_NONE[shape]}, and no other "
                            "shape has candidates left")
    ordered = tuple(c for s in SHAPES for c in chosen[s])
    return Plan(chosen=ordered, shortfall=tuple(lent))


def all_candidates(code: CodeMap, gate: Gate | None = None) -> dict[str, list[Candidate]]:
    """Every shape's candidates, best first; ``gate`` counts the ones skipped, by reason."""
    gate = gate or Gate(code)
    identity = identity_candidates(code, gate)
    skip = {c.key for c in identity[:8]}
    return {"identity": identity, "focused": focused_candidates(code, gate, skip=skip),
            "cross-file": cross_file_candidates(code, gate)}
