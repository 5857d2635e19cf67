"""Tool search: rank the tools of a generated package for a request phrased in plain words.

Input: a generated package (the policy rows of ``policy.json`` and the entries of ``mcp.json``, or a
loaded `Registry`) and a query such as ``"get rid of the bug label on issue 12"``. Output: a ranked
list of `Hit` (tool, toolset, score, operation), never a tool whose permission the caller's scopes
lack.

One ranking everywhere: `toolgen search`, the Python API (`ToolIndex.search`, `Registry`-based
`index_for`) and, later, an MCP meta-tool all call `ToolIndex.search`.

The engine is SQLite FTS5 (stdlib ``sqlite3``, in memory) with its ``bm25`` ranking and the
``porter unicode61`` tokenizer (stemming: ``labels`` finds ``label``), over one document per
operation with weighted columns:

- ``name``: the tool name and operationId, split on ``_``, ``-``, ``/`` and camelCase;
- ``title``: the catalog title (or the operation summary);
- ``nouns``: the path's literal segments (``/repos/{owner}/{repo}/issues`` → repos, issues);
- ``verbs``: the operation's action class (list, get, search, create, update, delete or the path's
  action such as ``cancel``) with its everyday synonyms, its effect and mode;
- ``keywords``: an intent-map ``keywords`` list, when a policy row carries one;
- ``args``: argument names and their descriptions;
- ``body``: the description, without the runtime's boilerplate.

The query is normalised the same way as the documents (API abbreviations such as ``PR``, ``repo``,
``sub`` are expanded on both sides), the phrases users say for an action ("get rid of", "show all",
"look up") become that action class, and stop words are dropped. The terms are OR-ed into one FTS5
``MATCH``; bm25 scores the documents, and a document whose action class agrees with the request's
gets a multiplicative boost (a related class a smaller one). Writes are one operation with two tools
(``preview_*`` + ``record_*``): the hit names the tool that acts (``record_*``), or the preview when
only the preview is allowed. Results are deterministic: score, then tool name.
"""

from __future__ import annotations

import html
import json
import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Hit", "ToolIndex", "query_terms", "split_words"]

#: the fields of a document: FTS5 table → (its columns and their bm25 weights, the table's weight).
#: Each field group is its own table, so that a word's rarity (bm25's IDF) is counted within the
#: field: "repository" is in most argument descriptions but names the object of few operations.
TABLES: dict[str, tuple[tuple[tuple[str, float], ...], float]] = {
    "f_core": ((("name", 1.0), ("title", 1.2), ("keywords", 1.2)), 1.0),
    "f_object": ((("object", 1.0),), 1.2),
    "f_nouns": ((("nouns", 1.0),), 0.5),
    "f_verbs": ((("verbs", 1.0),), 0.5),
    "f_text": ((("args", 0.3), ("body", 1.0)), 0.4),
}

