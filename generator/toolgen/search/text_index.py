"""Kernel `search_text`: the words of tool search, shared by the build (which writes each API's index
documents into ``search.json``) and the runtime (`toolgen.runtime.serving.tool_index.ToolIndex`, which loads
them
into SQLite FTS5 and ranks them), so every caller ranks the same way.

Input: the rows of a policy table (``policy.json``) and the entries of its MCP catalog (``mcp.json``),
or a request in plain words. Output: `search_documents` -> one JSON document per operation (the tools it
gives, their permission scopes, toolset, operation, action classes and the analysed text of each
field); `analyse_query` -> the terms, own terms, object terms and action classes of a request.

The fields of a document (columns of the FTS5 tables in `TABLES`): ``name`` (tool name and operationId,
split on ``_``, ``-``, ``/`` and camelCase), ``title`` (the catalog title or the description's first
sentence), ``keywords`` (intent-map `keywords`), ``object`` (the resource the path acts on), ``nouns``
(the path's literal segments), ``verbs`` (the action class with its everyday synonyms, effect and
mode), ``args`` (the toolset's name, argument names and descriptions) and ``body`` (the description
without the runtime's boilerplate). API abbreviations are spelled out on both sides
(``PR`` -> pull request); phrases users say for an action ("get rid of") become its class. The word
tables of both sides are those of `toolgen.search.words`.
"""

from __future__ import annotations

import hashlib
import html
import marshal
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any

from ..remember import Remember
from .words import (
    ABBREVIATIONS,
    ACTION_PHRASES,
    ACTION_WORDS,
    DEGREE_WORDS,
    GENERIC_ACTION,
    NOUN_SYNONYMS,
    PATH_ACTIONS,
    PHRASE_SYNONYMS,
    PREPOSITIONS,
    QUESTION_WORDS,
    READ_VERBS,
    STOP_WORDS,
    WORD_SYNONYMS,
)

__all__ = [
    "SEARCH_FORMAT",
    "STOP_WORDS",
    "TABLES",
    "analyse_query",
    "content_terms",
    "item_path",
    "names_one",
    "query_terms",
    "search_documents",
    "split_words",
]

#: version of the document format (``search.json`` ``format``)
SEARCH_FORMAT = 3

#: the weight of the intent map's `examples` (requests in users' words, the tool's and its toolset's):
#: the words a request says that the operation's own text may never use
EXAMPLES_WEIGHT = 5.0

#: the fields of a document: FTS5 table → (its columns and their bm25 weights, the table's weight).
#: Each field group is its own table, so that a word's rarity (bm25's IDF) is counted within the
#: field: "repository" is in most argument descriptions but names the object of few operations.
TABLES: dict[str, tuple[tuple[tuple[str, float], ...], float]] = {
    "f_core": ((("name", 1.0), ("title", 1.2), ("keywords", 1.2)), 1.0),
    "f_object": ((("object", 1.0),), 1.2),
    "f_nouns": ((("nouns", 1.0),), 0.5),
    "f_verbs": ((("verbs", 1.0),), 0.5),
    "f_text": ((("args", 0.5), ("body", 1.0)), 0.8),
    "f_output": ((("output", 1.0),), 0.6),
    "f_examples": ((("examples", 1.0),), EXAMPLES_WEIGHT),
}

