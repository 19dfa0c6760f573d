"""The rules judge 5 added (issue 22; docs/judge.md). Every test here fails with judge 4
(the judge at b0aa213): each rule was chosen on the tuning data (markupsafe, itsdangerous,
packaging, idna and the suites), and these contexts and facts are written for the tests,
not taken from that data."""

from __future__ import annotations

import pytest

from evaluator.core.judge import judge
from evaluator.core.judgeread import read_fact
from evaluator.core.judgetext import terms


def supported(context: str, fact: str) -> bool:
    return judge(context, [fact]).faithfulness == 1.0


def test_prose_is_read_in_order_of_first_appearance():
    # a shuffled decoy whose repeated word let judge 4 find the fact's order after it
    assert not supported("body: the parser reads the header body", "the parser reads the "
                                                                   "header before the body")
    assert supported("the parser reads the header before the body",
                     "the parser reads the header before the body")


@pytest.mark.parametrize(("context", "fact"), [
    # the digits of a word are never the one term coverage may miss
    ("# the signer digests the key with sha1", "the signer digests the key with SHA256"),
    # nor is a word written in capitals (an acronym)
    ("# labels are normalized to form NFC", "labels are normalized to form NFKC"),
])
def test_digits_of_a_word_and_acronyms_must_be_there(context, fact):
    assert not supported(context, fact)
    assert supported(context, context.lstrip("# "))


def test_a_word_with_letters_and_digits_is_not_a_name():  # judge 4 too: the rule's limit
    # "base64" meets b64encode: its digits are there, its letters may be the missing term
    assert supported("    return b64encode(username + ':' + password)",
                     "the username and password are base64 encoded")


def test_generic_synonyms_of_code_are_one_term():
    context = "    # Throw an exception when the token has expired"
    assert supported(context, "raises an error when the token has expired")
    assert terms("deletes, dropped, purged") == terms("removes")
    assert terms("error exception") == terms("error")


@pytest.mark.parametrize(("context", "true", "false"), [
    ("    # the name is converted to lowercase before the lookup",
     "the name is converted to lowercase before the lookup",
     "the name is converted to uppercase before the lookup"),
    ("    # the header value is returned changed by the hook",
     "the header value is returned changed by the hook",
     "the header value is returned unchanged by the hook"),
])
def test_a_missing_term_whose_opposite_the_stretch_holds_refuses_it(context, true, false):
    assert supported(context, true)
    assert not supported(context, false)


def test_two_words_of_the_fact_meet_one_compound_term():
    assert supported("    # a codepoint outside the table is rejected",
                     "a code point outside the table is rejected")


def test_a_quantity_word_met_by_code_counts_as_a_term():
    context = "def check(label):\n    if len(label) > 63:\n        raise LabelError(label)"
    assert supported(context, "the label is longer than 63")
    assert read_fact("the label is longer than 63").quantity_terms == (
        ("more", frozenset({"longer"})),)


def test_a_stretch_stops_at_the_next_definition():
    context = ("def sign_value(value):\n    return sep.join([value, signature(value)])\n\n"
               "def unsign_value(signed):\n    pass\n")
    assert not supported(context, "unsign_value joins the value and its signature")
    assert supported(context, "sign_value joins the value and its signature")
    # a decorator does not end it: the def it decorates follows
    decorated = "@property\ndef size(self):\n    return len(self.items)"
    assert supported(decorated, "size is a property")


def test_a_negation_inside_a_string_of_code_is_read():
    context = ("    if label.startswith('-'):\n"
               "        raise LabelError(\"a label must not start with a hyphen\")")
    assert supported(context, "a label must not start with a hyphen")
    assert not supported(context, "a label must start with a hyphen")
    verdict = judge(context, ["a label must start with a hyphen"]).facts[0]
    assert verdict.contradicted