#: action classes and the words (after lower-casing) that ask for them
ACTION_WORDS: dict[str, tuple[str, ...]] = {
    "delete": ("delete", "remove", "drop", "erase", "destroy", "purge", "wipe", "unset", "detach",
               "discard", "deletes", "removes", "deleted", "removed", "kill", "revoke", "unassign",
               "unlink", "unfollow", "unstar", "unwatch", "unsubscribe", "unblock", "unlock", "trash", "disable"),
    "create": ("create", "add", "new", "make", "open", "start", "post", "write", "creates", "adds",
               "register", "submit", "file", "raise", "generate", "issue", "send", "attach", "invite", "trigger",
               "save",
               "leave", "put"),
    "update": ("update", "edit", "change", "modify", "rename", "set", "patch", "replace", "updates",
               "adjust", "configure", "enable", "disable", "toggle", "move", "transfer", "mark", "reopen",
               "close", "assign", "lock", "archive", "upgrade", "downgrade"),
    "list": ("list", "lists", "all", "browse", "enumerate", "every", "index", "recent", "history"),
    "get": ("get", "fetch", "retrieve", "read", "details", "detail", "show", "view", "see", "display",
            "inspect", "info", "information", "status", "check", "what", "which", "current", "retrieves",
            "gets", "lookup", "download", "returns", "return"),
    "search": ("search", "find", "query", "lookup", "locate", "filter", "matching", "searches"),
}
#: multi-word phrases and the action class they ask for (matched before single words)
ACTION_PHRASES: dict[str, str] = {
    "get rid of": "delete", "take off": "delete", "take away": "delete", "throw away": "delete",
    "clean up": "delete", "tear down": "delete", "turn off": "disable", "turn on": "enable",
    "show all": "list", "show me all": "list", "list all": "list", "all of the": "list",
    "look up": "get", "look at": "get", "look for": "search", "search for": "search",
    "set up": "create", "sign up": "create", "kick off": "create", "spin up": "create",
}
#: everyday phrases → the API's words for them (matched before single words)
PHRASE_SYNONYMS: dict[str, str] = {
    "money back": "refund", "pay out": "payout", "send money": "transfer", "move money": "transfer",
    "thumbs up": "reaction", "sign up": "subscription create", "code review": "review",
    "credit card": "card", "bank account": "bank account", "pull request": "pull request",
}
#: single words → the API's words, added to the query (people say "reply", specs say "comment")
WORD_SYNONYMS: dict[str, tuple[str, ...]] = {
    "reply": ("comment",), "replies": ("comment",), "my": ("authenticated", "user"),
    "mine": ("authenticated", "user"),
    "who": ("users",), "approve": ("review",), "assign": ("assignees",), "unassign": ("assignees",),
    "emoji": ("reaction",), "teammate": ("member",), "colleague": ("member",),
    "settings": ("configuration",), "trigger": ("dispatch",), "manually": ("dispatch",), "ban": ("block",), "customer": ("customers",),
}
#: verbs that name an action of their own when they end a path (``POST /payouts/{payout}/cancel``);
#: a request that says one of them asks for that action
PATH_ACTIONS = frozenset(
    ["cancel", "void", "finalize", "capture", "confirm", "accept", "close", "pay", "resume", "expire", "attach", "detach", "verify", "reverse", "reject", "send", "approve", "dismiss", "merge", "lock", "unlock", "rerun", "dispatch", "pause", "archive", "restore", "transfer", "sync", "star", "unstar", "follow", "unfollow", "block", "unblock", "pin", "unpin", "publish", "refund"]
)
#: classes close enough to earn part of the boost
RELATED = {
    ("get", "list"), ("list", "get"), ("search", "list"), ("list", "search"), ("get", "search"),
    ("search", "get"), ("create", "update"), ("update", "create"), ("delete", "update"),
    ("cancel", "delete"), ("delete", "cancel"), ("detach", "delete"), ("delete", "detach"),
}
#: the tables whose words say what an operation is about (for `ToolIndex._coverage`)
STRUCTURE = ("f_core", "f_object", "f_nouns")
#: how much the share of the request's terms a document names weighs: score × (1 - w + w × share)
COVERAGE_WEIGHT = 0.5
#: verbs of reading that name no thing: only their action class is searched for ("find" must not
#: match "findings")
READ_VERBS = frozenset({"find", "fetch", "retrieve", "read", "show", "view", "see", "display", "inspect",
                        "lookup", "locate", "browse", "enumerate", "look", "retrieves", "gets", "lists"})
#: words that end a request's object: what follows them is context ("from issue 12")
PREPOSITIONS = frozenset({"on", "in", "for", "of", "from", "to", "at", "with", "by", "under", "into", "onto",
                          "inside", "within", "across", "about", "between", "after", "before", "since"})
#: the weight of matching the request's object (`_analyse`) against the operation's object
HEAD_WEIGHT = 1.0
#: the action classes that read; a request for a read and a tool that writes (or the reverse) are
#: scored down by `FAMILY_PENALTY`
READS = frozenset({"get", "list", "search"})
FAMILY_PENALTY = 0.3
EXACT_BOOST = 0.6
RELATED_BOOST = 0.2

