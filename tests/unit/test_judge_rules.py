"""The judge's rules for unanchored facts (issue 22, item 2): exact names, numbers and
quoted strings; one contiguous stretch of real source text; negation and quantity read
from the fact; precision first; the similarity route's key terms; unicode.

The previous judge (evaluator-judge 2) credited 17 of the 22 cases below that must not be
supported: every list-of-names, far-apart, shuffled-decoy, negated-fact and quantity case,
and 5 of the 9 name/number/quote cases (the context negating an affirmative fact it already
refused)."""

from __future__ import annotations

import pytest

from evaluator.core.judge import (
    JUDGE_VERSION,
    STRETCH_LINES,
    JudgeConfig,
    PreparedContext,
    judge,
    judge_id,
    stretches,
)
from evaluator.core.judgeread import line_kind, read_fact


def supported(context: str, fact: str) -> bool:
    verdict = judge(context, [fact])
    return verdict.faithfulness == 1.0


# ------------------------------------------------------------------ names, numbers, quotes

@pytest.mark.parametrize(("context", "fact"), [
    # a name must be the same identifier, not its parts elsewhere
    ("signer = Signer(secret_key)\nstamp = make_timestamp(signer)",
     "TimestampSigner signs with a timestamp"),
    ("class TimestampSigner(Signer):\n    pass", "TimestampSignerV2 extends Signer"),
    # case matters for names
    ("def loads_unsafe(self, s):\n    return self._loads_unsafe_impl(s)",
     "LoadsUnsafe returns the unsafe loader implementation"),
    # a swapped number
    ("# the default maximum age is 3600 seconds\nmax_age = 3600",
     "the default maximum age is 60 seconds"),
    ("retries = 3  # retry the connection three times", "the connection is retried 5 times"),
    # a number word is a number
    ("retries = 3  # retry the connection three times", "the connection is retried four times"),
    # a quoted string must be there verbatim
    ("sep = '.'\nsalt = 'itsdangerous.Signer'", "the default salt is 'itsdangerous'"),
    ("key_derivation = \"django-concat\"", "the key derivation defaults to \"hmac\""),
    # a dotted name: its last part in the stretch, every part in the context
    ("class Serializer:\n    def dumps(self, obj):\n        return self.dump_payload(obj)",
     "Signer.dumps returns the dumped payload"),
])
def test_names_numbers_and_quoted_strings_must_match_exactly(context, fact):
    assert not supported(context, fact)


@pytest.mark.parametrize(("context", "fact"), [
    ("class TimestampSigner(Signer):\n    \"\"\"Signs with a timestamp.\"\"\"",
     "TimestampSigner signs with a timestamp"),
    ("# the default maximum age is 3600 seconds\nmax_age = 3600",
     "the default maximum age is 3600 seconds"),
    ("DEFAULT_MAX_AGE = 3_600  # seconds", "the default max age is 3600 seconds"),
    ("retries = 3  # retry the connection three times", "the connection is retried 3 times"),
    ("retries = 3  # retry the connection three times", "the connection is retried three times"),
    ("sep = '.'\nsalt = 'itsdangerous.Signer'",
     "the default salt is 'itsdangerous.Signer'"),
    ("class Serializer:\n    def dumps(self, obj):\n        return self.dump_payload(obj)",
     "Serializer.dumps returns the dumped payload"),
    ("def loads_unsafe(self, s):\n    return self._loads_unsafe_impl(s)",
     "loads_unsafe() returns the unsafe loader implementation"),
])
def test_exact_names_numbers_and_quotes_are_credited(context, fact):
    assert supported(context, fact)


def test_the_issue_reading_of_a_fact():
    reading = read_fact('Signer.sign() appends a 40-byte "sha1" digest; at most 3 retries')
    assert reading.names == ("Signer.sign",)
    assert reading.numbers == {"40", "3"}
    assert reading.quoted == ("sha1",)
    assert reading.quantities == {"most"}
    assert not reading.negated
    assert read_fact("URL and HTTP are acronyms, not names").names == ()
    assert read_fact("Catching Timeout will not catch ConnectTimeout").names == (
        "Timeout", "ConnectTimeout")


