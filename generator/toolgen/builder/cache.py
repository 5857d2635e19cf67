"""The build cache: what the build's expensive stages computed, on disk, found again by content.

Input: a cache folder (`.toolgen/cache/` under the project root; ``TOOLGEN_CACHE_DIR`` moves it,
``TOOLGEN_CACHE=0`` or ``toolgen build --no-cache`` turns it off). Output: entries (bytes) read back
by key. This module is the build's only IO besides reading its inputs and `toolgen.builder.output_files`; the
stages stay pure and the build asks it (`toolgen.builder.build`).

A key is the SHA-256 of everything that can change the value: the stage's input (a `models.py`
class's source text, the package plan, the input files' bytes and the build's options) and a salt
naming the code that computes it (toolgen's own source and templates, the Python version, the
versions of the libraries toolgen runs and the YAML reader specs are parsed with: `environment_key`). A value is a pure function of its key,
so a hit gives the bytes a cold build would compute; the cache is safe to delete at any time
(``rm -rf .toolgen/cache``), and never committed (it writes a `.gitignore` of ``*`` into its folder).
An entry is read only when it is a regular file at its own path (``O_NOFOLLOW``): a link planted
where an entry goes, to a named pipe or ``/dev/zero``, is a miss, not a build that never ends.
A symbolic link in it is never written through (a pull request can commit one: the folder is only
git-ignored): a ``.toolgen`` or ``.toolgen/cache`` link in the project turns the cache off, a link
at ``<kind>`` or ``<kind>/<key[:2]>`` skips writing that entry, and the `.gitignore` is created with
``O_EXCL``, which does not follow a link.

An entry is one file, ``<folder>/<kind>/<key[:2]>/<key>``: a header line ``toolgen-cache 2 <mac>
<length>`` then the payload, where ``<mac>`` is HMAC-SHA256 of the kind, the key and the payload
under a secret of the user's own, kept outside every project (`mac_key`: ``$XDG_CACHE_HOME/toolgen/
cache.key`` or ``~/.cache/toolgen/cache.key``, 32 random bytes, mode 0600; a key file that group or
others may read or write, or a link, is no secret and turns the cache off). An entry that did not
come from this user's builds is therefore a miss, wherever it came from: a cache folder committed
into a repository (a pull request that forges ``--check``'s record of an up-to-date folder, or a
pickled catalog entry) is never believed, and CI machines start from nothing. Without a usable key
(a home folder that cannot be written) the cache is off. It is written to a temporary file in the same folder
and renamed over the entry (`os.replace`, atomic on POSIX), so a concurrent build reads the old
entry, the new one or none, never half of one; a build killed while writing leaves at most a
temporary file (removed by the next `clear` or ignored). An entry whose header, length or digest
does not match (truncated, corrupted, forged) is a miss: it is computed again and rewritten. The
length is checked against the file's size before the payload is read, and an entry over
`MAX_ENTRY_BYTES` is a miss, so a planted gigabyte costs a `stat`, not its reading. A cache that
cannot be written (read-only folder, full disk) costs the time it would have saved, nothing else.

A build writes through a session (`Cache.session`, `CacheSession`): its entries are staged in a folder
of their own and reach the cache only when the build succeeds, so a failed build (refused at lint or
by its inputs, or stopped by an exception) leaves the cache as it found it. A build that succeeds with
warnings, and a ``--check`` that finds the output folders stale, publish theirs: what they computed is
right, and the next build reads it (`toolgen.cli.build_cmd`).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import importlib.util
import json
import os
import secrets
import shutil
import stat
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

#: where the cache lives under the project root
CACHE_DIR = Path(".toolgen") / "cache"
_MAGIC = b"toolgen-cache 2 "
#: the name of a build's staging folder in the cache folder, before its random part (`CacheSession`)
_SESSION_PREFIX = ".session-"
#: a staging folder untouched for this long belongs to a build that was killed outright (no build runs
#: for a day); the next session removes it
STALE_SESSION_SECONDS = 24 * 3600
#: the longest header line an entry can have: the magic, a 64-digit MAC, a length, a newline
_HEADER_MAX = 128
#: the largest payload an entry may hold (the largest the build writes are a few megabytes): a larger
#: entry, or one whose file is not exactly its header and the length the header states, is a miss
#: found from the file's size alone, before any of it is read
MAX_ENTRY_BYTES = 256 << 20
#: the modules whose presence turns a format check of jsonschema's ``FORMAT_CHECKER`` on (each format is
#: checked only when its library imports: ``hostname`` with fqdn, ``uri`` with rfc3987...), which
#: decides whether an ``args:`` schema is proved narrower than the spec's (`toolgen.compile.narrowing`)
_FORMAT_MODULES = (
    "fqdn",
    "idna",
    "isoduration",
    "jsonpointer",
    "rfc3339_validator",
    "rfc3986_validator",
    "rfc3987",
    "rfc3987_syntax",
    "uri_template",
    "webcolors",
)
#: libraries whose versions can change what a build writes (formatters, model generator, tokenizer, parsers)
_LIBRARIES = (
    "black",
    "datamodel-code-generator",
    "inflect",  # the singular class names datamodel-code-generator gives array items (`labels` -> `Label`)
    "pydantic",
    "pydantic-core",
    "jinja2",
    "bpe-openai",
    "ruamel.yaml",
    "PyYAML",
    "jsonschema",
    "jsonschema-rs",
    "openapi-pydantic",
    "isort",
    "numpy",  # numpy: the vectors of the `search.semantic` option
    "onnxruntime",
    "tokenizers",  # the dense option's model run (`search: {semantic: onnx}`)
    "referencing",  # how jsonschema resolves the `$ref`s of a schema it validates with
    "jsonschema-specifications",
    "cel-python",  # which approval conditions (`approval.when`) check, and so build (`toolgen.policy.conditions`)
    "lark",  # cel-python's parser
    *(name.replace("_", "-") for name in _FORMAT_MODULES),
)


def digest(*parts: bytes | str) -> str:
    """SHA-256 (hex) of `parts`, each length-prefixed (so ``("ab", "c")`` and ``("a", "bc")`` differ)."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


