"""Unit tests for evaluator.codemap and evaluator.drafting: the code map, the call graph,
questions (phrased without naming their answer), facts, the plan."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluator.codemap import build_code_map
from evaluator.core import phrasing
from evaluator.core.giveaway import answer_names, overlap
from evaluator.core.groundtruth import fact_problem, parse_mix
from evaluator.drafting import (
    NO_FACTS,
    SHAPES,
    Candidate,
    Gate,
    _clause,
    all_candidates,
    plan,
    split_count,
    verbatim,
)

PACKAGE = {
    "src/shop/__init__.py": '''
        """The shop package."""
        from .cart import Cart, add_item
        from .pricing import total_price

        __all__ = ["Cart", "add_item", "total_price"]
        ''',
    "src/shop/cart.py": '''
        """Shopping carts."""
        from .pricing import total_price
        from . import storage


        class Cart(storage.Record):
            """Holds the items a customer is about to buy."""

            def checkout(self, coupon=None):
                """Charge the customer for every item in the cart."""
                amount = total_price(self.items, coupon=coupon)
                storage.save_order(self.owner, amount)
                return amount


        def add_item(cart, sku, quantity=1):
            """Add an item to the cart, merging quantities of the same SKU."""
            cart.items.append((sku, quantity))
            return cart


        def read(path):
            """Read a cart file."""
            return path.read_text()
        ''',
    "src/shop/pricing.py": '''
        """Prices and discounts."""
        TAX_RATE = 0.2


        def total_price(items, coupon=None):
            """Compute the total price of the items, tax included."""
            subtotal = sum(quantity * 10 for _sku, quantity in items)
            return round(subtotal * (1 + TAX_RATE), 2)
        ''',
    "src/shop/db.py": '''
        """The database connection."""


        def open_database(name):
            """Open the orders database file by name."""
            return name
        ''',
    "src/shop/storage.py": '''
        """Persistence of carts and orders."""
        from .db import open_database


        class Record:
            """Base class of everything stored in the orders database."""


        def save_order(owner, amount):
            """Write one order row for the owner with the charged amount."""
            connection = open_database("orders.sqlite")
            connection.execute("INSERT INTO orders VALUES (?, ?)", (owner, amount))
        ''',
    "src/shop/reader.py": '''
        """Unrelated module with a function named like cart.read."""


        def load(path):
            """Load a file by reading it."""
            return read(path)


        def read(path):
            """Read any file."""
            return open(path).read()
        ''',
}


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    for name, text in PACKAGE.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return tmp_path


def test_code_map_resolves_exports_and_calls_through_imports(shop: Path) -> None:
    code = build_code_map(shop, sorted(PACKAGE))
    assert code.package == "shop"
    assert code.exports == {"Cart": ("src/shop/cart.py", "Cart"),
                            "add_item": ("src/shop/cart.py", "add_item"),
                            "total_price": ("src/shop/pricing.py", "total_price")}
    edges = {(e.src, e.caller, e.dst, e.callee) for e in code.edges}
    assert ("src/shop/cart.py", "Cart.checkout", "src/shop/pricing.py", "total_price") in edges
    assert ("src/shop/cart.py", "Cart.checkout", "src/shop/storage.py", "save_order") in edges
    # Names used in code, not in docstrings: reader.py's docstring says "cart.read".
    assert "read" in code.modules["src/shop/reader.py"].identifiers
    assert "cart" not in code.modules["src/shop/reader.py"].identifiers
    assert {"total_price", "save_order", "storage"} <= code.modules["src/shop/cart.py"].identifiers
    # Same-named functions are not linked: reader.read is not cart.read.
    assert not any(e.dst == "src/shop/cart.py" and e.callee == "read" for e in code.edges)
    assert all(e.src != e.dst for e in code.edges)


def test_candidates_have_reasons_verbatim_facts_and_whole_questions(shop: Path) -> None:
    code = build_code_map(shop, sorted(PACKAGE))
    candidates = all_candidates(code)
    assert all(candidates[s] for s in SHAPES)
    for shape in SHAPES:
        for c in candidates[shape]:
            assert c.shape == shape
            assert c.question.endswith("?") and c.question[0].isupper()
            assert c.question.count("`") % 2 == 0
            assert 2 <= len(c.facts) <= 4
            assert max(c.grades.values()) == 3
            assert set(c.reasons) == {m for m, g in c.grades.items() if g > 0}
            for fact in c.facts:
                assert fact_problem(fact) is None, fact
                assert any(verbatim(fact, code.modules[m].source)
                           for m, g in c.grades.items() if g >= 2), (fact, c.question)


def test_cross_file_path_is_graded_three_then_two(shop: Path) -> None:
    code = build_code_map(shop, sorted(PACKAGE))
    triple = next(c for c in all_candidates(code)["cross-file"] if len(c.about) == 3)
    # Asked from what each step does (its docstring), never by its name or file.
    assert triple.question == ("When the code charges the customer for every item in the "
                               "cart, how does it write one order row for the owner with "
                               "the charged amount and then open the orders database file "
                               "by name?")
    assert triple.about == ("checkout", "save_order", "open_database")
    assert triple.grades == {"src/shop/cart.py": 3, "src/shop/storage.py": 2,
                             "src/shop/db.py": 2}
    assert "where the path starts" in triple.reasons["src/shop/cart.py"]
    assert "called by `save_order`" in triple.reasons["src/shop/db.py"]


def test_identity_is_about_the_exported_api(shop: Path) -> None:
    code = build_code_map(shop, sorted(PACKAGE))
    identity = all_candidates(code)["identity"]
    assert {c.key for c in identity} <= {"src/shop/cart.py:Cart", "src/shop/cart.py:add_item",
                                         "src/shop/pricing.py:total_price"}
    cart = next(c for c in identity if c.key == "src/shop/cart.py:Cart")
    assert cart.question == ("Which public class would you use to hold the items a customer "
                             "is about to buy, and which module defines it?")
    assert cart.grades["src/shop/storage.py"] == 2          # base class Record
    assert cart.grades["src/shop/__init__.py"] == 1         # exports it
    assert "base class" in cart.reasons["src/shop/storage.py"]


@pytest.mark.parametrize(("sentence", "clause"), [
    ("Return the terminal size.", "return the terminal size"),
    ("Prints a message and newline to stdout.", "print a message and newline to stdout"),
    ("Constructs and sends a request.", "construct and send a request"),
    ("Verify signature + expiry; raise if not.", "verify signature + expiry"),
    ("Processes queued jobs.", "process queued jobs"),
    ("Applies the patches.", "apply the patches"),
    ("A helper that wraps text.", None),
    ("Arguments are positional parameters to a command.", None),
    ("POST /api/login — returns tokens.", None),
    ("Minimal decorator recording a route.", None),
    ("Return.", None),
    ("Style a text with ANSI styles and returns the new string.",
     "style a text with ANSI styles and return the new string"),
])
def test_docstring_sentence_to_verb_phrase(sentence: str, clause: str | None) -> None:
    assert phrasing.verb_clause(sentence) == clause


@pytest.mark.parametrize(("line", "clause"), [
    ("Take an object and test to see if it can", ""),             # runs on to the next line
    ("Holds the captured result of an invoked CLI script.", "Holds the captured result of "
                                                              "an invoked CLI script"),
    ("Fetch a user by email, returning a raw dict.", "Fetch a user by email"),
    ("Constructs and sends a :class:`Request <Request>`.", ""),  # Sphinx markup
    ("Minimal decorator recording a (method, path, handler) tuple.", ""),
    ("The fully mutable of the", ""),
    ("Build the path URL to use.", "Build the path URL to use"),
])
def test_fact_clauses_end_where_the_writer_ended_them(line: str, clause: str) -> None:
    assert _clause(line) == clause


@pytest.mark.parametrize(("fact", "source", "found"), [
    ("def echo(", "def echo(message=None):", True),
    ("DEF ECHO(", "def echo(message=None):", True),
    ("def echo", "def echoes():", False),       # would cut a word
    ("cho(message", "def echo(message):", False),
    ("x = 1", "y = x = 1", True),
])
def test_verbatim_is_case_insensitive_on_word_boundaries(fact: str, source: str,
                                                         found: bool) -> None:
    assert verbatim(fact, source) is found


def _cand(shape: str, n: int) -> Candidate:
    return Candidate(shape, f"Question {shape} {n}?", {"a.py": 3}, {"a.py": "defines"},
                     ("alpha beta", "gamma delta"), f"{shape}:{n}")


@settings(max_examples=200, deadline=None)
@given(count=st.integers(1, 40),
       weights=st.tuples(*(st.floats(0, 10, allow_nan=False) for _ in SHAPES))
       .filter(lambda w: sum(w) > 0.01))
def test_split_count_gives_every_slot_a_shape(count: int, weights: tuple[float, ...]) -> None:
    mix = dict(zip(SHAPES, weights, strict=True))
    split = split_count(count, mix)
    assert sum(split.values()) == count
    assert all(v >= 0 for v in split.values())
    positive = [s for s in SHAPES if mix[s] > 0]
    if count >= len(positive):
        assert all(split[s] >= 1 for s in positive)
    assert all(split[s] == 0 for s in SHAPES if mix[s] == 0)


@settings(max_examples=150, deadline=None)
@given(count=st.integers(1, 30), have=st.tuples(*(st.integers(0, 15) for _ in SHAPES)))
def test_plan_drafts_count_or_says_why_per_missing_slot(count: int,
                                                        have: tuple[int, ...]) -> None:
    pools = {s: [_cand(s, i) for i in range(n)] for s, n in zip(SHAPES, have, strict=True)}
    result = plan(pools, count)
    available = sum(have)
    assert len(result.chosen) == min(count, available)
    assert len({c.key for c in result.chosen}) == len(result.chosen)
    empty = [line for line in result.shortfall if "left empty" in line]
    assert len(empty) == count - len(result.chosen)
    for line in result.shortfall:
        assert re.match(r"^(focused|cross-file|identity) slot (filled with a|left empty)", line)


def test_plan_follows_the_mix_when_it_can() -> None:
    pools = {s: [_cand(s, i) for i in range(10)] for s in SHAPES}
    result = plan(pools, 10, parse_mix("focused=2,cross-file=2,identity=1"))
    got = {s: sum(1 for c in result.chosen if c.shape == s) for s in SHAPES}
    assert got == {"focused": 4, "cross-file": 4, "identity": 2}
    assert result.shortfall == ()


@pytest.mark.parametrize(("text", "needle"), [
    ("focussed=1", "shape among"), ("focused", "shape among"), ("focused=x", "number"),
    ("focused=-1", "negative"), ("focused=0,identity=0", "positive"),
])
def test_parse_mix_errors(text: str, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        parse_mix(text)


def test_a_hub_helper_is_not_a_path_step(tmp_path: Path) -> None:
    """A helper called from everywhere (``log``) makes trivial paths: they come last."""
    callers = "\n\n".join(f'def step{i}():\n    """Run step {i} of the job."""\n'
                          f'    log("step {i} started")\n    return {i}' for i in range(8))
    files = {
        "pkg/__init__.py": "",
        "pkg/util.py": 'def log(message):\n    """Write one message to the job log."""\n'
                       '    return emit(message)\n',
        "pkg/sink.py": 'def emit(text):\n    """Send a text to the log sink."""\n'
                       '    return text.upper()\n',
        "pkg/jobs.py": "from .util import log\n\n\n" + callers + "\n",
        "pkg/report.py": 'from .sink import emit\n\n\ndef summary(rows):\n'
                         '    """Build the report summary of the rows."""\n'
                         '    return emit(", ".join(rows))\n',
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    code = build_code_map(tmp_path, sorted(files))
    cross = all_candidates(code)["cross-file"]
    assert cross[0].key == "pkg/report.py:summary"
    assert all(len(c.about) < 3 for c in cross)  # no path through the hub


def test_a_docstring_starting_on_its_second_line_keeps_its_first_letter(tmp_path: Path) -> None:
    """A string prefix (r, b, u) is stripped only before a quote: "Return …" on the line
    after the opening quotes is not "eturn …"."""
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "__init__.py").write_text("", encoding="utf-8")
    (root / "m.py").write_text(
        'def total(items):\n    """\n    Return the sum of every item price.\n    """\n'
        '    return sum(items)\n\n\ndef raw():\n    r"""Builds a raw pattern here."""\n',
        encoding="utf-8")
    code = build_code_map(tmp_path, ["pkg/__init__.py", "pkg/m.py"])
    symbols = code.modules["pkg/m.py"].symbols
    assert symbols["total"].doc_line == "Return the sum of every item price."
    assert symbols["raw"].doc_line == "Builds a raw pattern here."


@pytest.mark.parametrize(("clause", "third"), [
    ("create a charge and mirror it", "creates a charge and mirrors it"),
    ("try digest-auth and copy it", "tries digest-auth and copies it"),
    ("process the value", "processes the value"),
    ("push a frame", "pushes a frame"),
])
def test_a_callers_clause_reads_in_the_third_person(clause: str, third: str) -> None:
    assert phrasing.third_person(clause) == third


@pytest.mark.parametrize(("sentence", "phrase"), [
    ("The built-in HTTP Adapter for urllib3.", "the built-in HTTP Adapter for urllib3"),
    ("A case-insensitive `dict`-like object.", "a case-insensitive `dict`-like object"),
    ("A Connection error occurred.", None),       # a sentence, not what the class is
    ("The session is closed here.", None),
    ("Helper.", None),
    # a sentence's verb is no noun phrase; adjectives, participles and plurals are
    ("The flask object implements a WSGI application.", None),
    ("The request timed out while trying to connect.", None),
    ("The request object used by default in Flask.", "the request object used by default "
                                                    "in Flask"),
    ("A computed fitness score with decomposition.", "a computed fitness score with "
                                                     "decomposition"),
    ("An internal exception that signals Click to abort.", "an internal exception that "
                                                           "signals Click to abort"),
    ("The tags of a node.", "the tags of a node"),
])
def test_a_class_docstring_as_a_noun_phrase(sentence: str, phrase: str | None) -> None:
    assert phrasing.noun_phrase(sentence) == phrase


def _names_answer(code: object, candidate: Candidate) -> bool:
    answers = [answer_names(m, code.modules[m].source)  # type: ignore[attr-defined]
               for m, g in candidate.grades.items() if g == 3]
    return overlap(candidate.question, answers).names_answer


def test_no_candidate_names_its_answer(shop: Path) -> None:
    """The docstring route asks from what the code does: no question states a grade-3
    module's file or a symbol it defines (the rule validate warns with)."""
    code = build_code_map(shop, sorted(PACKAGE))
    candidates = all_candidates(code)
    assert sum(len(c) for c in candidates.values()) >= 6
    for pool in candidates.values():
        for c in pool:
            assert not _names_answer(code, c), c.question
            assert "`" not in c.question and ".py" not in c.question, c.question