#: classes close enough to earn part of the boost
RELATED = {
    ("get", "list"),
    ("list", "get"),
    ("search", "list"),
    ("list", "search"),
    ("get", "search"),
    ("search", "get"),
    ("create", "update"),
    ("update", "create"),
    ("delete", "update"),
    ("cancel", "delete"),
    ("delete", "cancel"),
    ("detach", "delete"),
    ("delete", "detach"),
}
#: the tables whose words say what an operation is about (for `ToolIndex._coverage`): its names, path and
#: description (a request written from the vendor's docs names what the description names)
STRUCTURE = ("f_core", "f_object", "f_nouns", "f_text", "f_examples")
#: how much the share of the request's terms a document names weighs: score × (1 - w + w × share)
COVERAGE_WEIGHT = 0.85
#: the boost of an operation that acts on one item (its path ends with a parameter, or with an action
#: after one) when the request names one thing by a value (`names_one`)
ITEM_BOOST = 0.2
#: the weight of matching the request's object (`analyse_query`) against the operation's object
HEAD_WEIGHT = 1.0
#: the extra weight of the last noun of a compound object ("repository *secret*"), its head
HEAD_NOUN_WEIGHT = 0.5
#: the action classes that read; a request for a read and a tool that writes (or the reverse) are
#: scored down by `FAMILY_PENALTY`
READS = frozenset({"get", "list", "search"})
FAMILY_PENALTY = 0.3
EXACT_BOOST = 0.6
RELATED_BOOST = 0.2

