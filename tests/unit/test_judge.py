"""The faithfulness judge (evaluator.core.judge): identifiers, stemming, negation, windows,
empty input, unicode — and the N-15 judge's known bugs shown not to affect it."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from neuralmind import ragas

from evaluator.core.judge import (
    COVERAGE_THRESHOLD,
    FACT_SIMILARITY_THRESHOLD,
    JUDGE_VERSION,
    ROUTE_MIN_COVERAGE,
    STRETCH_LINES,
    JudgeConfig,
    PreparedContext,
    candidate_stretch,
    idf_weights,
    judge,
    judge_id,
)
from evaluator.core.judgeread import is_prose_fact
from evaluator.core.judgetext import is_prose, segments, split_identifier, stem, words
from evaluator.core.judgevectors import cosine, similarity_verdict


@pytest.mark.parametrize(("word", "parts"), [
    ("InvalidHeader", ("invalid", "header")),
    ("HTTPAdapter", ("http", "adapter")),
    ("max_retries", ("max", "retries")),
    ("getURL2", ("get", "url", "2")),
    ("__init__", ("init",)),
    ("_PROG_COMPLETE", ("prog", "complete")),
    ("urllib3", ("urllib", "3")),
    ("ÉtéCafé", ("été", "café")),
    ("x", ("x",)),
])
def test_identifiers_split_on_case_underscores_and_digits(word, parts):
    assert split_identifier(word) == parts


@pytest.mark.parametrize(("a", "b"), [
    ("redirects", "redirected"), ("headers", "header"), ("retries", "retrying"),
    ("context", "ctx"), ("maximum", "max"), ("directories", "dir"), ("eight", "8"),
])
def test_stemming_and_code_abbreviations_join_forms(a, b):
    assert stem(a) == stem(b)


def test_n15_substring_bug_does_not_count():
    """N-15 matches substrings: 'get' is 'found' in 'target'. The judge matches terms."""
    assert ragas.fact_recall("def target(): pass", ["get"]) == 1.0  # the old bug
    verdict = judge("def target(): pass", ["get"])
    assert verdict.fact_recall == 0.0
    assert verdict.faithfulness == 0.0


def test_plain_sentence_fact_meets_identifiers():
    context = "def should_strip_auth(self, old_url, new_url):\n    return True\n"
    assert judge(context, ["strip auth for a new url"]).fact_recall == 1.0


def test_identifier_with_negative_word_is_not_a_contradiction():
    """N-15 reads the 'invalid' in InvalidHeader as a negation and halves the score."""
    context = "if not valid:\n    raise InvalidHeader(f'header value {value} is checked')\n"
    fact = "header value is checked"
    assert ragas.contradiction_score(context, [fact]) > 0  # the old bug
    verdict = judge(context, [fact])
    assert verdict.contradiction == 0.0
    assert verdict.faithfulness == 1.0


@pytest.mark.parametrize("context", [
    "if not follow_redirects:\n    return resp\n",  # Python's not operator
    "x = resp is not None and follow_redirects\n",
    "raise NotImplementedError('follow redirects')\n",  # identifier part
    "no_proxy = follow_redirects()\n",
])
def test_negation_in_code_or_identifiers_is_no_cue(context):
    verdict = judge(context, ["follow redirects"])
    assert verdict.fact_recall == 1.0
    assert verdict.contradiction == 0.0


@pytest.mark.parametrize("context", [
    "# the session does not follow redirects\n",
    '"""The session never follows redirects."""\n',
    "The session cannot follow redirects.\n",
])
def test_negation_in_prose_near_the_fact_contradicts(context):
    verdict = judge(context, ["the session follows redirects"])
    assert verdict.fact_recall == 1.0
    assert verdict.contradiction == 1.0
    assert verdict.faithfulness == 0.0


def test_negated_fact_is_not_contradicted_by_its_negation():
    verdict = judge("# the session does not follow redirects",
                    ["the session will not follow redirects"])
    assert verdict.faithfulness == 1.0


def test_negation_far_from_the_fact_terms_is_ignored():
    context = "# not in this case, but later the session follows every redirect"
    assert judge(context, ["the session follows redirects"]).contradiction == 0.0


def test_a_fact_is_contradicted_only_when_every_covering_span_negates_it():
    negated = "# the session does not follow redirects\n"
    affirmed = "# the session will follow redirects\n"
    filler = "value = compute(item)\n" * (STRETCH_LINES * 2)
    verdict = judge(negated + filler + affirmed, ["the session follows redirects"])
    assert verdict.contradiction == 0.0
    assert verdict.faithfulness == 1.0


@pytest.mark.parametrize("context", ["", "   \n\t\n", "\n\n\n"])
def test_empty_context_scores_zero(context):
    verdict = judge(context, ["a fact about sessions", "another fact"])
    assert (verdict.faithfulness, verdict.fact_recall, verdict.contradiction) == (0, 0, 0)
    assert verdict.facts_missing == ("a fact about sessions", "another fact")


def test_no_facts_scores_zero():
    assert judge("anything at all", []).faithfulness == 0.0


def test_a_fact_of_stop_words_only_is_never_found():
    assert judge("it is what it is", ["it is what it is"]).fact_recall == 0.0


@pytest.mark.parametrize(("context", "fact"), [
    # full-width letters (NFKC)
    ("ｔｈｅ ｈｅａｄｅｒ ｖａｌｕｅ ｉｓ ｃｈｅｃｋｅｄ", "header value"),
    ("Die GRÖSSE der Datei", "größe datei"),              # case folding ß → ss
    ("# Zeichenkodierung: utf‑8 wird erkannt", "zeichenkodierung erkannt"),
    ("def 获取编码(响应): pass", "获取编码 响应"),            # non-Latin identifiers
])
def test_unicode(context, fact):
    assert judge(context, [fact]).fact_recall == 1.0


def test_terms_far_apart_are_not_one_fact():
    """Coverage is counted inside one stretch of at most STRETCH_LINES lines."""
    filler = "value = compute(item)\n" * (STRETCH_LINES * 2)
    far = "session = make(cookies)\n" + filler + "result = merge(settings)\n"
    near = "session = make(cookies)\nresult = merge(settings)\n"
    fact = ["the session merges cookies and settings"]
    assert judge(near, fact).fact_recall == 1.0
    assert judge(far, fact).fact_recall == 0.0


def test_coverage_threshold_boundary():
    fact = ["alpha bravo charlie delta echo"]
    three = judge("x = alpha(bravo, charlie)", fact)
    two = judge("x = alpha(bravo)", fact)
    assert three.facts[0].coverage == pytest.approx(0.6)
    assert three.fact_recall == (1.0 if COVERAGE_THRESHOLD <= 0.6 else 0.0)
    assert two.fact_recall == 0.0
    assert judge("x = alpha(bravo)", fact,
                 config=JudgeConfig(coverage_threshold=0.4)).fact_recall == 1.0


def test_weights_change_coverage():
    fact = ["session merges cookies"]
    weights = {stem("session"): 0.1, stem("merges"): 1.0, stem("cookies"): 1.0}
    assert judge("x = session.merges()", fact).facts[0].coverage == pytest.approx(2 / 3)
    assert judge("x = session.merges()", fact, weights=weights).facts[0].coverage == \
        pytest.approx(1.1 / 2.1)


def test_missing_terms_are_reported():
    verdict = judge("the session merges them", ["the session merges cookies"])
    assert verdict.facts[0].missing_terms == (stem("cookies"),)


@pytest.mark.parametrize(("line", "prose"), [
    ("# comment about it", True), ("The session follows redirects.", True),
    ("if not x:", False), ("x = y", False), ("return not done", False), ("def f():", False),
    ('"""Docstring line."""', True),
])
def test_prose_or_code(line, prose):
    assert is_prose(line) is prose


def test_cues_are_whole_prose_words():
    assert [w.cue for w in words("# not no_proxy NotImplemented never")] == [
        True, False, False, False, False, True]


@given(st.lists(st.text(alphabet="ab c\n_XY1", max_size=30), max_size=60),
       st.integers(min_value=1, max_value=20))
@settings(max_examples=60, deadline=None)
def test_segments_drop_nothing(lines, size):
    text = "\n".join(lines)
    cut = segments(text, lines=size)
    kept = {line for s in cut for line in s.split("\n")}
    assert {line for line in text.splitlines() if line.strip()} <= kept


@given(st.text(alphabet="abc xyz\n", max_size=3000), st.integers(min_value=20, max_value=400))
@settings(max_examples=60, deadline=None)
def test_segments_respect_max_chars_and_keep_every_line(text, max_chars):
    cut = segments(text, lines=8, max_chars=max_chars)
    assert all(len(s) <= max_chars for s in cut)
    for line in text.splitlines():
        if line.strip() and len(line) <= max_chars // 2:
            assert any(line in s for s in cut), line


@given(st.text(max_size=400), st.lists(st.text(min_size=1, max_size=40), max_size=4))
@settings(max_examples=80, deadline=None)
def test_scores_are_bounded_and_consistent(context, facts):
    verdict = judge(context, facts)
    assert 0.0 <= verdict.faithfulness <= verdict.fact_recall <= 1.0
    assert 0.0 <= verdict.contradiction <= verdict.fact_recall
    assert math.isclose(verdict.faithfulness, verdict.fact_recall - verdict.contradiction)
    assert judge(context, facts) == verdict  # deterministic


def test_idf_weights_favour_rare_terms():
    weights = idf_weights(["session cookie", "session header", "session redirect"])
    assert weights[stem("session")] < weights[stem("cookie")]


def test_cosine_and_similarity_verdict():
    assert cosine([1.0, 0.0], [0.0, 1.0]) == 0.0
    assert cosine([1.0, 1.0], [2.0, 2.0]) == pytest.approx(1.0)
    assert cosine([], [1.0]) == 0.0
    assert cosine([0.0, 0.0], [1.0, 1.0]) == 0.0
    verdict = similarity_verdict([[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.1], [0.0, -1.0]],
                                 threshold=0.5)
    assert verdict.similarities[0] > 0.9
    assert verdict.similarities[1] < 0.5
    assert verdict.fact_recall == 0.5
    assert similarity_verdict([], [[1.0]]).fact_recall == 0.0
    assert similarity_verdict([[1.0]], []).similarities == (0.0,)


# ----------------------------------------------------------------- the similarity route


class FakeSimilarity:
    """Records every batch it is asked and answers a fixed cosine per (fact, segment)."""

    def __init__(self, cosine_of=lambda fact, segment: 0.9):
        self.batches: list[list[tuple[str, str]]] = []
        self.cosine_of = cosine_of

    def __call__(self, pairs):
        self.batches.append(list(pairs))
        return [self.cosine_of(f, s) for f, s in pairs]


@pytest.mark.parametrize(("fact", "prose"), [
    ("The session keeps cookies between requests.", True),
    ("thread-local connection to the fixture", True),
    ("Canonical user record", True),
    ("hmac.compare_digest(plain.encode(), hashed.encode())", False),
    ("def deactivate_user(user_id: int) -> None", False),
    ("JWT_SECRET = \"change-me-in-prod\"", False),
    ("GET /api/billing/invoices", False),
    ("password_hash: str", False),
    ("@dataclass class User", False),
    ("Soft-delete a user by flipping is_active", False),
    ("the getUser helper", False),
    ("raise BillingError", False),
    ("the `verify` flag", False),
    ("the 'x' option", False),
    ("Path(__file__).parent", False),
    ("", False),
    ("   ", False),
    # prose that looks a little like code: apostrophes in words, decimals, abbreviations,
    # a sentence starting with a Python keyword, versions, typographic apostrophes
    ("the session's cookies persist", True),
    ("it doesn't follow redirects", True),
    ("the timeout defaults to 0.5 seconds", True),
    ("raise an error when the token expired", True),
    ("from the environment, e.g. the proxy settings", True),
    ("requests 2.34.2 reads the netrc file", True),
    ("l’été est là", True),
])
def test_prose_facts_are_plain_sentences(fact, prose):
    assert is_prose_fact(fact) is prose


def test_a_prose_fact_the_terms_miss_is_found_by_similarity():
    similar = FakeSimilarity(lambda f, s: FACT_SIMILARITY_THRESHOLD)
    context = "def purge():\n    # the nightly job purges expired sessions\n    db.clear()\n"
    # 5 key terms of 9: the others are generic
    fact = "The nightly job purges expired sessions and returns the given default value."
    assert judge(context, [fact]).faithfulness == 0.0
    verdict = judge(context, [fact], similar=similar)
    assert verdict.faithfulness == verdict.fact_recall == 1.0
    assert verdict.facts[0].by_similarity
    assert verdict.facts[0].similarity == pytest.approx(FACT_SIMILARITY_THRESHOLD)
    assert similar.batches == [[(fact, context.rstrip("\n"))]]
    assert verdict.facts[0].stretch == context.rstrip("\n")


def test_below_the_threshold_the_fact_stays_missing():
    similar = FakeSimilarity(lambda f, s: FACT_SIMILARITY_THRESHOLD - 0.001)
    context = "# the nightly job purges expired sessions"
    fact = "The nightly job purges expired sessions and returns the given default value."
    verdict = judge(context, [fact], similar=similar)
    assert verdict.fact_recall == 0.0
    assert not verdict.facts[0].by_similarity
    assert verdict.facts[0].similarity is not None


def test_code_facts_found_facts_and_facts_without_a_candidate_are_never_asked():
    similar = FakeSimilarity()
    context = "# the session follows redirects\nclient = make(adapters)\n"
    facts = ["client.mount(prefix, adapter)",           # code (2 of 4 terms): terms alone
             "the session follows redirects",           # found by its terms
             "cookies expire at midnight"]              # no stretch holds a term of it
    verdict = judge(context, facts, similar=similar)
    assert similar.batches == []
    assert [f.found for f in verdict.facts] == [False, True, False]
    assert verdict.facts[2].similarity is None  # no term of it: not asked


@pytest.mark.parametrize(("context", "fact"), [
    # "salt" is a key term of the fact and absent: the model is never asked
    ("# the key is derived from the secret key with hmac\nkey = derive(secret_key)",
     "the signing key is derived from the secret key and the salt"),
    # a negated stretch cannot credit an affirmative fact by similarity
    ("# The client does not retry failed connections automatically.",
     "the client retries failed connections automatically on its own"),
    # an affirmative stretch cannot credit a negated fact by similarity
    ("# The client retries failed connections automatically.",
     "the client never retries failed connections on its own"),
    # a number must match even for the route
    ("# the connection pool keeps 10 connections per host by default",
     "the pool keeps 20 connections per host"),
    # shuffled words with no code: prose must keep the fact's order
    ("# host per connections pool keeps the", "the pool keeps connections per host"),
])
def test_the_similarity_route_never_credits_what_the_rules_refuse(context, fact):
    similar = FakeSimilarity(lambda f, s: 0.99)
    verdict = judge(context, [fact], similar=similar)
    assert verdict.faithfulness == 0.0
    assert not verdict.facts[0].by_similarity


def test_a_contradicted_fact_is_not_rescued_by_similarity():
    similar = FakeSimilarity()
    verdict = judge("# the session does not follow redirects",
                    ["the session follows redirects"], similar=similar)
    assert verdict.contradiction == 1.0 and verdict.faithfulness == 0.0
    assert similar.batches == []


def test_an_empty_context_asks_nothing():
    similar = FakeSimilarity()
    assert judge("", ["Expired sessions are deleted nightly."], similar=similar).fact_recall == 0
    assert judge("  \n ", ["Expired sessions are deleted nightly."],
                 similar=similar).fact_recall == 0
    assert similar.batches == []


def test_the_candidate_is_the_stretch_with_most_fact_terms():
    filler = "\n".join(f"x{i} = {i}" for i in range(40))
    best = "# the nightly job purges expired sessions"
    weak = "# the nightly job purges sessions"
    context = "\n".join([weak, filler, best, filler])
    fact = "The nightly job purges expired sessions and returns the given default value."
    candidate = candidate_stretch(PreparedContext(context), fact)
    assert candidate is not None and candidate.startswith(best)
    assert candidate_stretch(PreparedContext("nothing relevant here at all"),
                             "cookies expire") is None


def test_all_asked_facts_go_in_one_batch_and_a_bad_answer_is_refused():
    similar = FakeSimilarity(lambda f, s: 0.0)
    facts = ["Old expired sessions are returned by default.",
             "Old expired sessions are passed as the given value."]
    context = "# old expired sessions are kept\n"
    judge(context, facts, similar=similar)
    assert len(similar.batches) == 1 and len(similar.batches[0]) == 2
    with pytest.raises(ValueError, match="returned 1 values for 2 pairs"):
        judge(context, facts, similar=lambda pairs: [0.5])
    nan = judge(context, facts[:1], similar=lambda pairs: [float("nan")])
    assert nan.fact_recall == 0.0


def test_a_fact_without_support_in_words_is_not_asked():
    """Below ROUTE_MIN_COVERAGE of its terms in any stretch, the model is not asked."""
    similar = FakeSimilarity()
    fact = "Login sessions expire at the nightly purge."
    assert judge("# all login data here\n", [fact], similar=similar).facts[0].similarity \
        is None
    assert similar.batches == []
    assert pytest.approx(0.3) == ROUTE_MIN_COVERAGE


def test_judge_id_names_the_route():
    assert judge_id(similarity=True) == f"evaluator-judge {JUDGE_VERSION} (terms+minilm)"
    assert judge_id(similarity=False) == f"evaluator-judge {JUDGE_VERSION} (terms)"
