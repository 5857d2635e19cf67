"""Kernel `search_words`: the word tables of tool search, shared by the index documents
(`toolgen.search.text_index`) and the analysis of a request, and written compactly: each table is one
string of words, or of ``key: words`` entries separated by ``;``, read once at import.

Every table is plain English or general computing vocabulary, never one API's own words: the action
classes and the words that ask for them (`ACTION_WORDS`), phrases that ask for an action
(`ACTION_PHRASES`) or that name an API's thing (`PHRASE_SYNONYMS`), everyday words and the API words
added for them (`WORD_SYNONYMS`), abbreviations spelled out on both sides of the index (`ABBREVIATIONS`,
`NOUN_SYNONYMS`), the verbs a path ends with (`PATH_ACTIONS`) and the function words of a request
(`STOP_WORDS`, `READ_VERBS`, `QUESTION_WORDS`, `PREPOSITIONS`, `DEGREE_WORDS`).
"""

from __future__ import annotations

__all__ = [
    "ABBREVIATIONS",
    "ACTION_PHRASES",
    "ACTION_WORDS",
    "DEGREE_WORDS",
    "GENERIC_ACTION",
    "NOUN_SYNONYMS",
    "PATH_ACTIONS",
    "PHRASE_SYNONYMS",
    "PREPOSITIONS",
    "QUESTION_WORDS",
    "READ_VERBS",
    "STOP_WORDS",
    "WORD_SYNONYMS",
]


def _entries(text: str) -> dict[str, tuple[str, ...]]:
    """``"reply: comment; my: authenticated user"`` → ``{"reply": ("comment",), "my": ("authenticated",
    "user")}``, in the order written."""
    out: dict[str, tuple[str, ...]] = {}
    for entry in text.split(";"):
        key, _, words = entry.partition(":")
        if key.strip():
            out[" ".join(key.split())] = tuple(words.split())
    return out


def _set(text: str) -> frozenset[str]:
    """The words of `text`, split on white space."""
    return frozenset(text.split())


def _phrases(text: str) -> dict[str, str]:
    """`_entries` with each value joined back into one string (a phrase → an action class, or the
    API's words for it)."""
    return {key: " ".join(words) for key, words in _entries(text).items()}