_BOILERPLATE = (
    re.compile(r"PREVIEW ONLY, never writes:.*", re.DOTALL),
    re.compile(r"\s*(?:Writes|Deletes|Destructive) \((?:POST|PUT|PATCH|DELETE)\)\..*", re.DOTALL),
    re.compile(r"\s*Read-only\..*", re.DOTALL),
)
#: what is left of the ``Examples:`` sentence (`toolgen.compile.lower.text.with_examples`) once its
#: requests are taken out of a description
_EXAMPLES_LABEL = re.compile(r"\bExamples:[\s;]*\.?")
_TAG = re.compile(r"<[^>]+>")
#: values a request carries, not words to search: owner/repo, src/app.py, jane@example.com; of an
#: object id (cus_123) only the prefix is kept, which names the object
_VALUE = re.compile(r"\S+[/@.]\S+|\b([a-z]+)_[A-Za-z0-9]*[0-9][A-Za-z0-9]*\b")
#: opaque identifiers a request pastes (UUIDs, base-62 ids, commit hashes): letters and digits mixed
#: in one token of seven characters or more, never a word to search for
_OPAQUE = re.compile(
    r"\b[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b"
    r"|\b(?=[A-Za-z0-9]*[0-9])(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{7,}\b"
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*|[0-9]+")


def split_words(text: str) -> list[str]:
    """Lower-case words of identifiers and prose: ``listForRepo`` → list, for, repo;
    ``issues/list-for-repo`` and ``pull_request`` split on their separators."""
    text = re.sub(r"\b([A-Z]{2,})s\b", lambda m: m.group(1).lower() + "s", text)  # PRs, APIs
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", text)
    return [w.lower() for w in _WORD.findall(text)]


def _expand(words: Iterable[str]) -> list[str]:
    """`words` with abbreviations spelled out (``pr`` → pull request) and each word's API synonyms
    appended after it."""
    out: list[str] = []
    for word in words:
        full = ABBREVIATIONS.get(word)
        if full is not None:
            out.extend(full)
            continue
        out.append(word)
        out.extend(NOUN_SYNONYMS.get(word, ()))
    return out


def _clean(text: str) -> str:
    text = html.unescape(_TAG.sub(" ", text))
    for pattern in _BOILERPLATE:
        text = pattern.sub("", text)
    return text


#: a value that names one thing: a number, an opaque id, an id with its prefix (cus_123), a key (PROJ-123)
_ONE = re.compile(r"^(?:[0-9][0-9,.]*|[A-Z]+-[0-9]+|[a-z]+_[A-Za-z0-9]*[0-9][A-Za-z0-9]*)$")


def names_one(query: str) -> bool:
    """Whether `query` names the one thing it acts on by a value: an identifier right after its
    object, before any preposition ("delete virtual machine 740", "show playlist 3cEYpjA9oz9GiPac4AsH4n"),
    its object not a plural ("delete devices 501, 502 and 503" names several)."""
    words = query.split()
    for i, written in enumerate(words[1:], 1):
        word = written.rstrip("?!.,:;)")
        if word.lower() in PREPOSITIONS:
            return False
        if _ONE.match(word) or _OPAQUE.fullmatch(word):
            before = split_words(words[i - 1])
            after = words[i + 1].lower() if i + 1 < len(words) else ""
            # the value ends the object: the request ends, or goes on after a comma, dash or preposition
            return (
                bool(before)
                and not _plural(before[-1])
                and not before[-1].isdigit()
                and (written != word or after in PREPOSITIONS or after in ("", "-", "and"))
            )
    return False


def query_terms(query: str) -> tuple[list[str], set[str]]:
    """The search terms of `query` (stop words dropped, abbreviations expanded, the API's words for
    everyday ones added) and the action classes it asks for."""
    terms, _, _, actions = analyse_query(query)
    return terms, actions


def analyse_query(query: str) -> tuple[list[str], list[str], list[str], set[str]]:
    """`query_terms`, plus the terms the request itself names (without added synonyms) and the terms of
    its object: the words before the first preposition ("remove *the bug label* from issue 12").

    How a request is said counts too: a clause that says what it does not want ("without deleting the
    disk", `_NEGATED`) is dropped; "stop showing X" asks to delete, not to show; "open" before an item
    named by its id reads it; after an imperative verb the word tables do not know ("watch", "clear")
    a read word further on ("so I get notified about all activity") asks for no read; "me" as the
    object ("who is following me") is the authenticated user; a question answered yes or no (`YES_NO`)
    asks to check."""
    first = split_words(query)[:1]
    query = _NEGATED.sub(" ", query)
    text = (
        " "
        + " ".join(split_words(_OPAQUE.sub(" ", _VALUE.sub(lambda m: f" {m.group(1) or ''} ", query))))
        + " "
    )
    for phrase in ACTION_PHRASES:  # separable phrasal verbs: "take the label off" → "take off the label"
        verb, _, particle = phrase.partition(" ")
        if " " not in particle:
            text = re.sub(rf" {verb} ((?:[a-z0-9]+ ){{1,4}}){particle} ", rf" {verb} {particle} \1", text)
    actions: set[str] = set()
    # direction: "stop following X" undoes "follow" (APIs name the undo un<verb>: unfollow, unwatch)
    stopped = _STOPPED.search(text)
    if stopped:
        verb = _gerund_stem(stopped.group(2))
        # the undone verb is no action asked for: "stop showing X" does not ask to show (its -ing form
        # stays, a word to search for, when the verb itself would ask for an action class)
        said = stopped.group(2) if any(verb in ws for ws in ACTION_WORDS.values()) else verb
        text = text[: stopped.start()] + f" delete un{verb} {said} " + text[stopped.end() :]
        actions.add("delete")
    for phrase, api_words in sorted(PHRASE_SYNONYMS.items(), key=lambda kv: (-len(kv[0]), kv[0])):
        if f" {phrase} " in text:
            text = text.replace(f" {phrase} ", f" {phrase} {api_words} ")
    for phrase, action in sorted(ACTION_PHRASES.items(), key=lambda kv: (-len(kv[0]), kv[0])):
        if f" {phrase} " in text:
            actions.add(action)
            text = text.replace(f" {phrase} ", f" {action} ")
    # "me" as what a request acts on ("who is following me", "issues assigned to me") is the authenticated
    # user; after a verb of giving ("show me", "give me") or "for" it is only who asks
    text = _ME.sub(r"\1 me authenticated user ", text)
    words = [w for w in text.split() if (len(w) > 1 or w.isdigit()) and w not in DEGREE_WORDS]
    actions |= _word_actions(words, query)
    if "list" in actions and "get" in actions and words and words[0] not in ACTION_WORDS["get"]:
        actions.discard("get")
    named = [w for w in words if w in PATH_ACTIONS]
    if named and (not actions or words[0] in PATH_ACTIONS):  # "refund a payment", not "get a refund's status"
        actions |= set(named)
    if "get" in actions and "list" not in actions and any(_plural(w) for w in words):
        actions = (actions - {"get"}) | {"list"}  # "show the open issues": a plural object asks for a list
    if first[:1] and first[0] in QUESTION_WORDS:  # a question reads: "which brands have we set up?"
        actions = (actions & READS) or {"list" if any(_plural(w) for w in words) else "get"}
    words = [w for w in words if w not in READ_VERBS]  # their action class stands for them
    if first[:1] and first[0] in YES_NO:  # "is the audiobook 18yV in my library?" asks to check
        words.append("check")
    expanded = [*words, *(w for word in words for w in WORD_SYNONYMS.get(word, ()))]
    terms = [w for w in _expand(expanded) if w not in STOP_WORDS and not w.isdigit()]
    own = [w for w in _expand(words) if w not in STOP_WORDS and not w.isdigit()]
    head: list[str] = []
    for i, word in enumerate(words):
        if word in PREPOSITIONS and head:
            break
        if (i == 0 and any(word in ws for ws in ACTION_WORDS.values())) or word in ACTION_WORDS:
            continue
        head.append(word)
    head_expanded = [*head, *(w for word in head for w in WORD_SYNONYMS.get(word, ()))]
    head_terms = [w for w in _expand(head_expanded) if w not in STOP_WORDS and not w.isdigit()]
    nouns = [w for w in head if w not in STOP_WORDS and not w.isdigit()]
    if len(nouns) > 1:  # a noun compound names its head last: a "repository secret" is a secret
        last = nouns[-1]
        head_terms += [f"^{w}" for w in _expand([last, *WORD_SYNONYMS.get(last, ())]) if w not in STOP_WORDS]
    return terms, own, head_terms, actions


#: a request that opens with "stop / quit / cease / no longer" + a verb's -ing form asks to undo that
#: verb's action ("stop following X"); further on, "stop" is no request of its own ("accept a dispute
#: and stop fighting it")
_STOPPED = re.compile(r"^ (?:please )?(stop|quit|cease|no longer) ([a-z]{3,}ing) ")


#: the first words of a question answered yes or no (`QUESTION_WORDS` that are verbs): such a question
#: asks to check ("have I already saved the podcast 5CfC?")
YES_NO = frozenset(("am", "are", "did", "do", "does", "has", "have", "is", "was", "were"))
#: "me" after a word that is no verb of giving or telling, nor "for": what the request acts on
_ME = re.compile(
    r"( (?!(?:show|give|tell|let|lets|send|get|find|bring|help|remind|email|take|for) )[a-z0-9]+) me "
)


#: a clause that says what a request does not ask for ("without deleting the disk", "but keep its
#: disks", "not the playlist itself"), up to the next comma, bracket or dash: its words are no search
_NEGATED = re.compile(
    r"(?i)\b(?:without|don['\u2019]?t|doesn['\u2019]?t|do not|does not|not|never"
    r"|but keep|but leave|rather than|instead of)\b"
    r"(?:(?! - )[^,;()!?])*"
)


def _word_actions(words: list[str], query: str) -> set[str]:
    """The action classes the words of a request ask for (`ACTION_WORDS`): its first word's, and each
    other word's. "open" before an item named by its id reads it ("open template 5c1f and show its
    roles"); after an imperative verb no action class knows ("watch", "clear", "commit") a read word
    further on ("... so I get notified about all activity") asks for no read."""
    if not words:
        return set()
    actions = {a for a, ws in ACTION_WORDS.items() if words[0] in ws}
    if words[0] == "open" and names_one(query) and not any(w in ACTION_WORDS["create"] for w in words[1:]):
        actions = {"get"}
    unknown_verb = _unknown_verb(words[0]) and words[1:2] != ["to"]  # not "like to see"
    for word in words:
        for action, synonyms in ACTION_WORDS.items():
            if (
                word in synonyms
                and word not in ("issue", "file", "all", "open", "close", "what", "which")
                and not (unknown_verb and action in READS)
            ):
                actions.add(action)
    if ("all" in words or "every" in words) and not unknown_verb:
        actions.add("list")
    return actions


def _unknown_verb(word: str) -> bool:
    """Whether `word`, the first of a request, is none of the words whose meaning search knows: no action
    class's, no question word, no function word, no number (an imperative verb such as "watch", "clear")."""
    return not (
        word.isdigit()
        or word in QUESTION_WORDS
        or word in STOP_WORDS
        or word in PATH_ACTIONS
        or any(word in ws for ws in ACTION_WORDS.values())
    )


def _gerund_stem(word: str) -> str:
    """The verb of an -ing form: following → follow, sharing → share, getting → get (for `_STOPPED`)."""
    stem = word[:-3]
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
        return stem[:-1]  # getting → get, but not calling → cal
    if len(stem) > 2 and stem[-1] in "cgrsuvz" and stem[-2] in "aeiou" and stem[-3] not in "aeiou":
        return stem + "e"  # sharing → share, using → use, saving → save
    return stem


def content_terms(terms: Sequence[str]) -> list[str]:
    """The terms of a request that say more than that it reads or writes (`GENERIC_ACTION` dropped),
    or all of `terms` when every one is generic ("list all"): a tool that matches none of them
    matches nothing the request asks about."""
    content = [t for t in terms if t not in GENERIC_ACTION]
    return content or list(terms)


def item_path(path: str) -> bool:
    """Whether an operation's `path` acts on one item: it ends with a parameter
    (``/sites/{id}/``), or with an action after one (``/subscriptions/{id}/cancel``)."""
    segments = [s for s in path.split("/") if s]
    if not segments:
        return False
    if segments[-1].startswith("{"):
        return True
    return len(segments) >= 2 and segments[-2].startswith("{") and segments[-1] in PATH_ACTIONS


def _first_sentence(text: str) -> str:
    """The first sentence of a description: the title of an operation that has none."""
    return re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0][:200]