# --------------------------------------------------------------------------- contiguity

@pytest.mark.parametrize(("context", "fact"), [
    # a list of names (NeuralMind's summary lines) is no statement
    ("TimestampSigner (code)\nloads_unsafe() (code)\nSignatureExpired",
     "TimestampSigner raises SignatureExpired"),
    ("- TimestampSigner\n- SignatureExpired\n- max_age",
     "TimestampSigner raises SignatureExpired after max_age"),
    # the terms of a fact gathered from lines further apart than one stretch
    ("session = make(cookies)\n" + "x = compute(item)\n" * STRETCH_LINES
     + "result = merge(settings)", "the session merges cookies and settings"),
    # a label line cuts a stretch
    ("session = make(cookies)\nSettingsMixin (code)\nresult = merge(settings)",
     "the session merges cookies and settings"),
])
def test_support_comes_from_one_stretch_of_real_source_text(context, fact):
    assert not supported(context, fact)


@pytest.mark.parametrize(("context", "fact"), [
    # the fact's words shuffled, with no code at all
    ("# expired timestamp SignatureExpired raises signer the when",
     "the timestamp signer raises SignatureExpired when expired"),
    ("salt key the derives signer from the secret", "the signer derives the key from the salt"),
    ("proxies headers merges environment the session from",
     "the session merges proxies from the environment"),
])
def test_shuffled_prose_decoys_are_not_support(context, fact):
    assert not supported(context, fact)


@pytest.mark.parametrize(("context", "fact"), [
    # prose that states it in order
    ("# the signer derives the key from the secret and the salt",
     "the signer derives the key from the salt"),
    # code states it in the program's order
    ("def derive_key(self):\n    return hashlib.sha1(self.salt + self.secret_key).digest()",
     "the key is derived from the salt and the secret key"),
    # several real lines together
    ("session = make(cookies)\nresult = merge(settings)",
     "the session merges cookies and settings"),
])
def test_a_stretch_of_prose_in_order_or_code_is_support(context, fact):
    assert supported(context, fact)


@pytest.mark.parametrize(("line", "kind"), [
    ("TimestampSigner (code)", "label"), ("- SignatureExpired", "label"),
    ("loads_unsafe() (code)", "label"), ("", "blank"), ("   )", "blank"),
    ("x = 1", "code"), ("return value", "code"), ("def f(x):", "code"),
    ("self.sign(value)", "code"), ("# the signer derives the key", "prose"),
    ("Returns the value (or None) given.", "prose"),
])
def test_line_kinds(line, kind):
    assert line_kind(line) == kind


def test_stretches_start_at_a_term_and_stop_at_a_label_or_the_limit():
    context = PreparedContext("a = session\nb = 1\nSessionLabel (code)\nc = session\n"
                              + "d = 2\n" * 10)
    reading = read_fact("the session")
    spans = [(s.start, s.end) for s in stretches(context, reading, config=JudgeConfig())]
    # from each line holding a term: to each line holding one, and to the furthest line
    assert spans == [(0, 1), (0, 2), (3, 4), (3, 3 + STRETCH_LINES)]


# ------------------------------------------------- judge 4: shorter stretches, names, quotes
# The three refused cases and the first credited one were judged the other way by judge 3
# (38e14a7); the other credited cases guard what the new name and quote rules must keep.

@pytest.mark.parametrize(("context", "fact"), [
    # a dotted name Class.method: a function of the module that returns the class is not it
    ('def escape(s) -> Markup:\n    """Escape the string s and return it as Markup."""\n'
     '    return Markup(s)', "Markup.escape escapes the string and returns Markup"),
    # a quoted string is met as a quoted string, not by the bare word
    ("def soft_str(s):\n    if s is None:\n        return None  # None stays None\n",
     "soft_str returns the string 'None' for None"),
    # the empty string '' is a quoted string too
    ("def escape_silent(s):\n    if s is None:\n        return Markup()\n    return escape(s)",
     "escape_silent returns Markup('') when s is None"),
])
def test_dotted_names_and_quoted_strings_are_met_as_such(context, fact):
    assert not supported(context, fact)