def canonical(value: Any) -> str:
    """`value` as canonical JSON text (sorted keys, no whitespace), for keys made of structured data."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr)


@lru_cache(maxsize=1)
def environment_key() -> str:
    """The digest of the code that computes every cached value: each file of the toolgen package and
    of its templates (path and bytes), the Python version, the installed versions of `_LIBRARIES`,
    which of jsonschema's format-check libraries can be imported (`_FORMAT_MODULES`) and the reader
    YAML specs are parsed with (`toolgen.compile.load.yaml_reader`: PyYAML's C and pure-Python
    loaders differ on edge inputs). Computed once per process (about 130 files)."""
    package = Path(__file__).resolve().parents[1]
    from ..compile.load import yaml_reader
    from ..emit.template_path import template_dir

    parts: list[bytes | str] = [sys.version, sys.implementation.name, yaml_reader()]
    # found, not imported (a build answered by its manifest imports no jsonschema): a module on the
    # path without a distribution's metadata counts too
    parts.append(" ".join(name for name in _FORMAT_MODULES if importlib.util.find_spec(name) is not None))
    parts.extend(_library(name) for name in _LIBRARIES)
    for root in (package, template_dir()):
        for relative in _code_files(root):
            parts.extend((relative, (root / relative).read_bytes()))
    return digest(*parts)


def _library(name: str) -> str:
    """What `environment_key` names of the library `name`: the name of its ``.dist-info`` folder, the
    first on ``sys.path`` (``name-version.dist-info``, as the wheel format names it: another version
    is another folder), else its version as its metadata states it, or ``absent``. The folder's name
    is read where it can be: reading the version from the metadata file parses it as an e-mail, a
    millisecond for each of the 30 libraries of every build."""
    try:
        found = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return f"{name} absent"
    folder = getattr(found, "_path", None)  # a `PathDistribution`'s folder (a zip's member is no Path)
    if isinstance(folder, Path) and folder.suffix == ".dist-info" and folder.stem.count("-") == 1:
        return f"{name} {folder.name}"
    return f"{name}=={found.version}"


_CODE_SUFFIXES = (".py", ".j2", ".json", ".md")


def _code_files(root: Path) -> list[str]:
    """The files under `root` whose bytes are toolgen's code (`_CODE_SUFFIXES`, outside
    ``__pycache__``), as posix paths relative to `root`, in the order of their parts (the order
    `sorted` gives their `Path`s). One `os.walk`, which does not follow a link to a folder."""
    found: list[tuple[str, ...]] = []
    for folder, folders, files in os.walk(root):
        folders[:] = [f for f in folders if f != "__pycache__"]
        inside = Path(folder).relative_to(root).parts
        for name in files:
            if Path(name).suffix in _CODE_SUFFIXES and (path := Path(folder, name)).is_file():
                found.append((*inside, path.name))
    return ["/".join(parts) for parts in sorted(found)]


def enabled_by_environment() -> bool:
    """False when ``TOOLGEN_CACHE`` is ``0``, ``off``, ``false`` or ``no``, or when no `mac_key` can be had."""
    if os.environ.get("TOOLGEN_CACHE", "").strip().lower() in ("0", "off", "false", "no"):
        return False
    return mac_key() is not None


def key_file() -> Path:
    """Where the user's cache secret lives: ``$XDG_CACHE_HOME/toolgen/cache.key``, else
    ``~/.cache/toolgen/cache.key`` (outside every project, never committed)."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".cache") / "toolgen" / "cache.key"