def _plural(word: str) -> bool:
    """Whether `word` looks like a plural noun (issues, repositories; not status, class, this)."""
    return (
        len(word) > 3
        and word.endswith("s")
        and not word.endswith(("ss", "us", "is", "ys"))
        and word not in STOP_WORDS
        and not any(word in ws for ws in ACTION_WORDS.values())
    )


def _path_nouns(path: str) -> list[str]:
    return [w for seg in path.split("/") if seg and not seg.startswith("{") for w in split_words(seg)]


def _object_nouns(path: str) -> list[str]:
    """The resource an operation acts on: the last literal segment of its path that names a thing
    (``/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}`` → labels), or the one before it
    when the last is an action (``/subscriptions/{id}/cancel`` → subscriptions)."""
    segments = [s for s in path.split("/") if s]
    literal = [i for i, s in enumerate(segments) if not s.startswith("{")]
    if not literal:
        return []
    last = literal[-1]
    if last == len(segments) - 1 and len(literal) > 1 and segments[last] in PATH_ACTIONS:
        last = literal[-2]
    words = split_words(segments[last])
    if len(words) > 1 and (words[0] in PATH_ACTIONS or any(words[0] in ws for ws in ACTION_WORDS.values())):
        words = words[1:]  # a segment that says its action names its object after it: deleteInstances
    return words


