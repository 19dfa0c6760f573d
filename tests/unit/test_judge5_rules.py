"""Judge 5's rules (issue 22, item 2), each found on the tuning data (markupsafe and the
team's suites, never the held-out packages): prose order read by the first appearance of
each term, so a repeated word gives a shuffled bag no slack; a call with arguments quoted by
a fact must be in the stretch verbatim (which name is the function and which the argument);
two names of the fact in a row must be named in that order (roles); a condition clause
(when, if, unless, …) is ordered on its own, since code and docstrings often state it first;
each negation of the fact needs its negated word;
a negated fact needs its negation on the word the fact negates. Judge 4 credits every case
of the first test."""

from __future__ import annotations

import pytest

from evaluator.core.judge import judge
from evaluator.core.judgeread import fact_calls, read_fact

STYLE = ("def style(text, stream):\n    # strip the styles when the stream is not a terminal\n"
         "    if not isatty(stream):\n        return strip(text)")
ESCAPE = ("def escape(value):\n    # If the value is already a plain string, skip the html check.\n"
          "    if type(value) is str:\n        return Markup(value)")


def supported(context: str, fact: str) -> bool:
    return judge(context, [fact]).faithfulness == 1.0


@pytest.mark.parametrize(("context", "fact"), [
    # shuffled decoys whose repeated word gave the order check slack
    ("is used setting request the session None setting",
     "When the session setting is None the request setting is used."),
    ("def deactivate_user user_id None int", "def deactivate_user(user_id: int) -> None"),
    # a docstring naming the same things in the other order
    ("    # Look for comments then tags separately. Otherwise, a comment that\n"
     "    # contains a tag would end early, leaving some of the comment behind.",
     "striptags removes tags before comments so a comment containing a tag ends early"),
    # a call's name and argument swapped
    ("def refresh(access_token):\n    payload = decode_token(access_token)",
     "payload = access_token(decode_token)"),
    ("conn = sqlite3.connect(_DB_PATH)", "conn = _DB_PATH(sqlite3.connect"),
    ("    return hmac.compare_digest(plain.encode(), hashed.encode())",
     "plain.encode(hmac.compare_digest(), hashed.encode())"),
    # which of two names does what: the names in the other order
    ("class TimestampSigner(Signer):\n    def unsign(self, value):\n"
     "        raise SignatureExpired(value)",
     "SignatureExpired raises TimestampSigner on an expired value"),
    ("cur.execute('INSERT INTO refunds (charge_id, refund_id, reason) VALUES (?, ?, ?)')",
     "INSERT INTO refunds (refund_id, charge_id, reason"),
    # each negation of the fact needs its own negated word
    (STYLE, "Styles are not stripped when the stream is not a terminal."),
    # the negation is elsewhere in the stretch, not on the word the fact negates
    ("def extract(jar, response):\n    if not response.raw:\n        return\n"
     "    jar.extract_cookies(response)",
     "Cookies are not extracted from the response into the jar."),
])
def test_judge5_refuses(context, fact):
    assert not supported(context, fact)


@pytest.mark.parametrize(("context", "fact"), [
    ("def refresh(access_token):\n    payload = decode_token(access_token)",
     "payload = decode_token(access_token)"),
    ("    return hmac.compare_digest(plain.encode(), hashed.encode())",
     "hmac.compare_digest(plain.encode(), hashed.encode())"),
    # whitespace inside a call does not count; a cut-off call is matched as far as it goes
    ("conn = sqlite3.connect( _DB_PATH )", "conn = sqlite3.connect(_DB_PATH"),
    # a module prefix the stretch imports the function from
    ("        from html import unescape\n\n        return unescape(str(self))",
     "unescape returns html.unescape(str(self))"),
    # a repeated word in a real sentence in the fact's order
    ("    # Look for comments then tags separately. Otherwise, a comment that\n"
     "    # contains a tag would end early, leaving some of the comment behind.",
     "look for comments, then tags: a comment that contains a tag would end early"),
    ("class TimestampSigner(Signer):\n    def unsign(self, value):\n"
     "        raise SignatureExpired(value)",
     "TimestampSigner raises SignatureExpired on an expired value"),
    ("cur.execute('INSERT INTO refunds (charge_id, refund_id, reason) VALUES (?, ?, ?)')",
     "INSERT INTO refunds (charge_id, refund_id, reason"),
    # a quoted word is a value, not the name: escape before Markup
    ('def show(value):\n    """Returns the markup of a value.\n\n    >>> escape(None)\n'
     "    Markup('None')\n    \"\"\"", "escape(None) returns Markup('None')"),
    (STYLE, "Styles are stripped when the stream is not a terminal."),
    # a condition the source states first ("if …, skip"): each clause in its own order
    (ESCAPE, "escape skips the html check when the value is a plain string"),
    # the negation on the word the fact negates
    ("def extract(jar, response):\n    # cookies are not extracted from the response\n"
     "    return jar", "Cookies are not extracted from the response into the jar."),
])
def test_judge5_still_supports(context, fact):
    assert supported(context, fact)


def test_a_call_without_arguments_is_a_name_not_a_call():
    assert fact_calls("Markup() with an encoding decodes the object") == ()
    assert fact_calls("escape(None) returns Markup('None')") == (
        "escape ( None )", "Markup ( ' None ' )")
    assert fact_calls("hmac.new(JWT_SECRET.encode(), data") == (
        "hmac . new ( JWT_SECRET . encode ( ) , data",)


def test_the_negated_terms_are_those_at_most_three_words_after_the_cue():
    reading = read_fact("Cookies are not extracted from the response into the jar.")
    assert reading.negated and reading.negated_terms == (frozenset({"extract"}),)
    assert read_fact("A pool does not block by default").negated_terms == (
        frozenset({"block", "default"}),)
    assert read_fact("Styles are not stripped when the stream is not a terminal").negated_terms \
        == (frozenset({"strip"}), frozenset({"termin"}))
