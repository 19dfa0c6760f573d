"""Phrasing drafted questions from what the code does, never from what it is called.

A question that names the file or the function that answers it is found by keyword search
alone (:mod:`evaluator.core.giveaway`), so ``init``'s docstring route asks from a docstring's
first sentence instead: "Prints a message to stdout." becomes the verb phrase "print a
message to stdout" (:func:`verb_clause`), and the question is built around it, with no
symbol, file or module name of the code map in it:

* one function or class (*focused*): "How does the code print a message to stdout?";
* an exported name (*identity*): "Which public function would you call to print a message
  to stdout, and which module defines it?";
* a call path (*cross-file*): "When the code invokes a command, how does it print a message
  to stdout?" — the caller's phrase, then the callee's;
* an exception documented by "Raised when …": "Which error does the code raise when …?";
* a class documented by a noun phrase ("The built-in HTTP adapter for urllib3."): "Where is
  the built-in HTTP adapter for urllib3 implemented, and how does it work?"; a function
  documented by one (what it returns): "How does the code work out the terminal size?".

A sentence that is not short and whole, or does not start with a verb or an article, gives
no question (``None``): the planner skips that candidate with a counted reason
(:data:`NO_SENTENCE`), it never falls back to a template that names the code.
"""

from __future__ import annotations

import re

MAX_SENTENCE_WORDS = 18
#: Verbs docstrings start with ("Return …", "Creates …"): a first sentence that starts with
#: one of them becomes a verb phrase; any other sentence gives no clause.
DOC_VERBS = frozenset("""
accelerate accept adapt add aggregate allow append apply ask assign attach authenticate
bind build cache calculate call cancel capture change charge check classify clean clear
close collapse collect combine compare compress compute configure confirm connect
construct consume convert copy count create decide decode decorate define delay delete
deliver describe destroy detect determine disable dispatch display download drop dump echo
edit embed emit enable encode ensure escape evaluate exchange execute expand export expose
extract fetch fill filter finalize find flag flush format forward generate get give group
guard handle hash hold ignore include ingest initialize inject insert inspect install
invoke issue iterate join keep launch learn limit link list load lock log look make manage
map mark match measure merge mirror move normalize notify open override pack parse patch
pause perform persist pick poll pop populate post predict prepare preserve print probe
process produce prompt provide prune publish pull push put queue raise rank read rebuild
receive reconstruct record recover redirect reduce refresh refund register reinforce
reject release reload remove rename render renew repeat replace report represent require
reset resolve restrict retrieve retry return reuse revoke rewind roll rotate route run
sample save scale scan schedule score search seed select send serialize serve set shorten
show sign skip sleep sort spawn split spread stamp start stop store stream strip style
submit summarize swap switch sync tag take test track transform translate trigger trim
truncate try turn unpack unstyle unwrap update upgrade upload use validate verify wait
walk warn wrap write yield
""".split())  # noqa: SIM905 (a word list reads best as text)
MAX_NOUN_WORDS = 14
#: Why a candidate gives no question: its docstring says nothing a question can be made of.
NO_SENTENCE = ("its docstring has no short first sentence saying what it does (a verb or a "
               "noun phrase) to ask from")
#: Why a phrased question is not drafted: it would state its answer's file or symbol.
NAMES_ANSWER = "cannot be asked without naming its answer (a file or symbol of the module)"


def base_form(word: str) -> str:
    w = word.lower()
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "shes", "ches", "xes", "zes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        return w[:-1]
    return w


def verb_clause(sentence: str) -> str | None:
    """``Prints a message to stdout.`` → ``print a message to stdout`` (a verb phrase), or
    ``None`` when the sentence does not start with a known verb or is not short and whole.
    A sentence is cut at a semicolon or a dash (the rest is usually a second thought)."""
    sentence = re.split(r";| — | -- ", sentence.rstrip(".!?"), maxsplit=1)[0]
    words = sentence.split()
    if not 2 <= len(words) <= MAX_SENTENCE_WORDS:
        return None
    first = words[0]
    if not first[:1].isupper() or not first.isalpha() or first.isupper() \
            or base_form(first) not in DOC_VERBS:
        return None
    for i in range(2, len(words)):  # "… and returns it" → "… and return it"
        if words[i - 1] in ("and", "or") and words[i].isalpha() and words[i].islower() \
                and words[i].endswith("s") and base_form(words[i]) in DOC_VERBS:
            words[i] = base_form(words[i])
    rest = " ".join(words[1:])
    if rest.count("(") != rest.count(")") or rest.count("`") % 2 or "n't" in rest:
        return None
    return f"{base_form(first)} {rest}"


