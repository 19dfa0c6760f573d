"""Comment modes (always | on-change | on-failure | never) and hide-previous, against the
loopback fake GitHub (REST comments + GraphQL minimizeComment)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from evaluator.errors import GitHubError
from evaluator.github_comments import GitHubClient, fingerprint_of, marker, state_marker
from evaluator.github_context import GitHubContext
from tests.fake_github import PR, REPO, FakeGitHub, Scripted, running

TOKEN = "ghs_modes-T0KEN-never-printed"
FP1, FP2 = "0123456789abcdef", "fedcba9876543210"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with running() as fake:
        yield fake


@pytest.fixture
def client(gh: FakeGitHub) -> Iterator[GitHubClient]:
    context = GitHubContext(api_url=gh.base_url, repository=REPO, pr_number=PR, token=TOKEN,
                            event_name="pull_request", head_sha="abc123")
    with requests.Session() as session:
        yield GitHubClient(session, context, sleep=lambda s: None, random=lambda: 0.5,
                           timeout=5.0)


def test_state_marker_round_trip_and_validation():
    line = state_marker(FP1, FP2)
    assert fingerprint_of(f"x\n{line}\nbody") == FP1
    assert fingerprint_of("no marker") is None
    assert fingerprint_of(state_marker(FP1)) == FP1
    for bad in ("ABCDEF0123456789", "short", "0123456789abcdef-->"):
        with pytest.raises(ValueError):
            state_marker(bad)


def test_always_updates_in_place_with_the_fingerprint(gh, client):
    first = client.publish(PR, "report one", key="k", fingerprint=FP1)
    second = client.publish(PR, "report two", key="k", fingerprint=FP1)
    assert (first.action, second.action) == ("created", "updated")
    [comment] = gh.on_issue(PR)
    assert "report two" in comment["body"] and fingerprint_of(comment["body"]) == FP1
    assert marker("k") in comment["body"]


def test_on_change_skips_when_nothing_changed(gh, client):
    client.publish(PR, "one", key="k", fingerprint=FP1, mode="on-change")
    writes = len(gh.writes())
    same = client.publish(PR, "one again", key="k", fingerprint=FP1, mode="on-change")
    assert same.action == "skipped" and "nothing changed" in same.reason
    assert len(gh.writes()) == writes
    assert "one again" not in gh.on_issue(PR)[0]["body"]
    moved = client.publish(PR, "two", key="k", fingerprint=FP2, mode="on-change")
    assert moved.action == "updated"
    assert fingerprint_of(gh.on_issue(PR)[0]["body"]) == FP2


def test_on_change_ignores_someone_elses_copy_of_the_marker(gh, client):
    gh.add_comment(PR, f"{marker('k')}\n{state_marker(FP1)}\nforged", login="mallory")
    result = client.publish(PR, "real", key="k", fingerprint=FP1, mode="on-change")
    assert result.action == "created"


def test_on_failure(gh, client):
    passed = client.publish(PR, "fine", key="k", fingerprint=FP1, mode="on-failure")
    assert passed.action == "skipped" and gh.writes() == []
    failed = client.publish(PR, "broken", key="k", fingerprint=FP2, mode="on-failure",
                            failed=True)
    assert failed.action == "created"
    fixed = client.publish(PR, "fixed now", key="k", fingerprint=FP1, mode="on-failure")
    assert fixed.action == "updated"  # an old failure report never lingers
    assert "fixed now" in gh.on_issue(PR)[0]["body"]


def test_never_sends_nothing(gh, client):
    assert client.publish(PR, "x", key="k", fingerprint=FP1, mode="never").action == "skipped"
    assert gh.requests == []


def test_unknown_mode_is_refused(client):
    with pytest.raises(GitHubError, match="on-change"):
        client.publish(PR, "x", key="k", fingerprint=FP1, mode="sometimes")


def test_hide_previous_posts_new_and_minimizes_the_old(gh, client):
    client.publish(PR, "one", key="k", fingerprint=FP1, hide_previous=True, run_id=FP1)
    client.publish(PR, "two", key="k", fingerprint=FP2, hide_previous=True, run_id=FP2)
    other = gh.add_comment(PR, "a human comment", login="alice")
    third = client.publish(PR, "three", key="k", fingerprint=FP1, hide_previous=True)
    comments = gh.on_issue(PR)
    ours = [c for c in comments if c["id"] != other]
    assert [c["minimized"] for c in ours] == ["OUTDATED", "OUTDATED", None]
    assert gh.comments[other]["minimized"] is None
    assert third.action == "created" and third.hidden == 2 and third.hide_error is None
    graphql = [r for r in gh.sent("POST") if r.path.endswith("/graphql")]
    assert len(graphql) == 1 + 2  # second run hid one, third run hid two (idempotent)
    assert graphql[-1].body["variables"]["id"].startswith("IC_")
    assert graphql[-1].headers["Authorization"] == f"Bearer {TOKEN}"


def test_hide_failure_is_reported_not_fatal(gh, client):
    client.publish(PR, "one", key="k", fingerprint=FP1, hide_previous=True)
    gh.script.append(Scripted("POST", 200, {"errors": [{"message": "Resource not accessible"}]},
                              path_contains="graphql"))
    result = client.publish(PR, "two", key="k", fingerprint=FP2, hide_previous=True)
    assert result.action == "created" and result.hidden == 0
    assert result.hide_error is not None and "Resource not accessible" in result.hide_error
    assert TOKEN not in result.hide_error


def test_hide_previous_lost_answer_is_not_posted_twice(gh, client):
    client.publish(PR, "one", key="k", fingerprint=FP1, hide_previous=True)
    # The POST succeeds on the server but the answer is a 502: the client must find its
    # comment by its run id instead of posting a duplicate.
    gh.script.append(Scripted("POST", 502, {"message": "bad gateway"}, apply=True,
                              path_contains="/comments"))
    result = client.publish(PR, "two", key="k", fingerprint=FP2, hide_previous=True,
                            run_id=FP2)
    bodies = [c["body"] for c in gh.on_issue(PR)]
    assert sum("two" in b for b in bodies) == 1
    assert result.comment is not None
    assert fingerprint_of(gh.comments[result.comment.comment_id]["body"]) == FP2


def test_graphql_url_for_enterprise():
    context = GitHubContext(api_url="https://ghe.example.com/api/v3", repository=REPO,
                            pr_number=PR, token=TOKEN, event_name=None, head_sha=None)
    client = GitHubClient(requests.Session(), context)
    assert client._graphql_url() == "https://ghe.example.com/api/graphql"


# Issue 19 item 5: only the identity that posts counts as us, never any bot.
FOREIGN_BOT = "other-app[bot]"


def test_a_foreign_bots_marked_comment_is_never_hidden(gh, client):
    client.publish(PR, "one", key="k", fingerprint=FP1, hide_previous=True, run_id=FP1)
    foreign = gh.add_comment(PR, f"{marker('k')}\n{state_marker(FP2, FP2)}\nnot ours",
                             login=FOREIGN_BOT)
    result = client.publish(PR, "two", key="k", fingerprint=FP2, hide_previous=True)
    assert gh.comments[foreign]["minimized"] is None
    assert gh.comments[foreign]["body"].endswith("not ours")
    assert result.hidden == 1  # our first comment only


def test_a_foreign_bots_fingerprint_does_not_silence_on_change(gh, client):
    gh.add_comment(PR, f"{marker('k')}\n{state_marker(FP1)}\nforged", login=FOREIGN_BOT)
    result = client.publish(PR, "real", key="k", fingerprint=FP1, mode="on-change")
    assert result.action == "created"
    assert gh.on_issue(PR)[0]["body"].endswith("forged")  # never edited


def test_a_foreign_bots_marked_comment_is_never_edited(gh, client):
    foreign = gh.add_comment(PR, f"{marker('k')}\nnot ours", login=FOREIGN_BOT)
    result = client.publish(PR, "real", key="k", fingerprint=FP1)
    assert result.action == "created"
    assert gh.comments[foreign]["body"] == f"{marker('k')}\nnot ours"
    assert [w.method for w in gh.writes()] == ["POST"]


def test_a_personal_token_owns_its_login_and_not_the_actions_bot(gh, client):
    gh.token_login = "alice"
    bots = gh.add_comment(PR, f"{marker('k')}\n{state_marker(FP1)}\nby the actions bot",
                          login="github-actions[bot]")
    mine = gh.add_comment(PR, f"{marker('k')}\n{state_marker(FP2)}\nalice's", login="alice")
    same = client.publish(PR, "unchanged", key="k", fingerprint=FP2, mode="on-change")
    assert same.action == "skipped"  # alice's fingerprint, not the bot's FP1
    gh.author = {"login": "alice", "type": "User"}
    result = client.publish(PR, "new", key="k", fingerprint=FP1)
    assert result.action == "updated" and result.comment is not None
    assert result.comment.comment_id == mine
    assert gh.comments[bots]["body"].endswith("by the actions bot")


def test_the_identity_is_asked_once_per_client(gh, client):
    gh.add_comment(PR, f"{marker('k')}\nforeign", login=FOREIGN_BOT)
    client.publish(PR, "one", key="k", fingerprint=FP1)
    client.publish(PR, "two", key="k", fingerprint=FP2)
    assert [r.path for r in gh.sent("GET") if r.path == "/user"] == ["/user"]


def test_no_identity_is_asked_while_nothing_carries_the_marker(gh, client):
    client.publish(PR, "one", key="k", fingerprint=FP1)
    assert [r.path for r in gh.sent("GET") if r.path == "/user"] == []


def test_an_identity_that_cannot_be_told_is_an_error_not_a_guess(gh, client):
    gh.add_comment(PR, f"{marker('k')}\nforeign", login=FOREIGN_BOT)
    gh.script.append(Scripted("GET", 401, {"message": "Bad credentials"}, path_contains="/user"))
    with pytest.raises(GitHubError, match="401"):
        client.publish(PR, "one", key="k", fingerprint=FP1)
    assert gh.writes() == []