@lru_cache(maxsize=1)
def mac_key() -> bytes | None:
    """The user's 32-byte cache secret (`key_file`), created (mode 0600) on first use; None when it
    can be neither read nor created, or is not 32 bytes (the cache is then off)."""
    path = key_file()
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    except OSError:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(32))
    except FileExistsError:  # another build created it first
        pass
    except OSError:
        return None
    try:
        return _read_key(path)
    except OSError:
        return None


def _read_key(path: Path) -> bytes | None:
    """The key's 32 bytes; None when the file is not a regular file (a link is not followed), is
    readable or writable by group or others (anyone who reads it can sign entries, and an entry is
    unpickled once its MAC holds), or is not 32 bytes."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o077:
            return None
        data = fh.read(33)
    return data if len(data) == 32 else None


def _mac(kind: str, key: str, payload: bytes) -> str | None:
    secret = mac_key()
    if secret is None:
        return None
    mac = hmac.new(secret, digest(kind, key).encode("ascii"), hashlib.sha256)
    mac.update(payload)  # not joined to the head first: a table's payload is megabytes
    return mac.hexdigest()


def _stated(head: bytes) -> tuple[str, int] | None:
    """The MAC and payload length an entry's header line states, or None when it is no header."""
    if not head.endswith(b"\n") or not head.startswith(_MAGIC):
        return None
    try:
        mac, length = head[len(_MAGIC) : -1].decode("ascii").split(" ")
    except (UnicodeDecodeError, ValueError):
        return None
    if not length.isdigit() or len(length) > 12:
        return None
    return mac, int(length)