def third_person(clause: str) -> str:
    """``create a charge and mirror it`` → ``creates a charge and mirrors it``: the verbs of
    a :func:`verb_clause` (its first word, and a known verb after "and"/"or") in the third
    person."""
    words = clause.split()
    for i, word in enumerate(words):
        if i == 0 or (words[i - 1] in ("and", "or") and word in DOC_VERBS):
            if word.endswith("y") and word[-2:-1] not in "aeiou":
                words[i] = word[:-1] + "ies"
            elif word.endswith(("s", "sh", "ch", "x", "z", "o")):
                words[i] = word + "es"
            else:
                words[i] = word + "s"
    return " ".join(words)


#: What follows a past tense that ends a sentence's verb ("timed out", "occurred" at the end).
_AFTER_PAST = frozenset({"", "out", "up", "down", "off", "while", "when", "if", "because",
                         "before", "after"})
_RELATIVE = frozenset({"that", "which", "who", "whose"})
_DETERMINERS = frozenset({"a", "an", "the", "its", "their", "this", "these", "those", "all",
                          "every", "each", "any", "some"})


def _finite(words: list[str], i: int) -> bool:
    """Whether ``words[i]`` reads as the verb of a sentence ("The object *implements* a …",
    "The request *timed* out", "An error *occurred*"), not a relative clause's ("… that
    *signals* …"), a participle ("the object *used* by default") or a plural ("the *tags*
    of …")."""
    word, before = words[i], words[i - 1].lower()
    after = words[i + 1].lower() if i + 1 < len(words) else ""
    if not word.isalpha() or not word.islower() or before in _RELATIVE:
        return False
    if word.endswith("ed"):  # "a computed score", "the object used by …": not verbs
        return after in _AFTER_PAST
    if word == "vs":
        return False
    # "implements a …", "returns the …": a verb takes its object; "tags of …" is a noun
    return word.endswith("s") and not word.endswith("ss") and after in _DETERMINERS


def noun_phrase(sentence: str) -> str | None:
    """``The built-in HTTP Adapter for urllib3.`` → ``the built-in HTTP Adapter for
    urllib3``: a short sentence that starts with an article, or ``None``."""
    sentence = re.split(r";| — | -- ", sentence.rstrip(".!?"), maxsplit=1)[0]
    words = sentence.split()
    if not 3 <= len(words) <= MAX_NOUN_WORDS or words[0] not in ("A", "An", "The"):
        return None
    if any(_finite(words, i) for i in range(1, len(words))):
        return None
    if sentence.count("(") != sentence.count(")") or sentence.count("`") % 2 \
            or any(w in ("is", "are", "was", "were") for w in words):
        return None
    return " ".join([words[0].lower(), *words[1:]])


def raised_when(sentence: str) -> str | None:
    """``Raised when the token has expired.`` → ``when the token has expired`` (an
    exception's docstring), or ``None``."""
    match = re.match(r"(?:Raised|Thrown)\s+((?:when|if)\s.+?)[.!]?$", sentence)
    if match is None or not 3 <= len(match.group(1).split()) <= MAX_SENTENCE_WORDS \
            or match.group(1).count("`") % 2:
        return None
    return match.group(1)


def _phrase(sentence: str, *, verb: str, raised: str, noun: str) -> str | None:
    """``sentence`` asked with the first template that fits it: ``verb`` with its
    :func:`verb_clause`, ``raised`` with its :func:`raised_when`, ``noun`` with its
    :func:`noun_phrase` (each template's ``{}`` takes it)."""
    for template, part in ((verb, verb_clause), (raised, raised_when), (noun, noun_phrase)):
        found = part(sentence)
        if found:
            return template.format(found)
    return None


def focused(sentence: str, *, kind: str) -> str | None:
    """The question about one function or class (``kind``: ``class`` or another symbol
    kind), from its docstring's first sentence; a function's noun phrase says what it
    returns."""
    return _phrase(sentence, verb="How does the code {}?",
                   raised="Which error does the code raise {}?",
                   noun="Where is {} implemented, and how does it work?" if kind == "class"
                   else "How does the code work out {}?")


def identity(sentence: str, *, kind: str) -> str | None:
    """The question about an exported name (``kind``: ``class`` or another symbol kind)."""
    what = "class" if kind == "class" else "function"
    return _phrase(sentence,
                   verb=f"Which public {what} would you use to {{}}, and which module "
                        "defines it?",
                   raised="Which public exception is raised {}, and which module defines it?",
                   noun=f"Which public {what} is {{}}, and which module defines it?")


def entry_point() -> str:
    """The question about the function a command-line script runs."""
    return ("Which function runs when the package's command-line program starts, and "
            "where is it defined?")


def along(first: str, *rest: str) -> str | None:
    """The question along a call path, from the docstring sentences of its functions (the
    caller's first): "When the code <caller>, how does it <callee> [and then <next>]?"."""
    clauses = [verb_clause(s) for s in (first, *rest)]
    if not all(clauses):
        return None
    head, *tail = clauses
    assert head is not None
    return (f"When the code {third_person(head)}, how does it "
            f"{' and then '.join(c for c in tail if c)}?")
