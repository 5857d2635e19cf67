"""Lint, toolsets: near-synonym tools within one toolset, which a model choosing inside a namespace
could confuse.

Input: per toolset, its intents as `Member`s (intent key, tool names, description). Output:
`near_synonyms` -> ``(first, second, why)`` for every pair that looks alike and whose descriptions do
not tell them apart by naming each other. Two members look alike when:

- their names hold the same words in another order (``list_comments_issue`` / ``list_issue_comments``),
  or differ in one word that is a synonym of the other's (``delete_label`` / ``remove_label``), or only
  in a plural (``get_issue`` / ``get_issues``);
- or the first sentences of their descriptions share most content words (Jaccard >= `TEXT_JACCARD`
  over at least `TEXT_MIN_WORDS` words).

Pure and deterministic: pairs come in member order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ...naming import has_word

TEXT_JACCARD = 0.8
TEXT_MIN_WORDS = 4
#: verbs that mean the same action (a model cannot tell ``delete_x`` from ``remove_x`` by name)
SYNONYM_SETS: tuple[frozenset[str], ...] = (
    frozenset({"delete", "remove", "destroy", "drop"}),
    frozenset({"create", "add", "new", "make"}),
    frozenset({"update", "edit", "modify", "change", "patch"}),
    frozenset({"get", "fetch", "retrieve", "read", "show"}),
    frozenset({"list", "enumerate", "all"}),
    frozenset({"search", "find", "query", "lookup"}),
)
_STOP = frozenset(
    {
        "the",
        "and",
        "for",
        "with",
        "from",
        "into",
        "that",
        "this",
        "one",
        "its",
        "use",
        "are",
        "not",
        "all",
        "any",
        "you",
        "your",
        "can",
        "will",
        "was",
        "has",
        "have",
        "which",
        "when",
        "only",
    }
)


@dataclass(frozen=True)
class Member:
    """One intent of a toolset: its key, the tools it produces and its description."""

    key: str
    tools: tuple[str, ...]
    description: str


@lru_cache(maxsize=16384)
def _words(key: str) -> tuple[str, ...]:
    """The singular words of an intent key; remembered: `near_synonyms` compares every pair of a
    toolset, so each key is read once, not once per pair (GitHub's `repos`: 20,000 pairs)."""
    return tuple(_singular(w) for w in key.lower().split("_") if w)


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _synonyms(a: str, b: str) -> bool:
    return a != b and any(a in s and b in s for s in SYNONYM_SETS)


def name_likeness(a: str, b: str) -> str | None:
    """Why the intent keys `a` and `b` read alike, or None."""
    wa, wb = _words(a), _words(b)
    if wa == wb:
        return "the same words" if a != b else None
    if sorted(wa) == sorted(wb):
        return "the same words in another order"
    if len(wa) == len(wb):
        diff = [(x, y) for x, y in zip(wa, wb, strict=True) if x != y]
        if len(diff) == 1 and _synonyms(*diff[0]):
            return f"synonyms {diff[0][0]!r} and {diff[0][1]!r}"
    return None


@lru_cache(maxsize=16384)
def _content(text: str) -> frozenset[str]:
    """The content words of a description's first sentence; remembered as `_words` is."""
    first = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]
    return frozenset(_singular(w) for w in re.findall(r"[a-z]{3,}", first.lower()) if w not in _STOP)


def text_likeness(a: str, b: str) -> str | None:
    """Why descriptions `a` and `b` read alike (their first sentences), or None."""
    ca, cb = _content(a), _content(b)
    if min(len(ca), len(cb)) < TEXT_MIN_WORDS:
        return None
    jaccard = len(ca & cb) / len(ca | cb)
    return f"descriptions {jaccard:.0%} alike" if jaccard >= TEXT_JACCARD else None


def _names_other(text: str, other: Member) -> bool:
    lowered = text.lower()
    return any(has_word(lowered, n.lower()) for n in (other.key, *other.tools))


def near_synonyms(members: Sequence[Member]) -> list[tuple[Member, Member, str]]:
    """Pairs of `members` (one toolset) a model could confuse, with why; a pair whose descriptions
    name each other (either way) is told apart and not reported.

    Only the pairs that can look alike are compared (`_candidates`), not every pair: a toolset of
    10,000 intents (an API's one tag) has 50 million pairs. The result is that of comparing every
    pair, in member order."""
    out: list[tuple[Member, Member, str]] = []
    for i, j in sorted(_candidates(members)):
        first, second = members[i], members[j]
        why = name_likeness(first.key, second.key) or text_likeness(first.description, second.description)
        if why is None:
            continue
        if _names_other(first.description, second) or _names_other(second.description, first):
            continue
        out.append((first, second, why))
    return out


def _candidates(members: Sequence[Member]) -> set[tuple[int, int]]:
    """Every pair ``(i, j)``, ``i < j``, for which `name_likeness` or `text_likeness` may be true
    (a superset; the caller decides each):

    - the same words in any order: the same sorted words;
    - one word a synonym of the other's in the same place: the same words elsewhere and a word of
      the same `SYNONYM_SETS` set there;
    - descriptions alike (Jaccard >= `TEXT_JACCARD`): prefix filtering. Order the content words by
      how few descriptions hold them; a set ``A`` has an overlap of at least ``t * |A|`` with any
      set that alike, so the two share a word among the first ``|A| - floor(t * |A|) + 1`` of each
      (one more than needed where ``t * |A|`` is whole: never fewer)."""
    buckets: dict[tuple[object, ...], list[int]] = {}
    for i, member in enumerate(members):
        words = _words(member.key)
        buckets.setdefault(("sorted", *sorted(words)), []).append(i)
        for at, word in enumerate(words):
            for n, synonyms in enumerate(SYNONYM_SETS):
                if word in synonyms:
                    buckets.setdefault(("synonym", n, at, *words[:at], "", *words[at + 1 :]), []).append(i)
    contents = [_content(member.description) for member in members]
    frequency: dict[str, int] = {}
    for content in contents:
        if len(content) >= TEXT_MIN_WORDS:
            for word in content:
                frequency[word] = frequency.get(word, 0) + 1
    for i, content in enumerate(contents):
        if len(content) < TEXT_MIN_WORDS:
            continue
        ordered = sorted(content, key=lambda w: (frequency[w], w))
        for word in ordered[: len(ordered) - int(TEXT_JACCARD * len(ordered)) + 1]:
            buckets.setdefault(("text", word), []).append(i)
    pairs: set[tuple[int, int]] = set()
    for held in buckets.values():
        for a, i in enumerate(held):
            pairs.update((i, j) for j in held[a + 1 :])
    return pairs