#: API nouns and abbreviations → the words the specs use (both sides of the index are expanded)
ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "pr": ("pull", "request"), "prs": ("pull", "request"), "pulls": ("pull", "request"),
    "repo": ("repository",), "repos": ("repository",), "org": ("organization",),
    "orgs": ("organization",), "organisation": ("organization",), "organisations": ("organization",),
    "sub": ("subscription",), "subs": ("subscription",), "env": ("environment",), "envs": ("environment",),
    "config": ("configuration",), "configs": ("configuration",), "msg": ("message",),
    "desc": ("description",), "perm": ("permission",), "perms": ("permission",), "info": ("information",),
    # the prefixes of object ids people paste (cus_123, ch_1, pi_3...)
    "cus": ("customer",), "ch": ("charge",), "pi": ("payment", "intent"), "pm": ("payment", "method"),
    "prod": ("product",), "acct": ("account",), "txn": ("transaction",), "evt": ("event",),
    "po": ("payout",), "dp": ("dispute",), "ii": ("invoiceitem",), "seti": ("setup", "intent"),
}
NOUN_SYNONYMS: dict[str, tuple[str, ...]] = {  # plurals need no entry: the porter stemmer joins them
    "app": ("application",), "apps": ("application",), "auth": ("authorization",), "ci": ("workflow", "check"),
    "gha": ("actions", "workflow"), "bug": ("issue",), "bugs": ("issue",), "ticket": ("issue",),
    "tickets": ("issue",), "dm": ("message",),
    "cc": ("card",), "card": ("payment", "method"), "cards": ("payment", "method"),
    "chargeback": ("dispute",), "chargebacks": ("dispute",), "promo": ("promotion",),
    "sku": ("product", "price"), "bill": ("invoice",), "bills": ("invoice",),
    "payment": ("intent",), "payments": ("intent",), "client": ("customer",),
    "clients": ("customer",), "plan": ("price",), "plans": ("price",),
    "webhook": ("hook",), "webhooks": ("hook",), "hook": ("webhook",), "hooks": ("webhook",),
    "star": ("starred", "starring"), "stars": ("starred", "starring"), "stargazer": ("star",),
    "stargazers": ("star",), "starred": ("stargazers",), "watch": ("subscription", "watched"),
    "ssh": ("key",), "gpg": ("key",), "coupon": ("discount",), "discount": ("coupon",),
    "tag": ("ref",), "tags": ("ref",), "branch": ("ref",),
}
STOP_WORDS = frozenset(
    ["a", "an", "the", "of", "to", "in", "on", "for", "from", "by", "with", "and", "or", "at", "as", "is", "are", "be", "been", "this", "that", "these", "those", "it", "its", "my", "our", "your", "their", "me", "we", "i", "you", "us", "them", "please", "can", "could", "would", "should", "will", "do", "does", "did", "how", "what", "which", "who", "whom", "whose", "when", "where", "why", "there", "here", "into", "onto", "about", "so", "any", "some", "one", "via", "using", "use", "want", "need", "just", "also", "then", "than", "if", "else", "too", "very", "out", "up", "off", "over", "under", "again", "only", "own", "same", "such", "no", "nor", "not", "have", "has", "had", "having", "am", "was", "were", "being", "let", "lets", "i'd", "i'm", "we're", "it's"]
)
_BOILERPLATE = (
    re.compile(r"PREVIEW ONLY, never writes:.*", re.DOTALL),
    re.compile(r"\s*(?:Writes|Deletes|Destructive) \((?:POST|PUT|PATCH|DELETE)\)\..*", re.DOTALL),
    re.compile(r"\s*Read-only\..*", re.DOTALL),
)
_TAG = re.compile(r"<[^>]+>")
#: values a request carries, not words to search: owner/repo, src/app.py, jane@example.com; of an
#: object id (cus_123) only the prefix is kept, which names the object
_VALUE = re.compile(r"\S+[/@.]\S+|\b([a-z]+)_[A-Za-z0-9]*[0-9][A-Za-z0-9]*\b")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*|[0-9]+")


@dataclass(frozen=True)
class Hit:
    """One ranked result: the tool to call, its toolset (None when the package has none), the score
    (higher is better; comparable within one query) and the operation (operationId, or
    ``METHOD /path`` when the spec gives none)."""

    tool: str
    toolset: str | None
    score: float
    operation: str

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "toolset": self.toolset, "score": self.score, "operation": self.operation}


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


def query_terms(query: str) -> tuple[list[str], set[str]]:
    """The search terms of `query` (stop words dropped, abbreviations expanded, the API's words for
    everyday ones added) and the action classes it asks for."""
    terms, _, _, actions = _analyse(query)
    return terms, actions