def _action_of(row: Mapping[str, Any], title: str, body: str) -> str:  # noqa: PLR0911
    """The action class of an operation: from its effect, the first verb of its title, operationId or
    description, and the shape of its path."""
    if row.get("composite"):
        return _composite_action(row)
    op = row.get("operation") or {}
    method = str(op.get("method", "GET")).upper()
    path = str(op.get("path", ""))
    segments = [s for s in path.split("/") if s]
    last = segments[-1] if segments else ""
    if method != "GET" and len(segments) >= 2 and segments[-2].startswith("{") and last in PATH_ACTIONS:
        return last
    if method == "DELETE" or row.get("effect") == "destructive":
        return "delete"
    op_words = [
        w
        for w in split_words(str(op.get("id", "")))
        if w not in ("get", "post", "put", "patch", "delete") or not str(op.get("id", ""))[:1].isupper()
    ]
    candidates = split_words(title)[:1] + op_words[:3] + split_words(body)[:1]
    if method in ("GET", "HEAD"):
        if "search" in candidates or last == "search" or "search" in segments:
            return "search"
        for word in candidates:
            if word in ("list", "lists", "returns"):
                return "list" if word != "returns" or "list" in split_words(body)[:4] else "get"
            if word in ("get", "gets", "retrieves", "retrieve", "check", "checks", "download"):
                return "get"
        return "get" if last.startswith("{") else "list"
    for word in candidates:
        for action in ("delete", "create", "update"):
            if word in ACTION_WORDS[action] and word not in ("issue", "file", "all", "post", "put"):
                return action
    if last.startswith("{"):
        return "update"
    if len(segments) >= 2 and segments[-2].startswith("{"):
        return "create" if method in ("POST",) and last.endswith("s") else "update"
    return "create" if method == "POST" else "update"