@pytest.mark.parametrize(("context", "fact"), [
    # a shorter stretch inside the limit: the fact's words in order on the first lines,
    # repeated in another order further down (within ten lines) — judge 3 read the order
    # over the whole ten lines and refused it
    ('def escape(s):\n    """Replace the characters & and < with HTML-safe sequences in\n'
     "    the given string, for showing text in a page.\n\n"
     "    If the object has an __html__ method, it is called: safe\n"
     '    HTML is never escaped again, and its characters are kept.\n    """',
     "escape replaces characters with HTML-safe sequences"),
    # Class.method: the method inside its class, or an indented def in a chunk of the class
    # that does not show the class line
    ("class Markup(str):\n    @classmethod\n    def escape(cls, s):\n"
     '        """Escape the string s and return it as Markup."""\n        return cls(s)',
     "Markup.escape escapes the string and returns Markup"),
    ("    @classmethod\n    def escape(cls, s) -> Markup:\n"
     '        """Escape the string s and return it as Markup."""\n        return cls(s)',
     "Markup.escape escapes the string and returns Markup"),
    ("class Markup(str):\n    def __add__(self, value):\n"
     "        return self.escape(value)", "Markup.escape is called by __add__"),
    # quoted strings between any quote marks, the empty string, whitespace inside kept apart
    ('def soft_str(s):\n    if s is None:\n        return "None"\n',
     "soft_str returns the string 'None' for None"),
    ('def escape_silent(s):\n    if s is None:\n        return Markup("")\n    return escape(s)',
     "escape_silent returns Markup('') when s is None"),
    ('def get_token(v):\n    return v.removeprefix("Bearer ").strip()',
     'get_token calls removeprefix("Bearer ")'),
    ("def soft_str(s):\n    \"\"\"Returns ``'None'`` for None.\"\"\"\n    return str(s)",
     "soft_str returns 'None' for None"),
])
def test_judge_4_credits(context, fact):
    assert supported(context, fact)


def test_the_audit_span_is_the_shortest_supporting_stretch():
    from evaluator.core.judge import audit

    context = ("def purge(db):\n    # the nightly job purges expired sessions\n"
               "    db.clear()\n    db.vacuum()\n    db.close()\n")
    fact = "the nightly job purges expired sessions"
    (row,) = audit(context, judge(context, [fact]))
    assert row.found and row.judged_by == "terms"
    # judge 3 gave the whole run from its first line (with db.clear(), vacuum, close)
    assert row.span == "def purge(db): # the nightly job purges expired sessions"


# ----------------------------------------------------------------- negation and quantity

@pytest.mark.parametrize(("context", "fact"), [
    # the issue's example: the fact's own negation is read
    ("# Catching Timeout catches ConnectTimeout as well.\nexcept Timeout:",
     "Catching Timeout will not catch ConnectTimeout"),
    ("# the session follows redirects", "the session never follows redirects"),
    # the context's negation against an affirmative fact
    ("# the session does not follow redirects", "the session follows redirects"),
    # a quantity of the fact must be met
    ("# the signer checks the signature", "the signer always checks the signature"),
    ("# the signer checks the first signature", "the signer checks only the first signature"),
    ("# headers are validated one by one\nvalidate(headers[0])",
     "every header is validated"),
])
def test_negation_and_quantity_are_read_from_the_fact(context, fact):
    assert not supported(context, fact)