def _analyse(query: str) -> tuple[list[str], list[str], list[str], set[str]]:
    """`query_terms`, plus the terms the request itself names (without added synonyms) and the terms of
    its object: the words before the first preposition ("remove *the bug label* from issue 12")."""
    text = " " + " ".join(split_words(_VALUE.sub(lambda m: f" {m.group(1) or ''} ", query))) + " "
    for phrase in ACTION_PHRASES:  # separable phrasal verbs: "take the label off" → "take off the label"
        verb, _, particle = phrase.partition(" ")
        if " " not in particle:
            text = re.sub(rf" {verb} ((?:[a-z0-9]+ ){{1,4}}){particle} ", rf" {verb} {particle} \1", text)
    actions: set[str] = set()
    for phrase, api_words in sorted(PHRASE_SYNONYMS.items(), key=lambda kv: (-len(kv[0]), kv[0])):
        if f" {phrase} " in text:
            text = text.replace(f" {phrase} ", f" {phrase} {api_words} ")
    for phrase, action in sorted(ACTION_PHRASES.items(), key=lambda kv: (-len(kv[0]), kv[0])):
        if f" {phrase} " in text:
            actions.add(action)
            text = text.replace(f" {phrase} ", f" {action} ")
    words = [w for w in text.split() if len(w) > 1 or w.isdigit()]
    if words:
        first_actions = {a for a, ws in ACTION_WORDS.items() if words[0] in ws}
        actions |= first_actions
    for word in words:
        for action, synonyms in ACTION_WORDS.items():
            if word in synonyms and word not in ("issue", "file", "all", "open", "close", "what", "which"):
                actions.add(action)
    if "all" in words or "every" in words:
        actions.add("list")
    if "list" in actions and "get" in actions and words and words[0] not in ACTION_WORDS["get"]:
        actions.discard("get")
    named = [w for w in words if w in PATH_ACTIONS]
    if named and (not actions or words[0] in PATH_ACTIONS):  # "refund a payment", not "get a refund's status"
        actions |= set(named)
    if "get" in actions and "list" not in actions and any(_plural(w) for w in words):
        actions = (actions - {"get"}) | {"list"}  # "show the open issues": a plural object asks for a list
    words = [w for w in words if w not in READ_VERBS]  # their action class stands for them
    expanded = [*words, *(w for word in words for w in WORD_SYNONYMS.get(word, ()))]
    terms = [w for w in _expand(expanded) if w not in STOP_WORDS and not w.isdigit()]
    own = [w for w in _expand(words) if w not in STOP_WORDS and not w.isdigit()]
    head: list[str] = []
    for i, word in enumerate(words):
        if word in PREPOSITIONS and head:
            break
        if i == 0 and any(word in ws for ws in ACTION_WORDS.values()) or word in ACTION_WORDS:
            continue
        head.append(word)
    head_expanded = [*head, *(w for word in head for w in WORD_SYNONYMS.get(word, ()))]
    head_terms = [w for w in _expand(head_expanded) if w not in STOP_WORDS and not w.isdigit()]
    return terms, own, head_terms, actions


def _first_sentence(text: str) -> str:
    """The first sentence of a description: the title of an operation that has none."""
    return re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0][:200]


def _plural(word: str) -> bool:
    """Whether `word` looks like a plural noun (issues, repositories; not status, class, this)."""
    return (len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "ys"))
            and word not in STOP_WORDS and not any(word in ws for ws in ACTION_WORDS.values()))


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
    if (last == len(segments) - 1 and last > 0 and segments[last - 1].startswith("{") and len(literal) > 1
            and segments[last] in PATH_ACTIONS):
        last = literal[-2]
    return split_words(segments[last])


def _action_of(row: Mapping[str, Any], title: str, body: str) -> str:
    """The action class of an operation: from its effect, the first verb of its title, operationId or
    description, and the shape of its path."""
    op = row.get("operation") or {}
    method = str(op.get("method", "GET")).upper()
    path = str(op.get("path", ""))
    segments = [s for s in path.split("/") if s]
    last = segments[-1] if segments else ""
    if method != "GET" and len(segments) >= 2 and segments[-2].startswith("{") and last in PATH_ACTIONS:
        return last
    if method == "DELETE" or row.get("effect") == "destructive":
        return "delete"
    op_words = [w for w in split_words(str(op.get("id", ""))) if w not in ("get", "post", "put", "patch", "delete")
                or not str(op.get("id", ""))[:1].isupper()]
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


