"""`toolgen.compile.verbs`: the effect an operation's words name (Action, operationId, path, summary),
with the method only as the prior; the shapes of real APIs (AWS Query actions on GET, Google dotted
ids, Azure `Resource_Verb`, GitHub `issues/list-for-repo`, Stripe `PostCustomers`)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolgen.compile.operations import Operation
from toolgen.compile.verb_words import DESTRUCTIVE_VERBS, NOUN_LIKE, READ_VERBS, WRITE_VERBS
from toolgen.compile.verbs import (
    action_of,
    changes_named,
    guess_effect,
    name_verb,
    sentence_verb,
    words,
)


def _op(
    method: str,
    path: str,
    operation_id: str | None = None,
    summary: str | None = None,
    params: list[dict[str, Any]] | None = None,
) -> Operation:
    node: dict[str, Any] = {}
    if operation_id:
        node["operationId"] = operation_id
    if summary:
        node["summary"] = summary
    if params:
        node["parameters"] = params
    return Operation(method, path, operation_id, f"/paths/x/{method.lower()}", node, {}, "/paths/x")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DeleteDBInstance", ["delete", "db", "instance"]),
        ("pets_list-all", ["pets", "list", "all"]),
        ("compute.instances.delete", ["compute", "instances", "delete"]),
        ("<p>Deletes a <b>thing</b></p>", ["deletes", "a", "thing"]),
        ("Action=TerminateInstances", ["action", "terminate", "instances"]),
    ],
)
def test_words(text: str, expected: list[str]) -> None:
    assert words(text) == expected


@pytest.mark.parametrize(
    ("text", "verb"),
    [
        ("DeleteDBInstance", ("delete", "destructive")),
        ("GET_AddRoleToDBCluster", ("add", "write")),  # the method prefix is not the verb
        ("TerminateInstances", ("terminate", "destructive")),
        ("DescribeDBInstances", ("describe", "read")),
        ("issues/list-for-repo", ("list", "read")),  # "issues" is the resource, not "issue"
        ("issues/create", ("create", "write")),
        ("compute.instances.delete", ("delete", "destructive")),  # not "compute"
        ("VirtualMachines_CreateOrUpdate", ("create", "write")),
        ("userDelete", ("delete", "destructive")),
        ("tagResource", ("tag", "write")),
        ("PostCustomers", ("post", "write")),
        ("getDeletedItems", ("get", "read")),
        ("admin_inviteRequests_approved_list", ("list", "read")),  # "invite" names the resource here
        ("functions_list_triggers", ("list", "read")),
        ("droplets_get_DestroyAssociatedResourcesStatus", ("get", "read")),
        ("issueListIssues", ("list", "read")),  # a noun-like first word gives way to a plain verb
        ("TagAliases_QueryItem", ("query", "read")),
        ("Get.Count.openShifts-bdbd", ("get", "read")),
        ("userTags", None),  # a noun-like verb at the end names the resource
        ("productOrder", None),
    ],
)
def test_name_verb(text: str, verb: tuple[str, str] | None) -> None:
    assert name_verb(text) == verb


@pytest.mark.parametrize(
    ("text", "verb"),
    [
        ("Deletes the thing", ("delete", "destructive")),
        ("<p>Associates an IAM role with a DB cluster.</p>", ("associate", "write")),
        ("Returns a list of things", ("return", "read")),
        ("Copies a snapshot", ("copy", "write")),
        ("Tags a resource", ("tag", "write")),  # a noun-like verb followed by a determiner is a verb
        ("Messages in a channel", None),
        ("Invoke function usedRange", ("invoke", "read")),  # OData: functions read, actions change
        ("Invoke action restore", ("invoke", "write")),
        ("Block transactions", None),  # a noun-like first word without a determiner is a noun
        ("Latest block", None),
        ("Stake pool updates", None),  # past the first word, only a verb as written counts
        ("Bulk delete users", ("delete", "destructive")),
        ("Use this endpoint to delete things", None),  # past the first three words
    ],
)
def test_sentence_verb(text: str, verb: tuple[str, str] | None) -> None:
    assert sentence_verb(text) == verb


def test_action_from_path_fragment_query_and_parameter() -> None:
    assert action_of(_op("GET", "/#Action=DeleteDBInstance")) == "DeleteDBInstance"
    assert action_of(_op("GET", "/?Action=TerminateInstances&Version=2016-11-15")) == "TerminateInstances"
    param = {
        "name": "Action",
        "in": "query",
        "required": True,
        "schema": {"type": "string", "enum": ["StopInstances"]},
    }
    assert action_of(_op("GET", "/", params=[param])) == "StopInstances"
    assert action_of(_op("GET", "/things")) is None


@pytest.mark.parametrize(
    ("op", "effect", "doubtful"),
    [
        # AWS Query: a GET that deletes, terminates or changes is never a read
        (_op("GET", "/#Action=DeleteDBInstance", "GET_DeleteDBInstance"), "destructive", False),
        (_op("GET", "/?Action=TerminateInstances"), "destructive", False),
        (_op("GET", "/#Action=RebootDBInstance", "GET_RebootDBInstance"), "write", False),
        (_op("GET", "/#Action=DescribeDBInstances", "GET_DescribeDBInstances"), "read", False),
        # RPC-style: the verb is the last path segment
        (_op("GET", "/droplets/{id}/reboot"), "write", False),
        # the operationId says read, the summary says create: doubtful, drafted a write
        (_op("GET", "/things/{id}", "getThing", "Creates the thing when it is missing"), "write", True),
        (_op("GET", "/things", "listThings", "List things"), "read", False),
        (_op("GET", "/things"), "read", False),  # no words at all: the method's prior
        (_op("DELETE", "/things/{id}", "getRidOfThing"), "destructive", False),
        (_op("PUT", "/things/{id}", "putThing"), "write", False),
        (_op("PATCH", "/things/{id}/purge", "purgeThing"), "destructive", True),
        # POST: a read only when operationId and summary both say search/query/list, and doubtful
        (_op("POST", "/things/search", "searchThings", "Search things"), "read", True),
        (_op("POST", "/things/search", "searchThings", "Creates a saved search"), "write", False),
        (_op("POST", "/graphql", "queryGraph"), "write", False),
        (_op("POST", "/query", "query"), "write", False),  # one word: what does it query?
        # a change verb that is also a noun leads the name: `query` is its object (Route 53 Resolver)
        (
            _op(
                "POST",
                "/#X-Amz-Target=Route53Resolver.PutResolverQueryLogConfigPolicy",
                "PutResolverQueryLogConfigPolicy",
            ),
            "write",
            False,
        ),
        (_op("POST", "/v1/search", "post-search", "Search by title"), "read", True),  # its own method first
        (_op("POST", "/things", "createThing"), "write", False),
        (_op("POST", "/#Action=DeleteStack", "POST_DeleteStack"), "destructive", False),
        (
            _op("POST", "/things/{id}/archive", "thingArchive", "Deletes the thing for good"),
            "destructive",
            True,
        ),
    ],
)
def test_guess_effect(op: Operation, effect: str, doubtful: bool) -> None:
    guess = guess_effect(op)
    assert (guess.effect, guess.doubtful) == (effect, doubtful), guess.why


def test_changes_named_skips_resource_nouns_in_paths() -> None:
    assert changes_named(_op("GET", "/orders")) == []
    assert changes_named(_op("GET", "/repos/{id}/tags")) == []
    assert changes_named(_op("GET", "/v1/exchange_rates")) == []  # a compound ending in a plural
    assert changes_named(_op("GET", "/Recordings/{sid}/AddOnResults.json")) == []
    assert changes_named(_op("GET", "/Usage/Triggers.json")) == []
    assert changes_named(_op("GET", "/repos/{r}/stats/commit_activity")) == []  # a noun first
    assert changes_named(_op("GET", "/users.lookupByEmail")) == []  # the method is the last dotted part
    assert [e.verb for e in changes_named(_op("GET", "/views.update"))] == ["update"]
    assert [e.verb for e in changes_named(_op("GET", "/orders/{id}/cancel"))] == ["cancel"]


_NOUNS = st.sampled_from(
    ["Instance", "DBCluster", "Widget", "User", "Stack", "Bucket", "Customer", "Snapshot"]
)
_CHANGE = sorted((DESTRUCTIVE_VERBS | WRITE_VERBS) - NOUN_LIKE - READ_VERBS)


@given(
    verb=st.sampled_from(_CHANGE),
    noun=_NOUNS,
    style=st.sampled_from(["camel", "pascal", "snake", "kebab", "action", "aws-get", "dotted"]),
)
def test_a_change_verb_is_never_drafted_read_on_get(verb: str, noun: str, style: str) -> None:
    """Property: whatever the spelling of ``<verb><Noun>``, a GET named so is a write or destructive,
    and `changes_named` says so (what lint checks a read against)."""
    pascal = verb.capitalize() + noun
    name, path = {
        "camel": (verb + noun, "/x"),
        "pascal": (pascal, "/x"),
        "snake": (f"{verb}_{noun.lower()}", "/x"),
        "kebab": (f"{verb}-{noun.lower()}", "/x"),
        "action": (None, f"/?Action={pascal}"),
        "aws-get": (f"GET_{pascal}", f"/#Action={pascal}"),
        "dotted": (f"api.{noun.lower()}s.{verb}", "/x"),
    }[style]
    op = _op("GET", path, name)
    expected = "destructive" if verb in DESTRUCTIVE_VERBS else "write"
    assert guess_effect(op).effect == expected
    assert changes_named(op)


@given(verb=st.sampled_from(sorted(READ_VERBS - WRITE_VERBS - DESTRUCTIVE_VERBS)), noun=_NOUNS)
def test_a_read_verb_on_get_stays_read(verb: str, noun: str) -> None:
    op = _op("GET", "/x", verb + noun)
    assert guess_effect(op).effect == "read"
    assert not changes_named(op)