#: action classes and the words (after lower-casing) that ask for them; the order of each class's
#: words is the order its first six are written into an operation's ``verbs`` field
ACTION_WORDS: dict[str, tuple[str, ...]] = _entries(
    "delete: delete remove drop erase destroy purge wipe unset detach discard deletes removes deleted removed"
    " kill revoke unassign unlink unfollow unstar unwatch unsubscribe unblock unlock trash disable;"
    " create: create add new make open start post write creates adds register submit file raise generate"
    " issue send attach invite trigger save insert launch provision upload leave put;"
    " update: update edit change modify rename set patch replace updates adjust configure enable disable"
    " toggle move transfer mark reopen close assign lock archive upgrade downgrade;"
    " list: list lists all browse enumerate every index recent history;"
    " get: get fetch retrieve read details detail show view see display inspect info information status"
    " check what which current retrieves gets lookup download returns return;"
    " search: search find query lookup locate filter matching searches"
)
#: the generic words of reading and writing: they say that a request acts, not on what
GENERIC_ACTION = _set(
    "add adds all change create creates current delete deletes detail details display edit every fetch get gets"
    " info information list lists make modify new patch post put read recent remove removes retrieve retrieves"
    " return returns see set show update updates view write"
)
#: multi-word phrases and the action class they ask for (matched before single words)
ACTION_PHRASES: dict[str, str] = _phrases(
    "get rid of: delete; take off: delete; take away: delete; throw away: delete; clean up: delete;"
    " tear down: delete; turn off: disable; turn on: enable; show all: list; show me all: list; list all: list;"
    " all of the: list; look up: get; look at: get; look for: search; search for: search; set up: create;"
    " sign up: create; kick off: create; spin up: create"
)
#: everyday phrases → the API's words for them (matched before single words)
PHRASE_SYNONYMS: dict[str, str] = _phrases(
    "money back: refund; pay out: payout; send money: transfer; move money: transfer; thumbs up: reaction;"
    " sign up: subscription create; code review: review; credit card: card; bank account: bank account;"
    " pull request: pull request"
)
#: single words → the API's words, added to the query (people say "reply", specs say "comment"); the
#: second half: everyday English verbs → the verbs APIs name their operations with (no API's own words)
WORD_SYNONYMS: dict[str, tuple[str, ...]] = _entries(
    "reply: comment; replies: comment; my: authenticated user; mine: authenticated user; approve: review;"
    " assign: assignees; unassign: assignees; emoji: reaction; teammate: member; colleague: member;"
    " settings: configuration; trigger: dispatch; manually: dispatch; ban: block; customer: customers;"
    " grow: resize; shrink: resize; widen: resize expand; enlarge: resize; scale: resize; unplug: detach;"
    " disconnect: detach; plug: attach; reboot: reset restart; restart: reset; boot: start; launch: insert;"
    " provision: insert; spin: insert; reassign: assign; fix: update edit; correct: update edit;"
    " remind: reminder notification; history: events log audit; logged: current session;"
    " whoami: current user; myself: current user"
)
#: verbs that name an action of their own when they end a path (``POST /payouts/{payout}/cancel``);
#: a request that says one of them asks for that action
PATH_ACTIONS = _set(
    "accept approve archive attach block cancel capture clone close confirm detach dismiss dispatch expire export"
    " finalize follow import lock merge pause pay pin publish redeliver refund reject release rerun reset resize"
    " restart restore resume retry reverse send star start stop submit suspend sync transfer unblock unfollow"
    " unlock unpin unstar validate verify void"
)
#: verbs of reading that name no thing: only their action class is searched for ("find" must not
#: match "findings")
READ_VERBS = _set(
    "browse display enumerate fetch find gets inspect lists locate look lookup read retrieve retrieves see show"
    " view"
)
#: the first words of a question; a question asks to read, whatever verbs it goes on to say
QUESTION_WORDS = _set(
    "am are did do does has have how is was were what whats when where which who whom whose why"
)
#: adverbs of degree a request adds for emphasis ("delete task 12 entirely"): no thing to search for,
#: and rare enough in the example requests of an index to outweigh the words that are (dropped from
#: requests only; the index's documents keep them)
DEGREE_WORDS = _set("altogether completely entirely totally")
#: words that end a request's object: what follows them is context ("from issue 12")
PREPOSITIONS = _set(
    "about across after at before between by for from in inside into of on onto since to under with within"
)
#: API nouns and abbreviations → the words the specs use (both sides of the index are expanded); the
#: second half: the prefixes of object ids people paste (cus_123, ch_1, pi_3...)
ABBREVIATIONS: dict[str, tuple[str, ...]] = _entries(
    "pr: pull request; prs: pull request; pulls: pull request; repo: repository; repos: repository;"
    " org: organization; orgs: organization; organisation: organization; organisations: organization;"
    " sub: subscription; subs: subscription; env: environment; envs: environment; config: configuration;"
    " configs: configuration; msg: message; desc: description; perm: permission; perms: permission;"
    " info: information;"
    " cus: customer; ch: charge; pi: payment intent; pm: payment method; prod: product; acct: account;"
    " txn: transaction; evt: event; po: payout; dp: dispute; ii: invoiceitem; seti: setup intent"
)
#: nouns → the words the specs use beside them (plurals need no entry: the porter stemmer joins them);
#: the last entries are general computing vocabulary: a VM is a virtual machine, which clouds call an
#: instance
NOUN_SYNONYMS: dict[str, tuple[str, ...]] = _entries(
    "app: application; apps: application; auth: authorization; ci: workflow check; gha: actions workflow;"
    " bug: issue; bugs: issue; ticket: issue; tickets: issue; dm: message; cc: card; card: payment method;"
    " cards: payment method; chargeback: dispute; chargebacks: dispute; promo: promotion; sku: product price;"
    " bill: invoice; bills: invoice; payment: intent; payments: intent; client: customer; clients: customer;"
    " plan: price; plans: price; webhook: hook; webhooks: hook; hook: webhook; hooks: webhook;"
    " star: starred starring; stars: starred starring; stargazer: star; stargazers: star; starred: stargazers;"
    " watch: subscription watched; ssh: key; gpg: key; coupon: discount; discount: coupon; tag: ref; tags: ref;"
    " branch: ref;"
    " vm: virtual machine instance; vms: virtual machine instance; server: instance; servers: instance"
)
#: the function words of English requests, with the halves of contractions (don't → don t)
STOP_WORDS = _set(
    "a about actually again already also although am an and another any anymore are aren as at be because been"
    " being both by can could couldn currently did didn do does doesn don each either else ever for from give"
    " had hadn has hasn have haven having here hey how i i'd i'm if in into is isn it it's its just let lets ll"
    " many may me might more most much must my need neither no nor not now of off ok okay on one only onto or"
    " other our out over own please re really right same shall should shouldn so some still such tell than"
    " thanks that the their them then there these this those though to too under until up us use using ve"
    " very via want was wasn we we're were weren what whatever when where which whichever while who whoever"
    " whom whose why will with won would wouldn yet you your"
)