def _described_action(row: Mapping[str, Any], body: str) -> list[str]:
    """The action a write's description starts with, when it is one of `PATH_ACTIONS` (``DELETE
    /v1/subscriptions/{id}``: "Cancels a customer's subscription" → cancel)."""
    if str((row.get("operation") or {}).get("method", "GET")).upper() == "GET":
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
    return " ".join([action, *ACTION_WORDS.get(action, ())[:6], *extra, str(row.get("effect", "")),
                     str(row.get("mode", ""))])


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


@dataclass
class _Doc:
    intent: str
    tools: list[tuple[str, frozenset[str]]]  # (tool, its permission scopes), the acting tool first
    toolset: str | None
    operation: str
    actions: frozenset[str]


class ToolIndex:
    """An in-memory FTS5 index of a package's tools. Build it once, search it many times."""

    def __init__(self, policy: Mapping[str, Any], catalog: Sequence[Mapping[str, Any]]) -> None:
        entries = {str(e.get("name")): e for e in catalog}
        groups: dict[str, list[Mapping[str, Any]]] = {}
        for row in policy.get("tools", []) or []:
            name = str(row.get("tool"))
            key = str(row.get("intent") or name)
            groups.setdefault(key, []).append(row)
        self._db = sqlite3.connect(":memory:")
        for table, (columns, _) in TABLES.items():
            self._db.execute(f"CREATE VIRTUAL TABLE {table} USING fts5("
                             f"{', '.join(c for c, _ in columns)}, tokenize='porter unicode61')")
        self._docs: list[_Doc] = []
        pending: list[dict[str, str]] = []
        vocabulary: set[str] = set()
        for key in sorted(groups):
            rows = sorted(groups[key], key=lambda r: ({"record": 0, "read": 1, "preview": 2}.get(
                str(r.get("mode")), 1), str(r.get("tool"))))
            main = rows[0]
            entry = entries.get(str(main.get("tool"))) or {}
            op = main.get("operation") or {}
            method = str(op.get("method", "")).upper()
            path = str(op.get("path", ""))
            operation = str(op.get("id") or f"{method} {path}")
            body = _clean(str(entry.get("description") or ""))
            title = str(entry.get("title") or "").removeprefix("Preview: ") or _first_sentence(body)
            action = _action_of(main, title, body)
            name_words = [w for r in rows for w in split_words(str(r.get("tool"))) if w not in ("preview", "record")]
            names = " ".join(_expand(dict.fromkeys(name_words + split_words(operation))))
            args_text: list[str] = []
            props = (entry.get("inputSchema") or {}).get("properties") or {}
            for arg in sorted(props):
                if arg in ("action_id", "cursor", "expand", "page_size"):
                    continue
                args_text.extend(_expand(split_words(arg)))
                spec = props[arg]
                if isinstance(spec, Mapping):
                    args_text.extend(split_words(_clean(str(spec.get("description") or "")))[:30])
            keywords = main.get("keywords") or []
            keywords_text = " ".join(_expand(w for k in keywords for w in split_words(str(k))))
            toolset = main.get("toolset")
            self._docs.append(_Doc(
                intent=key,
                tools=[(str(r.get("tool")), frozenset(str(s) for s in r.get("permission") or []))
                       for r in rows],
                toolset=str(toolset) if toolset else None,
                operation=operation,
                actions=frozenset({action, *_described_action(main, body)}),
            ))
            fields = {
                "name": names, "title": " ".join(_expand(split_words(title))), "keywords": keywords_text,
                "object": " ".join(_expand(_object_nouns(path))), "nouns": " ".join(_expand(_path_nouns(path))),
                "verbs": _verbs_text(action, main, method, path, body) + "".join(
                    f" act{a}" for a in sorted({action, *_described_action(main, body)})), "args": " ".join(args_text),
                "body": " ".join(_expand(split_words(body))),
            }
            pending.append(fields)
            vocabulary.update(fields["title"].split(), fields["body"].split())
        for rowid, fields in enumerate(pending, 1):
            for column in ("name", "object", "nouns"):
                fields[column] = " ".join(_decompound(fields[column].split(), vocabulary))
            for table, (columns, _) in TABLES.items():
                self._db.execute(
                    f"INSERT INTO {table}(rowid, {', '.join(c for c, _ in columns)}) "
                    f"VALUES (?, {', '.join('?' for _ in columns)})",
                    (rowid, *(fields[c] for c, _ in columns)))

    # -- constructors ----------------------------------------------------------------------------

    @classmethod
    def from_dir(cls, path: str | Path) -> ToolIndex:
        """Index the generated package in folder `path` (``policy.json`` + ``mcp.json``)."""
        folder = Path(path)
        policy = json.loads((folder / "policy.json").read_text(encoding="utf-8"))
        catalog = json.loads((folder / "mcp.json").read_text(encoding="utf-8"))
        return cls(policy, catalog)

    @classmethod
    def from_registry(cls, registry: Any) -> ToolIndex:
        """Index the tools of a loaded `toolgen.runtime.Registry`."""
        return cls(registry.policy, registry.catalog())

    def _coverage(self, terms: list[str]) -> dict[int, float]:
        """Per document, the share of the request's distinct terms that its name, title, keywords,
        object or path nouns contain (FTS5 matching, so stemmed): a document that names every thing the
        request names beats one that matches a single rare word many times."""
        distinct = list(dict.fromkeys(terms))
        if not distinct:
            return {}
        found: dict[int, int] = {}
        for term in distinct:
            rows: set[int] = set()
            for table in STRUCTURE:
                rows.update(r for (r,) in self._db.execute(
                    f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (f'"{term}"',)))
            for rowid in rows:
                found[rowid] = found.get(rowid, 0) + 1
        return {rowid: n / len(distinct) for rowid, n in found.items()}

    # -- search ----------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._docs)

    def search(self, query: str, *, scopes: Iterable[str] | None = None, limit: int = 5) -> list[Hit]:
        """The `limit` best tools for `query`, best first. With `scopes`, only tools whose permission
        those scopes satisfy are returned (``None``: no filtering — the runtime still checks every
        call)."""
        if limit <= 0:
            return []
        terms, own, head, actions = _analyse(query)
        if not terms:
            return []
        held = None if scopes is None else frozenset(scopes)
        terms += [f"act{a}" for a in sorted(actions)]  # the action classes, indexed as act<class>
        match = " OR ".join(dict.fromkeys(f'"{t}"' for t in terms))
        totals: dict[int, float] = {}
        for table, (columns, table_weight) in TABLES.items():
            weights = ", ".join(str(w) for _, w in columns)
            for rowid, raw in self._db.execute(
                    f"SELECT rowid, bm25({table}, {weights}) FROM {table} WHERE {table} MATCH ?", (match,)):
                totals[int(rowid)] = totals.get(int(rowid), 0.0) - float(raw) * table_weight
        if head:  # the request's object, matched against the operation's object
            match_head = " OR ".join(dict.fromkeys(f'"{t}"' for t in head))
            for rowid, raw in self._db.execute(
                    "SELECT rowid, bm25(f_object) FROM f_object WHERE f_object MATCH ?", (match_head,)):
                totals[int(rowid)] = totals.get(int(rowid), 0.0) - float(raw) * HEAD_WEIGHT
        coverage = self._coverage(own)
        ranked: list[tuple[float, str, Hit]] = []
        for rowid, total in totals.items():
            doc = self._docs[rowid - 1]
            tool = next((t for t, need in doc.tools if held is None or need <= held), None)
            if tool is None:
                continue
            score = total * (1 - COVERAGE_WEIGHT + COVERAGE_WEIGHT * coverage.get(rowid, 0.0))
            if actions:
                if doc.actions & actions:
                    score *= 1 + EXACT_BOOST
                elif any((a, b) in RELATED for a in actions for b in doc.actions):
                    score *= 1 + RELATED_BOOST
                if (actions <= READS) != (doc.actions <= READS):
                    score *= 1 - FAMILY_PENALTY  # a write for a read request, or a read for a write
            score = round(score, 6)
            ranked.append((-score, tool, Hit(tool, doc.toolset, score, doc.operation)))
        ranked.sort(key=lambda item: (item[0], item[1]))
        return [hit for _, _, hit in ranked[:limit]]