_METHOD_ACTIONS = {"POST": "create", "PUT": "update", "PATCH": "update", "DELETE": "delete"}


def _composite_action(row: Mapping[str, Any]) -> str:
    """A composite tool's action (docs/composites.md): a read is a search, a list or a get by its name;
    a write takes the action of its first writing step's method."""
    if row.get("effect") == "read":
        name = str(row.get("tool", ""))
        return "search" if name.startswith("search_") else "list" if name.startswith("list_") else "get"
    steps = (row.get("composite") or {}).get("steps") or []
    for step in steps:
        step_row = step.get("row") or {}
        if step_row.get("effect") != "read":
            method = str((step_row.get("operation") or {}).get("method", "")).upper()
            return (
                "delete" if step_row.get("effect") == "destructive" else _METHOD_ACTIONS.get(method, "update")
            )
    return "update"


def composite_operation(row: Mapping[str, Any]) -> str:
    """How a composite's operations read in a search hit: ``composite: getTicket → addFollowup``."""
    plan = row.get("composite") or {}
    names = [
        str((s.get("row") or {}).get("operation", {}).get("id") or s.get("id"))
        for s in plan.get("steps") or []
    ]
    return f"composite: {(' → ' if plan.get('pattern') == 'pipeline' else ', ').join(names)}"


def _described_action(row: Mapping[str, Any], body: str) -> list[str]:
    """The action a write's description starts with, when it is one of `PATH_ACTIONS` (``DELETE
    /v1/subscriptions/{id}``: "Cancels a customer's subscription" → cancel)."""
    if row.get("composite") or str((row.get("operation") or {}).get("method", "GET")).upper() == "GET":
        return []
    first = split_words(body)[:1]
    if not first:
        return []
    word = first[0]
    for form in (word, word.removesuffix("s"), word.removesuffix("es")):
        if form in PATH_ACTIONS:
            return [form]
    return []


def _verbs_text(action: str, row: Mapping[str, Any], method: str, path: str, body: str) -> str:
    segments = [s for s in path.split("/") if s]
    extra: list[str] = split_words(body)[:1]
    if len(segments) >= 2 and segments[-2].startswith("{") and method != "GET":
        extra = split_words(segments[-1])  # the path's own action: /subscriptions/{id}/cancel
    return " ".join(
        [
            action,
            *ACTION_WORDS.get(action, ())[:6],
            *extra,
            str(row.get("effect", "")),
            str(row.get("mode", "")),
        ]
    )


def _decompound(words: list[str], vocabulary: set[str]) -> list[str]:
    """`words` with the parts of closed compounds appended (``invoiceitems`` → invoice, items) when
    both parts are words of the package's prose; the split with the longest head wins."""
    out: list[str] = []
    for word in words:
        out.append(word)
        if len(word) < 7 or word in vocabulary:
            continue
        for cut in range(len(word) - 4, 2, -1):
            head, tail = word[:cut], word[cut:]
            if head in vocabulary and (tail in vocabulary or tail.removesuffix("s") in vocabulary):
                out.extend((head, tail))
                break
    return out