@pytest.mark.parametrize(("context", "fact"), [
    ("# Catching Timeout will not catch ConnectTimeout.\nexcept Timeout:",
     "Catching Timeout will not catch ConnectTimeout"),
    ("if not self.verify_signature(value, sig):\n    raise BadSignature(sig)",
     "BadSignature is raised if the signature does not verify"),
    ("# the signer always checks the signature", "the signer always checks the signature"),
    ("for header in headers:\n    validate(header)", "every header is validated"),
    ("if len(value) <= max_size:\n    return value",
     "the value is returned when its size is at most max_size"),
])
def test_agreeing_negation_and_quantity_are_credited(context, fact):
    assert supported(context, fact)


def test_a_negated_fact_against_an_affirming_context_is_contradicted():
    verdict = judge("# Catching Timeout catches ConnectTimeout as well.",
                    ["Catching Timeout will not catch ConnectTimeout"])
    assert verdict.contradiction == 1.0 and verdict.faithfulness == 0.0


# ------------------------------------------------------------------------------ unicode

@pytest.mark.parametrize(("context", "fact", "expected"), [
    ("größe = berechne_größe(datei)  # die Größe der Datei",
     "berechne_grosse gibt die Größe der Datei", False),  # not the same name
    ("größe = berechne_größe(datei)  # die Größe der Datei berechnen",
     "berechne_größe berechnet die Größe der Datei", True),
    ("max_age = ３６００  # full-width digits read as 3600", "max_age is 3600 seconds", True),
    ("max_age = ３６００  # full-width digits", "max_age is 360 seconds", False),
    ("# the signer doesn’t check the signature", "the signer checks the signature", False),
    ("# the signer doesn’t check the signature", "the signer doesn't check the signature",
     True),
    ("name = “Signer”\nsalt = name", "the salt is “Signer”", True),
    ("name = “Signer”\nsalt = name", "the salt is “Verifier”", False),
    ("ΣΙΓΜΑ = σίγμα(τιμή)", "σίγμα computes ΣΙΓΜΑ from τιμή", True),
    ("ΣΙΓΜΑ = σίγμα(τιμή)", "the Σίγμα helper computes ΣΙΓΜΑ from τιμή", False),
])
def test_unicode_names_numbers_and_quotes(context, fact, expected):
    assert supported(context, fact) is expected


def test_the_judge_identity_is_bumped():
    assert JUDGE_VERSION == 4
    assert judge_id(similarity=False) == "evaluator-judge 4 (terms)"


# ---------------------------------------------------------- scope, mixed order, statements

def test_a_line_belongs_to_its_enclosing_definitions():
    context = ("class Signer:\n    def unsign(self, value):\n"
               "        if self.sep not in value:\n            raise BadSignature(value)\n")
    assert supported(context, "Signer.unsign raises BadSignature")
    # the dotted name needs its class in the stretch or its scope, not elsewhere
    elsewhere = ("class Markup(str):\n    pass\n" + "x = 1\n" * STRETCH_LINES
                 + "def escape(s):\n    return escape_inner(s)\n")
    assert not supported(elsewhere, "Markup.escape returns the escaped inner value")


def test_prose_in_a_mixed_stretch_is_read_in_order_unless_the_code_states_it():
    context = ('    """Convert escaped markup back into a text string. This replaces\n'
               '    HTML entities with the characters they represent."""\n'
               "    from html import unescape\n    return unescape(str(self))\n")
    assert supported(context, "unescape replaces HTML entities with the characters they "
                              "represent")
    assert not supported(context, "unescape replaces characters with the HTML entities "
                                  "that represent them")


@pytest.mark.parametrize(("line", "kind"), [
    ("return value", "code"), ("raise BadSignature", "code"),
    ("if the signature does not match the value it is rejected", "prose"),
    ("for every header the value is checked again", "prose"),
])
def test_a_statement_keyword_makes_code_only_on_a_short_line(line, kind):
    assert line_kind(line) == kind


def test_python_none_is_not_a_negation():
    assert not read_fact("escape(None) returns Markup('None')").negated
    assert read_fact("none of the keys is used").negated
    assert supported(">>> escape(None)\nMarkup('None')", "escape(None) is Markup('None')")