def test_a_candidate_that_would_name_its_answer_is_skipped_and_counted(tmp_path: Path) -> None:
    """A docstring that names its own code ("Return the `Ledger` …") cannot be asked
    without the name: skipped with its reason, and the plan drafts another; a docstring
    with no sentence to ask from and a function with one fact are counted too."""
    files = {
        "pkg/__init__.py": "",
        "pkg/ledger.py": (
            'class Ledger:\n    """Holds the balance of one account."""\n\n'
            '    def balance(self, day):\n'
            '        """Return the `Ledger` balance at the end of the day."""\n'
            '        total = sum(entry.amount for entry in self.entries)\n'
            '        return round(total, 2) if day else total\n\n'
            '    def close(self):\n        """Closing."""\n'
            '        self.closed_at = compute_closing_time(self.entries)\n'
            '        return archive_entries(self.entries, self.closed_at)\n\n'
            '    def tag(self):\n        """Tag the ledger entries."""\n        pass\n'),
        "pkg/report.py": (
            'def summary(rows, width=80):\n'
            '    """Format the yearly report of every account."""\n'
            '    header = format_header(rows, width=width)\n'
            '    return header + render_rows(rows)\n'),
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    code = build_code_map(tmp_path, sorted(files))
    gate = Gate(code)
    focused = all_candidates(code, gate)["focused"]
    assert {c.key for c in focused} == {"pkg/ledger.py:Ledger", "pkg/report.py:summary"}
    assert gate.skipped == {phrasing.NAMES_ANSWER: 1, phrasing.NO_SENTENCE: 1, NO_FACTS: 1}
    drafted = plan({"focused": focused}, 2, {"focused": 1.0})
    assert len(drafted.chosen) == 2 and not drafted.shortfall
    assert all(not _names_answer(code, c) for c in drafted.chosen)