def _output_names(schema: Any, depth: int = 0) -> list[str]:
    """The member names of an output schema, depth first and sorted, through arrays and up to three
    objects deep (``{"audio_features": [{"danceability": ...}]}`` → audio, features, danceability):
    what a read returns is what a request asks for ("the BPM and key of a track")."""
    if not isinstance(schema, Mapping) or depth > 2:
        return []
    if isinstance(schema.get("items"), Mapping):
        return _output_names(schema["items"], depth)
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return []
    out: list[str] = []
    for name in sorted(props, key=str):
        out.extend(split_words(str(name)))
        out.extend(_output_names(props[name], depth + 1))
    return out


def search_documents(
    policy: Mapping[str, Any],
    catalog: Sequence[Mapping[str, Any]],
    remember: Remember | None = None,
    key_of: Callable[..., str] | None = None,
) -> list[dict[str, Any]]:
    """One index document per operation of a generated API, in intent order (deterministic).

    `policy`: the ``policy.json`` object (its ``tools`` rows: tool, mode, intent, effect, operation,
    permission, toolset, keywords); `catalog`: the ``mcp.json`` entries (name, title, description,
    inputSchema). Each document is ``{"intent", "tools": [[tool, [scope, ...]], ...] (the acting tool
    first: record, read, then preview), "toolset", "operation", "actions": [class, ...], "fields":
    {column: text}}``, its field texts already analysed (split, expanded, decompounded) for the
    columns of `TABLES`. Never raises on a malformed row: missing values read as empty.
    `remember(key, compute)`: each operation's document before the decompounding (which depends on
    every document's words) is computed through it, keyed by the digest of its rows and their
    catalog entries (the build cache's `toolgen.builder.incremental.Pieces`): ``key_of(*parts)`` (default:
    SHA-256 of their `marshal` format 2; the build passes `toolgen.emit.piece_key`, which knows the
    catalog entries it read back by their own keys), None when the parts are not plain data."""
    entries = {str(e.get("name")): e for e in catalog}
    by_toolset = {
        str(s.get("name")): tuple(str(e) for e in s.get("examples") or [])
        for s in policy.get("toolsets", []) or []
        if isinstance(s, Mapping)
    }
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for row in policy.get("tools", []) or []:
        name = str(row.get("tool"))
        key = str(row.get("intent") or name)
        groups.setdefault(key, []).append(row)
    docs: list[dict[str, Any]] = []
    vocabulary: set[str] = set()
    for key in sorted(groups):
        rows = sorted(
            groups[key],
            key=lambda r: (
                {"record": 0, "read": 1, "preview": 2}.get(str(r.get("mode")), 1),
                str(r.get("tool")),
            ),
        )
        own = {str(r.get("tool")): entries.get(str(r.get("tool"))) or {} for r in rows}
        shared = by_toolset.get(str(rows[0].get("toolset")), ())
        piece = None
        if (
            remember is not None
        ):  # the rows and entries as plain data: their content, whatever objects they share
            piece = (key_of or _marshal_key)(
                "search-document 4",
                key,
                len(rows),
                *rows,
                *(x for item in own.items() for x in item),
                *shared,
            )
        if remember is None or piece is None:
            doc = _document(key, rows, own, shared)
        else:
            doc = remember(piece, partial(_document, key, rows, own, shared))
        fields = doc["fields"]
        vocabulary.update(fields["title"].split(), fields["body"].split())
        docs.append(doc)
    for doc in docs:
        fields = doc["fields"]
        for column in ("name", "object", "nouns"):
            fields[column] = " ".join(_decompound(fields[column].split(), vocabulary))
    return docs