@dataclass(frozen=True)
class Cache:
    """A cache folder. Every method is safe to call concurrently from several processes."""

    root: Path

    @classmethod
    def for_project(cls, base: Path | None) -> Cache | None:
        """The cache of the project rooted at `base` (default: the working directory): ``TOOLGEN_CACHE_DIR``
        if set, else ``<base>/.toolgen/cache``; None when ``TOOLGEN_CACHE`` turns it off."""
        if not enabled_by_environment():
            return None
        where = os.environ.get("TOOLGEN_CACHE_DIR", "").strip()
        if where:
            return cls(Path(where))
        project = base or Path.cwd()
        if (project / CACHE_DIR.parent).is_symlink() or (project / CACHE_DIR).is_symlink():
            return None  # a link in the project, where a pull request can plant it: no cache
        return cls(project / CACHE_DIR)

    def _path(self, kind: str, key: str) -> Path:
        return self.root / kind / key[:2] / key

    def get(self, kind: str, key: str) -> bytes | None:
        """The entry's payload, or None when it is absent, damaged or not written by this user's
        builds (wrong header, length or MAC)."""
        try:  # a regular file at the entry's own path: a planted link to a pipe or a device is not read
            fd = os.open(self._path(kind, key), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as fh:
                if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                    return None
                size = os.fstat(fh.fileno()).st_size
                head = fh.readline(
                    _HEADER_MAX
                )  # read apart: the payload (megabytes) is not copied out of the file's bytes
                stated = _stated(head)
                if stated is None or stated[1] != size - len(head) or stated[1] > MAX_ENTRY_BYTES:
                    return (
                        None  # measured before it is read: a planted gigabyte is a miss, not 2 GB of memory
                    )
                payload = fh.read(stated[1] + 1)
        except OSError:
            return None
        expected, length = stated
        mac = _mac(kind, key, payload)
        if mac is None or len(payload) != length or not hmac.compare_digest(mac, expected):
            return None
        return payload

    def put(self, kind: str, key: str, payload: bytes) -> None:
        """Store `payload` under `key`, atomically (temporary file, then rename). A failure to write
        (read-only or full disk) is ignored: the cache only saves time."""
        path = self._path(kind, key)
        mac = _mac(kind, key, payload)
        if mac is None:
            return
        header = _MAGIC + f"{mac} {len(payload)}\n".encode("ascii")
        tmp = path.with_name(f".{key}.{secrets.token_hex(4)}.tmp")
        try:
            if not self._folder_for(path):
                return  # a link planted in the cache folder: never write through it
            with open(tmp, "xb") as fh:
                fh.write(header)
                fh.write(payload)
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()

    def _folder_for(self, path: Path) -> bool:
        """Make the folder of the entry at `path`, and the cache's `.gitignore`; False (nothing made)
        when a link stands where a folder of it goes: never written through. Raises OSError when
        they cannot be made."""
        if path.parent.parent.is_symlink() or path.parent.is_symlink():
            return False
        path.parent.mkdir(parents=True, exist_ok=True)
        ignore = self.root / ".gitignore"
        if not ignore.exists() and not ignore.is_symlink():  # git ignores the cache wherever it lives
            try:  # O_EXCL: a link planted there a moment ago is not followed
                fd = os.open(ignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write("# the build cache of toolgen: safe to delete, never committed\n*\n")
            except FileExistsError:
                pass
        return True

    def session(self) -> CacheSession:
        """A session of this cache for one build (`CacheSession`): what the build writes is published by
        `CacheSession.commit` once the build succeeds, and dropped otherwise. Staging folders left by
        builds killed outright, untouched for `STALE_SESSION_SECONDS`, are removed first."""
        self._remove_stale_sessions()
        return CacheSession(self.root, self.root / f"{_SESSION_PREFIX}{secrets.token_hex(8)}")

    def _remove_stale_sessions(self) -> None:
        """Remove ``.session-*`` folders of this cache last modified more than `STALE_SESSION_SECONDS`
        ago (best effort: a folder that cannot be read or removed is left)."""
        horizon = time.time() - STALE_SESSION_SECONDS
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.root):
                if not entry.name.startswith(_SESSION_PREFIX) or not entry.is_dir(follow_symlinks=False):
                    continue
                with contextlib.suppress(OSError):
                    if entry.stat(follow_symlinks=False).st_mtime < horizon:
                        shutil.rmtree(entry.path, ignore_errors=True)

    def memo(self, kind: str, key: str, compute: Callable[[], bytes]) -> bytes:
        """The entry under `key`, or `compute()` stored under it."""
        found = self.get(kind, key)
        if found is None:
            found = compute()
            self.put(kind, key, found)
        return found

    def memo_text(self, kind: str, salt: str, fn: Callable[[str], str]) -> TextMemo:
        """`fn` (a pure, module-level ``str -> str`` function) answered from the cache: the key is
        the salt (what names `fn`'s code and settings) and the argument. Picklable, so a worker
        process (`toolgen.builder.worker`) can run it."""
        return TextMemo(self, kind, salt, fn)

    def clear(self) -> None:
        """Remove the whole cache folder."""
        shutil.rmtree(self.root, ignore_errors=True)


@dataclass(frozen=True)
class CacheSession(Cache):
    """The cache as one build writes it: every entry it puts goes to a staging folder of its own,
    ``<root>/.session-<random>/<kind>/<key[:2]>/<key>`` (`staging`), and reaches the cache only when
    the build succeeds (`commit`); a build that fails (refused at lint, by its inputs, by an
    exception, or by its output folders) ends with `close`, which removes the staging folder, so the
    cache is as it was before the build, byte for byte. `get` reads the staging folder first (what
    this build already computed), then the cache.

    The entries are staged on disk, not held in memory: the tables of a cold build of a large API are
    tens of megabytes (GitHub's include-everything build writes 57 MB in 1,197 entries), which the
    build would otherwise keep alive to its end. A session is picklable (two paths): the worker process that
    formats the Python package (`toolgen.builder.worker`) writes its pieces into the same staging
    folder, and `commit` publishes them with the build's own. Each entry is published by a rename
    (atomic, as `Cache.put`), so a concurrent build reads the old entry, the new one or none; two
    builds committing the same key publish the same bytes (an entry is a pure function of its key).
    A build killed outright (SIGKILL) leaves its staging folder, which no build reads; a later session
    removes it once it is a day old (`STALE_SESSION_SECONDS`), or `Cache.clear` with the cache."""

    staging: Path

    def get(self, kind: str, key: str) -> bytes | None:
        """The entry this build staged, else the cache's (`Cache.get`)."""
        found = Cache(self.staging).get(kind, key)
        return found if found is not None else super().get(kind, key)

    def put(self, kind: str, key: str, payload: bytes) -> None:
        """Stage `payload` under `key` (`Cache.put` into the staging folder; published by `commit`)."""
        Cache(self.staging).put(kind, key, payload)

    def session(self) -> CacheSession:
        """This session itself: a build given a session writes into it, and its owner commits it."""
        return self

    def commit(self) -> int:
        """Publish every entry staged so far (by this process or the worker's) into the cache and
        remove the staging folder; returns how many were published. Call it once the build has
        succeeded and every process writing into the session has ended."""
        published = 0
        try:
            for kind in os.scandir(self.staging):
                for prefix in os.scandir(kind.path) if kind.is_dir(follow_symlinks=False) else ():
                    for entry in os.scandir(prefix.path) if prefix.is_dir(follow_symlinks=False) else ():
                        if entry.name.startswith(".") or not entry.is_file(follow_symlinks=False):
                            continue  # a temporary file of a write that did not finish
                        target = self._path(kind.name, entry.name)
                        with contextlib.suppress(OSError):
                            if self._folder_for(target):
                                os.replace(entry.path, target)
                                published += 1
        except OSError:
            pass  # a staging folder that was never made (nothing staged) or cannot be read
        self.close()
        return published

    def close(self) -> None:
        """Drop what is still staged (everything, unless `commit` published it): the cache stays as it
        was. Safe to call more than once."""
        shutil.rmtree(self.staging, ignore_errors=True)


@dataclass(frozen=True)
class TextMemo:
    """``fn(text)`` remembered in `cache` under ``digest(environment, salt, text)``."""

    cache: Cache
    kind: str
    salt: str
    fn: Callable[[str], str]

    def __call__(self, text: str) -> str:
        key = digest(self.salt, text)
        return self.cache.memo(self.kind, key, lambda: self.fn(text).encode("utf-8")).decode("utf-8")


def files_digest(files: Iterable[tuple[str, bytes]]) -> dict[str, str]:
    """Relative path -> SHA-256 of the content, for a manifest."""
    return {rel: hashlib.sha256(content).hexdigest() for rel, content in files}


def folder_matches(folder: Path, recorded: dict[str, str]) -> bool:
    """Whether `folder` holds exactly the files of `recorded` (relative path -> SHA-256), each with
    that digest (`__pycache__` ignored, as `toolgen.builder.output_files.check_outputs` ignores it)."""
    if not folder.is_dir():
        return False
    present = {
        p.relative_to(folder).as_posix(): p
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.relative_to(folder).parts
    }
    if set(present) != set(recorded):
        return False
    for rel, path in present.items():
        try:
            if hashlib.sha256(path.read_bytes()).hexdigest() != recorded[rel]:
                return False
        except OSError:
            return False
    return True
