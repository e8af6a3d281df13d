"""GitHub's GraphQL: every document GitNeural sends is valid against GitHub's published
schema (``tests/fixtures/github-graphql/schema.graphql``), and the review threads are read
from the fake GitHub, which runs documents against that same schema."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from pathlib import Path

import github
import pytest
from graphql import parse, validate

import bot
from bot.errors import GitHubError
from bot.gh.addressing import ADDRESS_THREADS, BATCH, Addressing, address_threads
from bot.gh.api.access_tokens import InstallationTokens
from bot.gh.api.client import installation_client
from bot.gh.api.credentials import AppCredentials
from bot.gh.graphql import DOCUMENTS, Document, run_query
from bot.gh.permissions import PermissionCache, has_write_access
from bot.gh.threads import read_review_threads, resolve_thread, thread_of
from tests.fakes.github import FakeGitHub
from tests.fakes.github.graphql import github_schema

REPO = "octo/app"
FILE = "".join(f"line_{n} = {n}\n" for n in range(1, 201))


def _all_documents() -> list[Document]:
    # Importing every module of the product registers every document it can send.
    for info in pkgutil.walk_packages(bot.__path__, "bot."):
        importlib.import_module(info.name)
    return list(DOCUMENTS)


def test_every_document_gitneural_sends_is_valid_against_github_s_schema() -> None:
    documents = _all_documents()
    names = {d.name for d in documents}
    assert names >= {"ReviewThreads", "ResolveReviewThread"}
    # Every size of the addressing mutation GitNeural may send, 1 to BATCH threads.
    assert names >= {f"AddressThreads{n}" for n in range(1, BATCH + 1)}
    assert [len(ADDRESS_THREADS[n].text.split("resolveReviewThread")) - 1 for n in (1, BATCH)] == [
        1,
        BATCH,
    ]
    assert len({d.name for d in documents}) == len(documents)
    schema = github_schema()
    for doc in documents:
        assert validate(schema, parse(doc.text)) == [], doc.name
        kind = parse(doc.text).definitions[0].operation.value  # type: ignore[attr-defined]
        assert kind == ("mutation" if doc.mutation else "query"), doc.name


def test_the_schema_check_catches_what_github_would_refuse() -> None:
    schema = github_schema()
    wrong_field = (
        'query { repository(owner: "o", name: "n") { pullRequest(number: 1) { threads { id } } } }'
    )
    deprecated_ok = 'query { repository(owner: "o", name: "n") { pullRequest(number: 1) { reviewThreads(first: 1) { nodes { comments(first: 1) { nodes { databaseId } } } } } } }'  # noqa: E501
    missing_variable = (
        'query($n: Int!) { repository(owner: "o", name: "x") { pullRequest(number: $m) { id } } }'
    )
    assert "Cannot query field 'threads'" in str(validate(schema, parse(wrong_field)))
    assert validate(schema, parse(deprecated_ok)) == []  # deprecated, still valid
    assert validate(schema, parse(missing_variable)) != []


@pytest.fixture
def gh(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(tmp_path / "gh") as fake:
        fake.create_repo(REPO, installation_id=1, files={"a.py": FILE})
        fake.push(REPO, "feature", {"a.py": FILE.replace("line_5 = 5", "line_5 = 50")})
        fake.create_pull(REPO, head="feature")
        yield fake
        assert fake.forbidden_requests() == []


def client(gh: FakeGitHub) -> github.Github:
    creds = AppCredentials(gh.app_id, gh.private_key_pem, gh.api_url)
    return installation_client(
        creds,
        InstallationTokens(creds),
        1,
        seconds_between_requests=None,
        seconds_between_writes=None,
    )


def test_threads_are_read_with_their_comments_authors_and_state(gh: FakeGitHub) -> None:
    top = gh.add_review_comment(REPO, 1, "a.py", 5, "finding", user=gh.bot_login)
    reply = gh.add_thread_reply(REPO, 1, top["id"], "is it?", user="alice")
    other = gh.add_review_comment(REPO, 1, "a.py", 5, "mine", user="carol")
    gh.resolve_thread(other["id"], user="carol")
    threads = read_review_threads(client(gh), REPO, 1)
    assert [t.node_id for t in threads] == [f"PRRT_{top['id']}", f"PRRT_{other['id']}"]
    first, second = threads
    assert (first.resolved, first.outdated, first.path, first.line, first.side) == (
        False,
        False,
        "a.py",
        5,
        "RIGHT",
    )
    assert [(c.id, c.login, c.by_bot) for c in first.comments] == [
        (top["id"], "gitneural", True),  # GraphQL names an App's bot by its slug
        (reply["id"], "alice", False),
    ]
    assert first.comments[1].association == "COLLABORATOR"
    assert second.resolved and thread_of(threads, reply["id"]) is first
    # GraphQL's one request replaced a REST call per comment.
    posts = [r.path for r in gh.requests(kind="api", method="POST")]
    assert [p for p in posts if not p.endswith("/access_tokens")] == ["/graphql"]


def test_threads_page_past_100_and_a_push_makes_them_outdated(gh: FakeGitHub) -> None:
    for _ in range(130):
        gh.add_review_comment(REPO, 1, "a.py", 5, "again", user=gh.bot_login)
    gh.push(REPO, "feature", {"a.py": FILE.replace("line_5 = 5", "line_5 = 500")})
    threads = read_review_threads(client(gh), REPO, 1)
    assert len(threads) == 130 and len({t.node_id for t in threads}) == 130
    assert len(gh.requests(path="/graphql")) == 2
    assert all(t.outdated and t.line is None and t.lines() == (5, 5) for t in threads)


def test_resolving_a_thread_and_reading_reactions(gh: FakeGitHub) -> None:
    top = gh.add_review_comment(REPO, 1, "a.py", 5, "finding", user=gh.bot_login)
    gh.react_to_review_comment(REPO, top["id"], "-1", user="alice")
    gh.react_to_review_comment(REPO, top["id"], "-1", user="ci[bot]")
    g = client(gh)
    assert resolve_thread(g, f"PRRT_{top['id']}") is True
    assert resolve_thread(g, f"PRRT_{top['id']}") is True  # again: nothing changes
    [thread] = read_review_threads(g, REPO, 1)
    assert thread.resolved
    query = Document(
        "Reactions",
        """query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) {
          pullRequest(number: 1) { reviewThreads(first: 10) { nodes { comments(first: 10) {
            nodes { reactionGroups { content reactors(first: 10) { totalCount nodes {
              __typename ... on User { login } ... on Bot { login } } } }
              reactions(first: 10, content: THUMBS_DOWN) { nodes { content user { login } } }
        } } } } } } }""",
    )
    data = run_query(g, query, {"owner": "octo", "name": "app"}, doing="testing")
    [comment] = data["repository"]["pullRequest"]["reviewThreads"]["nodes"][0]["comments"]["nodes"]
    [group] = comment["reactionGroups"]
    assert group["content"] == "THUMBS_DOWN" and group["reactors"]["totalCount"] == 2
    assert {(n["__typename"], n["login"]) for n in group["reactors"]["nodes"]} == {
        ("User", "alice"),
        ("Bot", "ci"),
    }
    assert [n["user"] for n in comment["reactions"]["nodes"]] == [{"login": "alice"}, None]


def test_graphql_errors_are_one_line_github_errors(gh: FakeGitHub) -> None:
    g = client(gh)
    bad = Document("Bad", "query { viewer { nope } }")
    with pytest.raises(GitHubError, match="refused the Bad query when testing: Cannot query"):
        run_query(g, bad, {}, doing="testing")
    gh.create_repo("other/secret", installation_id=2)
    with pytest.raises(GitHubError, match="Could not resolve to a Repository"):
        read_review_threads(g, "other/secret", 1)
    unbounded = Document(
        "Unbounded",
        'query { repository(owner: "octo", name: "app") { pullRequest(number: 1) '
        "{ reviewThreads { totalCount } } } }",
    )
    with pytest.raises(GitHubError, match="must provide a `first` or `last`"):
        run_query(g, unbounded, {}, doing="testing")


def test_a_5xx_is_tried_again_but_a_mutation_is_not(gh: FakeGitHub) -> None:
    gh.add_review_comment(REPO, 1, "a.py", 5, "finding", user=gh.bot_login)
    g = client(gh)
    gh.fail("POST", "/graphql", status=502, times=2)
    assert len(read_review_threads(g, REPO, 1)) == 1
    assert len(gh.requests(path="/graphql")) == 3
    gh.fail("POST", "/graphql", status=502)
    with pytest.raises(GitHubError, match="502"):
        resolve_thread(g, "PRRT_1")


def test_github_refuses_replies_to_replies(gh: FakeGitHub) -> None:
    top = gh.add_review_comment(REPO, 1, "a.py", 5, "finding", user=gh.bot_login)
    reply = gh.add_thread_reply(REPO, 1, top["id"], "hm")
    pull = client(gh).get_repo(REPO).get_pull(1)
    with pytest.raises(github.GithubException) as refused:
        pull.create_review_comment_reply(reply["id"], "answer")
    assert refused.value.status == 422
    posted = pull.create_review_comment_reply(top["id"], "answer")
    assert gh.review_comment(posted.id)["in_reply_to_id"] == top["id"]


def test_the_threads_query_tells_who_resolved_and_who_reacted_thumbs_down(gh: FakeGitHub) -> None:
    first = gh.add_review_comment(REPO, 1, "a.py", 5, "finding", user=gh.bot_login)
    second = gh.add_review_comment(REPO, 1, "a.py", 5, "another", user=gh.bot_login)
    for user in ("alice", "ci[bot]", "eve"):
        gh.react_to_review_comment(REPO, first["id"], "-1", user=user)
    gh.react_to_review_comment(REPO, first["id"], "+1", user="bob")
    reply = gh.add_thread_reply(REPO, 1, first["id"], "no")
    gh.react_to_review_comment(REPO, reply["id"], "-1", user="mallory")  # not the finding's
    gh.resolve_thread(second["id"], user="carol")
    g = client(gh)
    one, two = read_review_threads(g, REPO, 1)
    assert one.thumbs_down == ("alice", "eve") and one.resolved_by is None  # bots left out
    assert two.thumbs_down == () and (two.resolved, two.resolved_by) == (True, "carol")
    # GitNeural resolving it itself is no person's doing: resolvedBy is null for a bot.
    assert resolve_thread(g, one.node_id)
    one, _ = read_review_threads(g, REPO, 1)
    assert one.resolved and one.resolved_by is None
    assert len(gh.requests(path="/graphql")) == 3


def _calls(gh: FakeGitHub) -> list[str]:
    return [r.path for r in gh.requests(kind="api") if not r.path.endswith("/access_tokens")]


def test_address_threads_replies_and_resolves_in_one_request(gh: FakeGitHub) -> None:
    top = gh.add_review_comment(REPO, 1, "a.py", 5, "finding", user=gh.bot_login)
    g = client(gh)
    gh.clear_requests()
    node = f"PRRT_{top['id']}"
    done = address_threads(g, [Addressing(node, "Addressed in `abc1234`.")])
    assert (done.resolved, done.failed, done.requests) == ([node], {}, 1)
    assert _calls(gh) == ["/graphql"]
    [thread] = read_review_threads(g, REPO, 1)
    assert thread.resolved and [c.body for c in thread.comments[1:]] == ["Addressed in `abc1234`."]
    assert thread.comments[1].login == "gitneural" and thread.comments[1].by_bot
    assert address_threads(g, [Addressing(node, None)]).resolved == [node]  # resolve only
    [thread] = read_review_threads(g, REPO, 1)
    assert len(thread.comments) == 2


def test_many_threads_are_addressed_25_a_request(gh: FakeGitHub) -> None:
    tops = [
        gh.add_review_comment(REPO, 1, "a.py", 5 + n, f"finding {n}", user=gh.bot_login)
        for n in range(BATCH + 5)
    ]
    answered = tops[3]
    gh.add_thread_reply(REPO, 1, answered["id"], "Addressed in `abc1234`.", user=gh.bot_login)
    items = [
        Addressing(f"PRRT_{t['id']}", None if t is answered else f"Addressed in `abc1234`. {n}")
        for n, t in enumerate(tops)
    ]
    g = client(gh)
    gh.clear_requests()
    done = address_threads(g, items)
    assert done.failed == {} and done.resolved == [i.node_id for i in items]
    assert (_calls(gh), done.requests) == (["/graphql", "/graphql"], 2)
    threads = read_review_threads(g, REPO, 1)
    assert all(t.resolved for t in threads)
    # Each thread holds its own reply, once, after its finding; the one already
    # answered got none more.
    assert [[c.body for c in t.comments[1:]] for t in threads] == [
        ["Addressed in `abc1234`."] if n == 3 else [f"Addressed in `abc1234`. {n}"]
        for n in range(BATCH + 5)
    ]


def test_an_alias_github_refuses_leaves_the_others_done(gh: FakeGitHub) -> None:
    good = [gh.add_review_comment(REPO, 1, "a.py", n, "f", user=gh.bot_login) for n in (5, 6)]
    items = [
        Addressing(f"PRRT_{good[0]['id']}", "Addressed in `abc1234`."),
        Addressing("PRRT_999999", "Addressed in `abc1234`."),  # no such thread
        Addressing(f"PRRT_{good[1]['id']}", "Addressed in `abc1234`."),
    ]
    g = client(gh)
    gh.clear_requests()
    done = address_threads(g, items)
    assert done.resolved == [items[0].node_id, items[2].node_id] and done.requests == 1
    assert list(done.failed) == ["PRRT_999999"]
    assert "Could not resolve to a node" in done.failed["PRRT_999999"]
    assert "\n" not in done.summary() and done.summary().startswith("PRRT_999999: ")
    assert all(t.resolved and len(t.comments) == 2 for t in read_review_threads(g, REPO, 1))


def test_a_request_that_fails_whole_is_not_sent_again(gh: FakeGitHub) -> None:
    tops = [gh.add_review_comment(REPO, 1, "a.py", n, "f", user=gh.bot_login) for n in (5, 6)]
    items = [Addressing(f"PRRT_{t['id']}", "Addressed in `abc1234`.") for t in tops]
    g = client(gh)
    gh.clear_requests()
    gh.fail("POST", "/graphql", status=502)
    done = address_threads(g, items)
    assert done.resolved == [] and list(done.failed) == [i.node_id for i in items]
    assert "502" in done.failed[items[0].node_id] and _calls(gh) == ["/graphql"]


def test_write_access_is_read_from_the_collaborator_permission(gh: FakeGitHub) -> None:
    gh.set_permission(REPO, "wendy", "write")
    gh.set_permission(REPO, "adam", "admin")
    gh.set_permission(REPO, "tim", "read")
    g = client(gh)
    cache = PermissionCache()
    users = ("wendy", "adam", "tim", "eve")
    assert [has_write_access(g, REPO, u, cache=cache) for u in users] == [
        True,
        True,
        False,
        False,
    ]
    assert len(gh.requests(method="GET", kind="api")) == 4
    gh.clear_requests()
    # Kept: asked again, nobody's permission is read again.
    assert [has_write_access(g, REPO, u, cache=cache) for u in users] == [True, True, False, False]
    assert gh.requests(kind="api") == []


def test_a_kept_answer_expires() -> None:
    now = [0.0]
    cache = PermissionCache(ttl_s=60, clock=lambda: now[0])
    key = ("http://api", "octo/app", "wendy")
    cache.put(key, True)
    now[0] = 59.0
    assert cache.get(key) is True
    now[0] = 60.0
    assert cache.get(key) is None