def _marshal_key(*parts: Any) -> str | None:
    try:
        return hashlib.sha256(marshal.dumps(parts, 2)).hexdigest()
    except ValueError:
        return None


def _document(
    key: str,
    rows: list[Mapping[str, Any]],
    entries: Mapping[str, Mapping[str, Any]],
    toolset_examples: Sequence[str] = (),
) -> dict[str, Any]:
    """The index document of one operation (`search_documents`), before decompounding: `rows` its
    policy rows, acting tool first; `entries` their MCP catalog entries by tool name;
    `toolset_examples` the `examples` of its toolset."""
    main = rows[0]
    entry = entries.get(str(main.get("tool"))) or {}
    op = main.get("operation") or {}
    method = str(op.get("method", "")).upper()
    path = str(op.get("path", ""))
    operation = (
        composite_operation(main) if main.get("composite") else str(op.get("id") or f"{method} {path}")
    )
    body = _clean(str(entry.get("description") or ""))
    title = str(entry.get("title") or "").removeprefix("Preview: ") or _first_sentence(body)
    action = _action_of(main, title, body)
    actions = sorted({action, *_described_action(main, body)})
    name_words = [w for r in rows for w in split_words(str(r.get("tool"))) if w not in ("preview", "record")]
    names = " ".join(_expand(dict.fromkeys(name_words + split_words(operation))))
    args_text: list[str] = []
    props: dict[str, Any] = {}
    for row in rows:  # a write's arguments are the preview's; the record tool takes its preview_id
        schema = (entries.get(str(row.get("tool"))) or {}).get("inputSchema") or {}
        found = schema.get("properties") if isinstance(schema, Mapping) else None
        if isinstance(found, Mapping):
            props.update((str(k), v) for k, v in found.items() if str(k) not in props)
    for arg in sorted(props):
        if arg in ("action_id", "preview_id", "cursor", "expand", "page_size"):
            continue
        args_text.extend(_expand(split_words(arg)))
        spec = props[arg]
        if isinstance(spec, Mapping):
            args_text.extend(split_words(_clean(str(spec.get("description") or "")))[:30])
            # the members of an object argument (a body wrapped in ``data``) are what a request
            # changes: "push the due date" names the task's ``due_on``
            args_text.extend(_expand(_output_names(spec, 2)))
    output = _output_names(entry.get("outputSchema"))
    keywords = main.get("keywords") or []
    keywords_text = " ".join(_expand(w for k in keywords for w in split_words(str(k))))
    examples = [str(e) for e in [*(main.get("examples") or []), *toolset_examples]]
    examples_text = " ".join(_expand(w for e in examples for w in split_words(_clean(e))))
    not_for = main.get("not_for")
    if not_for:
        body = body.replace(f"Not for: {not_for}", "")
    if main.get("examples"):  # the description's `Examples: "..."; "...".` (indexed as `examples` instead)
        for example in main.get("examples") or []:
            body = body.replace(f'"{example}"', " ")
        body = _EXAMPLES_LABEL.sub(" ", body)
    toolset = main.get("toolset")
    toolset_words = split_words(str(toolset)) if toolset else []
    fields = {
        "name": names,
        "title": " ".join(_expand(split_words(title))),
        "keywords": keywords_text,
        "object": " ".join(_expand(_object_nouns(path))),
        "nouns": " ".join(_expand(_path_nouns(path))),
        "verbs": _verbs_text(action, main, method, path, body) + "".join(f" act{a}" for a in actions),
        "args": " ".join([*_expand(toolset_words), *args_text]),
        "body": " ".join(_expand(split_words(body))),
        "output": " ".join(_expand(dict.fromkeys(output))),
        "examples": examples_text,
    }
    return {
        "intent": key,
        "tools": [[str(r.get("tool")), sorted({str(s) for s in r.get("permission") or []})] for r in rows],
        "toolset": str(toolset) if toolset else None,
        "operation": operation,
        "actions": actions,
        "fields": fields,
    }
