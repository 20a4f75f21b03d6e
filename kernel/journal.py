"""The journal: entry format, hash chain, verification and replay. Pure: text in, values out.

Format. One JSON object per line, in RFC 8785 canonical form (sorted keys, no spaces; numbers
are integers, or floats in their canonical spelling), ending in a newline. Every entry has
``seq`` (0, 1, 2, ...), ``ts`` (an integer time), ``kind``, ``effect_id``, kind-specific
fields, ``prev`` (the previous entry's hash, 64 zeros for the first) and ``hash``: the hex
SHA-256 of the line with its ``"hash":...`` member removed. So the hash covers the canonical
entry and, through ``prev``, every entry before it. The schema is ``journal.schema.json``.
A line holds at most ``MAX_LINE`` = 1,048,576 bytes (1 MiB) of UTF-8 before its newline:
``seal`` refuses to write a longer one, and a longer line (even a torn last one) is invalid,
judged by its length before it is parsed.

Verification checks, line by line: JSON syntax, canonical spelling, known kind, required
fields and types, seq continuity, the chain link, the hash itself, and time order. It stops
at the first bad line and names it, like a Jepsen checker: ``valid`` is True or False, plus
anomalies with the line number as witness. A last line without its newline is a torn write
from a crash: it was never acknowledged as durable, so it is discarded and reported as a
note, never parsed as an entry. A hash chain cannot see entries cut from the end; pass the
last known hash as ``expected_head`` to catch that.

Speed. ``verify`` parses each block of ``BLOCK`` lines with msgspec (a C parser) in one call,
against a typed schema (``_Entry``): every member's JSON type, integer range and literal,
the nested records' members, no float anywhere, checked as the line is read. Then it proves
what it can line by line (``_proven``): a line that is exactly orjson's sorted spelling of
its value, with no character beyond the Basic Multilingual Plane and only safe integers, is
its RFC 8785 form; its members must be those of its kind (``_typed_fields``), and its hash
over its own bytes with the one top-level hash member cut out must match. The first line it
does not prove is judged by the exact path (``_check_line``, also ``fast=False``), which
alone words anomalies, and proving resumes after it; so both give the same verdict and the
same entries (tests/kernel/test_fast_verify.py).
"""

from __future__ import annotations

import gc
import hashlib
import itertools
import json
import json.scanner
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, NotRequired, TypedDict, cast

import msgspec
import orjson

from kernel.errors import JournalError, KernelError
from kernel.identity import LINE_DEPTH, canonical

GENESIS = "0" * 64
HEX64 = re.compile(r"[0-9a-f]{64}\Z")
MAX_SAFE_INT = 2**53 - 1
MAX_LINE = 1 << 20  # the longest entry line, in UTF-8 bytes before its newline
_HEX_DIGITS = b"0123456789abcdef"

_any = object  # a field that may hold any JSON value


def _all_hex(v: str) -> bool:
    """Only lowercase hex digits (deleting them in C leaves nothing)."""
    return v.isascii() and not v.encode().translate(None, _HEX_DIGITS)


def _hex64(v: object) -> bool:
    return type(v) is str and len(v) == 64 and _all_hex(v)


def _nat(v: object) -> bool:
    return type(v) is int and 0 <= v <= MAX_SAFE_INT


def _pos(v: object) -> bool:
    return type(v) is int and 1 <= v <= MAX_SAFE_INT


def _str(v: object) -> bool:
    return isinstance(v, str)


def _obj(v: object) -> bool:
    return isinstance(v, dict)


def _bool(v: object) -> bool:
    return isinstance(v, bool)


def _one_of(*options: str) -> Any:
    allowed = frozenset(options)
    return lambda v: isinstance(v, str) and v in allowed


def _present(v: object) -> bool:
    return True


def _lookup(v: object) -> bool:
    return (isinstance(v, dict) and v.keys() == {"found", "asked_at"}
            and _bool(v["found"]) and _nat(v["asked_at"]))


def _lease_check(v: object) -> bool:
    return (type(v) is dict and type(v.get("id")) is str and type(v.get("expires_at")) is int
            and type(v.get("revoked")) is bool and type(v.get("live")) is bool)


def _checks(v: object) -> bool:
    """The record of a lease and premise check: {lease: {...}, facts: {...}, stale: [...]}."""
    if type(v) is not dict:
        return False
    stale = v.get("stale")
    return (_lease_check(v.get("lease")) and type(v.get("facts")) is dict
            and type(stale) is list and (not stale or all(type(s) is str for s in stale)))


COMMON = {"seq": _nat, "ts": _nat, "kind": _str, "effect_id": _hex64, "prev": _hex64,
          "hash": _hex64}
# Required fields of each kind (beyond COMMON), with their checks; then optional ones.
KINDS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "PROPOSED": ({"payload": _present, "payload_digest": _hex64, "key": _present,
                  "premises": _obj, "lease": _str, "target": _str, "capabilities": _obj,
                  "timing": _obj}, {"coordination": _obj}),
    "AUTHORIZED": ({"checks": _checks}, {"admission": _obj}),
    "DISPATCHED": ({"attempt": _pos, "phase": _one_of("dispatch", "recovery"),
                    "deadline": _nat, "claim_until": _nat, "first_sent_at": _nat,
                    "checks": _checks}, {"lookup": _lookup}),
    "COMMITTED": ({"via": _one_of("ack", "lookup", "verification")},
                  {"attempt": _pos, "lookup": _lookup}),
    "LANDED": ({"via": _one_of("ack", "lookup")}, {"attempt": _pos, "lookup": _lookup}),
    "VERIFIED": ({"result": _one_of("could_not_run")}, {}),
    "REFUSED": ({"reason": _str, "executed": _one_of("false", "true")},
                {"checks": _checks, "lookup": _lookup}),
    "AMBIGUOUS": ({"reason": _str}, {"checks": _checks, "lookup": _lookup}),
    "REJECTED": ({"reason": _one_of("conflicting_payload"), "payload_digest": _hex64}, {}),
    "LATE": ({"answer": _one_of("ack", "lookup")}, {"attempt": _pos, "found": _bool,
                                                      "asked_at": _nat}),
}
ENTRY_FIELDS = frozenset(COMMON).union(*(set(r) | set(o) for r, o in KINDS.values()))
CAPABILITY_FIELDS = {"dedupes": _bool, "queryable": _bool, "dedup_window": _nat,
                     "lookup_lag": _nat}
OPTIONAL_CAPABILITIES = {"bounds_in_flight": lambda v: v is False}  # written only when false
TIMING_FIELDS = {"send_timeout": _pos, "settle_margin": _pos, "dedup_margin": _nat}


# ---------------------------------------------------------------- writing


def seal(body: Mapping[str, Any], seq: int, prev: str) -> tuple[dict[str, Any], str]:
    """Chain an entry body: add seq and prev, compute the hash. Returns (entry, line)."""
    entry = dict(body)
    entry["seq"] = seq
    entry["prev"] = prev
    entry.pop("hash", None)
    # One canonical encoding, in two halves: the members sorting before "hash" and those
    # after it (seq and prev are always there). Top-level keys compare with "hash" alike in
    # UTF-16 and code-point order, so the halves joined are canonical(entry) byte for byte
    # and the hash member goes between them.
    try:
        low = {k: v for k, v in entry.items() if k < "hash"}
    except TypeError:  # a key that is not a string: canonical says why there is no form
        canonical(entry)
        raise
    before = canonical(low)[:-1]
    after = canonical({k: v for k, v in entry.items() if k > "hash"})[1:]
    head = before + b"," if len(before) > 1 else before
    digest = hashlib.sha256(head + after).hexdigest()
    entry["hash"] = digest
    line = b"%s\"hash\":\"%s\",%s" % (head, digest.encode(), after)
    if len(line) > MAX_LINE:
        raise KernelError(f"entry {seq} would be a line of {len(line):,} bytes: longer than "
                          f"the journal's limit of {MAX_LINE:,}")
    return entry, line.decode("utf-8") + "\n"


class Chain:
    """The growing end of a journal: what the next entry's seq and prev must be."""

    def __init__(self, seq: int = 0, head: str = GENESIS) -> None:
        self.seq = seq
        self.head = head

    def seal(self, body: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
        entry, line = seal(body, self.seq, self.head)
        self.seq += 1
        self.head = entry["hash"]
        return entry, line


# ---------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class Anomaly:
    type: str
    line: int  # 1-based line number: the witness
    explanation: str

    def as_json(self) -> dict[str, Any]:
        return {"type": self.type, "line": self.line, "explanation": self.explanation}


@dataclass(slots=True)
class Verdict:
    valid: bool | str  # True, False, or "unknown"
    entries: list[dict[str, Any]] = field(default_factory=list)
    anomalies: list[Anomaly] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"valid": self.valid, "entries": len(self.entries),
                "anomalies": [a.as_json() for a in self.anomalies], "notes": self.notes}


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _checked_float(text: str) -> float:
    value = float(text)
    try:
        spelled = canonical(value).decode()
    except KernelError:  # 1e400 reads as inf, which has no JSON form
        raise ValueError(f"number {text} is out of range") from None
    if spelled != text:
        raise ValueError(f"number {text} is not in canonical form")
    return value


# Integers use the C parser's own fast path; a line that may hold one of 16 digits or more
# (this also matches inside some strings: harmless) is then walked by _read_doubles.
_decoder = json.JSONDecoder(parse_float=_checked_float, parse_constant=_reject_constant)
_decode = _decoder.decode
# One value from a position (no whitespace skipping): the decoder's own C scanner.
_scan: Any = json.scanner.make_scanner(_decoder)  # type: ignore[arg-type]
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True,
                           allow_nan=False).encode
_LONG_NUMBER = re.compile(r"[:,\[]-?[0-9]{16}")


def _as_double(n: int) -> float:
    """An integer spelling beyond +-(2^53-1) is read as the double it is the canonical
    spelling of (how 1e16 is written); any other is refused (the one rule, identity.py)."""
    try:
        double = float(n)
        if canonical(double) == str(n).encode():
            return double
    except (OverflowError, KernelError):
        pass
    raise JournalError(0, "integer outside the safe range +-(2^53-1) that is not the "
                          "canonical spelling of a double")


def _read_doubles(value: Any) -> None:
    """Replace, in place, every unsafe integer by its double (or raise)."""
    pairs = value.items() if type(value) is dict else enumerate(value)
    for k, v in list(pairs):
        if type(v) is int and not -MAX_SAFE_INT <= v <= MAX_SAFE_INT:
            value[k] = _as_double(v)
        elif type(v) is dict or type(v) is list:
            _read_doubles(v)


def _too_deep(value: Any) -> bool:
    """Whether ``value`` nests more than LINE_DEPTH containers (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        inner = v.values() if type(v) is dict else v if type(v) is list else None
        if inner is not None:
            if depth > LINE_DEPTH:
                return True
            stack.extend((x, depth + 1) for x in inner)
    return False


def _canonical_problem(text: str, entry: dict[str, Any]) -> str | None:
    """None if ``text`` is the RFC 8785 spelling of ``entry``, else why not. The C encoder
    decides alone when its spelling provably is RFC 8785's: floats were vetted as they were
    parsed, and without characters beyond the BMP both key orders agree."""
    if _encode(entry) == text and (text.isascii() or max(text) < "\U00010000"):
        return None
    try:
        if canonical(entry).decode("utf-8") == text:
            return None
    except KernelError as exc:
        return f"no canonical form: {exc}"
    return "not in RFC 8785 canonical form (key order, spacing, escapes or number spelling)"


def _is_canonical(text: str, entry: dict[str, Any]) -> bool:
    return _canonical_problem(text, entry) is None


def _common_ok(entry: dict[str, Any]) -> bool:
    """The COMMON checks in one expression (the fast path for a well-formed entry)."""
    seq, ts = entry.get("seq"), entry.get("ts")
    eid, prev, hash_ = entry.get("effect_id"), entry.get("prev"), entry.get("hash")
    return (type(seq) is int and 0 <= seq <= MAX_SAFE_INT and type(ts) is int
            and 0 <= ts <= MAX_SAFE_INT and type(entry.get("kind")) is str
            and type(eid) is str and type(prev) is str and type(hash_) is str
            and len(eid) == len(prev) == len(hash_) == 64 and _all_hex(eid + prev + hash_))


# Per kind: how many members an entry has with no optional field (COMMON plus required).
_PLAIN_SIZE = {kind: len(COMMON) + len(required) for kind, (required, _) in KINDS.items()}


def _check_fields(entry: dict[str, Any], line_no: int) -> None:
    if not _common_ok(entry):
        _check_members(entry, COMMON, line_no)
    kind = entry["kind"]
    if kind not in KINDS:
        raise JournalError(line_no, f"unknown kind '{kind}' (known: {', '.join(KINDS)})")
    required, optional = KINDS[kind]
    _check_members(entry, required, line_no, f"{kind} ")
    if len(entry) != _PLAIN_SIZE[kind]:  # every required member is there: any more?
        _check_extra(entry, kind, required, optional, line_no)
    if kind == "PROPOSED":
        _check_nested(entry, "capabilities", CAPABILITY_FIELDS, line_no, OPTIONAL_CAPABILITIES)
        _check_nested(entry, "timing", TIMING_FIELDS, line_no)


def _check_members(entry: dict[str, Any], checks: dict[str, Any], line_no: int,
                   kind: str = "") -> None:
    """Each named member is present and passes its check; else say which one fails."""
    for name, ok in checks.items():
        if name not in entry:
            raise JournalError(line_no, f"{kind}entry lacks field '{name}'" if kind
                               else f"missing field '{name}'")
        if not ok(entry[name]):
            raise JournalError(line_no, f"{kind}field '{name}' has the wrong type or value: "
                                        f"{entry[name]!r}")


def _check_extra(entry: dict[str, Any], kind: str, required: dict[str, Any],
                 optional: dict[str, Any], line_no: int) -> None:
    for name in entry.keys() - COMMON.keys() - required.keys():
        if name not in optional:
            raise JournalError(line_no, f"{kind} entry has unknown field '{name}'")
        if not optional[name](entry[name]):
            raise JournalError(line_no, f"{kind} field '{name}' has the wrong type or value")


def _check_nested(entry: dict[str, Any], name: str, fields: dict[str, Any],
                  line_no: int, optional: dict[str, Any] | None = None) -> None:
    inner, optional = entry[name], optional or {}
    for key, ok in fields.items():
        if key not in inner or not ok(inner[key]):
            raise JournalError(line_no, f"{name}.{key} is missing or has the wrong type")
    for key, ok in optional.items():
        if key in inner and not ok(inner[key]):
            raise JournalError(line_no, f"{name}.{key} has the wrong value")
    for key in inner.keys() - fields.keys() - optional.keys():
        raise JournalError(line_no, f"{name} has unknown field '{key}'")


def _plainly_canonical(text: str, entry: dict[str, Any], seen: set[tuple[str, ...]]) -> bool:
    """True when string tests and one walk prove ``text`` the RFC 8785 spelling of ``entry``:
    ASCII without backslashes, so every string is spelled literally and ``":`` ends a key
    and nothing else; no whitespace; no -0 and no integer beyond +-(2^53-1); every
    object's keys in order, and as many keys in the text as in the parsed objects (so none
    was duplicated). Floats were vetted as they were parsed. False means: not proven (the
    exact, slower test then decides). ``seen`` holds key tuples already found in order."""
    if not text.isascii() or "\\" in text or " " in text or "\t" in text or "-0" in text:
        return False
    return _members(entry, seen, LINE_DEPTH) == text.count('":')


def _members(value: Any, seen: set[tuple[str, ...]], room: int) -> int:
    """How many members ``value`` and the objects inside it have; -1 if some object's keys
    are out of order, an integer is beyond +-(2^53-1) or the nesting exceeds ``room``."""
    if room <= 0:
        return -1
    count = 0
    if type(value) is dict:
        keys = tuple(value)
        if keys not in seen:
            if list(keys) != sorted(keys):
                return -1
            if len(seen) < 4096:
                seen.add(keys)
        count, value = len(keys), value.values()
    for v in value:
        kind = type(v)
        if kind is int:
            if not -MAX_SAFE_INT <= v <= MAX_SAFE_INT:
                return -1
        elif kind is dict or kind is list:
            inner = _members(v, seen, room - 1)
            if inner < 0:
                return -1
            count += inner
    return count


def parse_line(text: str, line_no: int,
               seen: set[tuple[str, ...]] | None = None) -> dict[str, Any]:
    """One journal line (without its newline) to an entry, or JournalError saying why not.
    ``seen`` may carry key orders already checked across the lines of one journal."""
    try:
        entry, end = _scan(text, 0)
        if end != len(text):
            entry = _decode(text)  # raises ValueError ("Extra data"), unless only whitespace
    except RecursionError:
        raise JournalError(line_no, f"nests deeper than {LINE_DEPTH} levels") from None
    except StopIteration:
        raise JournalError(line_no, f"not valid JSON ({_why_not_json(text)})") from None
    except ValueError as exc:
        raise JournalError(line_no, f"not valid JSON ({exc})") from None
    if type(entry) is not dict or "\r" in text \
            or not _plainly_canonical(text, entry, set() if seen is None else seen):
        _exactly_canonical(text, entry, line_no)
    _check_fields(entry, line_no)
    return cast(dict[str, Any], entry)


def _why_not_json(text: str) -> str:
    try:
        _decode(text)
    except ValueError as exc:
        return str(exc)
    return "no value"  # pragma: no cover - the scanner and the decoder agree


def _exactly_canonical(text: str, entry: Any, line_no: int) -> None:
    """The slow path of parse_line: raise JournalError unless ``text`` is canonical."""
    if text.endswith("\r"):
        raise JournalError(line_no, "line ends with a carriage return: journal lines end with "
                                    "a bare newline (LF), not CRLF")
    if text.count("{") + text.count("[") > LINE_DEPTH and _too_deep(entry):
        raise JournalError(line_no, f"nests deeper than {LINE_DEPTH} levels")
    if type(entry) is not dict:
        raise JournalError(line_no, "an entry must be a JSON object")
    if _LONG_NUMBER.search(text):
        try:
            _read_doubles(entry)
        except JournalError as exc:
            raise JournalError(line_no, str(exc).split(": ", 1)[1]) from None
    problem = _canonical_problem(text, entry)
    if problem is not None:
        raise JournalError(line_no, problem)


def _unsigned(text: str, entry: Mapping[str, Any]) -> str:
    """The canonical entry without its hash member, cut from its canonical line when the
    member's text occurs there once (so it can only be the top-level one), else rebuilt."""
    needle = '"hash":"' + entry["hash"] + '"'
    at = text.find(needle)
    if at < 0 or text.find(needle, at + 1) >= 0:
        return canonical({k: v for k, v in entry.items() if k != "hash"}).decode("utf-8")
    end = at + len(needle)
    if text[end] == ",":
        return text[:at] + text[end + 1:]
    return text[:at - 1] + text[end:]  # the last member: drop the comma before it instead


def entry_hash(text: str, entry: Mapping[str, Any]) -> str:
    """The hash a parsed canonical line should carry: SHA-256 of the entry minus its hash."""
    return hashlib.sha256(_unsigned(text, entry).encode("utf-8")).hexdigest()


def decode(data: bytes) -> str:
    """Journal bytes as text. A last line cut inside a multi-byte character is a torn line
    and loses only that character; any other invalid UTF-8 is a JournalError."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        torn = exc.reason == "unexpected end of data" and b"\n" not in data[exc.start:]
        if torn:
            return data[:exc.start].decode("utf-8")
        line = data.count(b"\n", 0, exc.start) + 1
        raise JournalError(line, f"not valid UTF-8 (byte {exc.start})") from None


def verify(text: str | bytes, now: int | None = None, expected_head: str | None = None,
           *, fast: bool = True) -> Verdict:
    """Verify a whole journal given as text (or bytes). Stops at the first bad line.

    With ``fast`` (the default) the lines of each block are first tried by ``_proven``; a
    line it does not prove sound is judged by the exact path, which alone finds and words
    every anomaly. ``fast=False`` runs the exact path only.

    The automatic garbage collector is paused meanwhile (collector_paused)."""
    with collector_paused():
        return _verify(text, now, expected_head, fast)


@contextmanager
def collector_paused() -> Iterator[None]:
    """The automatic garbage collector paused, and left as it was found. For work that
    builds many acyclic containers (a journal's entries, the effects re-executed from them):
    the collector's passes, each walking every container built so far, took more CPU than
    the verification itself on a journal of 1,000,000 entries."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _verify(text: str | bytes, now: int | None, expected_head: str | None,
            fast: bool) -> Verdict:
    verdict = Verdict(valid=True)
    try:
        text = decode(text) if isinstance(text, bytes) else text
    except JournalError as exc:
        return _invalid(verdict, Anomaly("malformed", exc.line_no, str(exc)))
    end = text.rfind("\n") + 1  # where the complete lines end
    problem = _lines(text, 0, end, 0, GENESIS, 0, now, fast, verdict.entries)
    return _ending(verdict, problem, text, end, now, expected_head)


def _lines(text: str, begin: int, end: int, start: int, prev: str, last_ts: int,
           now: int | None, fast: bool, entries: list[dict[str, Any]]) -> Anomaly | None:
    """Judge the complete lines of ``text[begin:end]``, the first of them (the journal's
    line at index ``start``) following an entry of hash ``prev`` and time ``last_ts``:
    append their entries to ``entries`` up to the first bad line, which is returned."""
    seen: set[tuple[str, ...]] = set()
    known: dict[str, str] = {}  # effect ids the fast path found to be hex, one object each
    for block in _blocks(text, begin, end):
        parsed = _parse_block(block) if fast else None
        at = 0
        while at < len(block):
            if parsed is not None:
                sound = _proven(parsed, block, at, start + at, prev, last_ts, now, known)
                if sound:
                    entries += parsed[at:at + sound]
                    at += sound
                    prev, last_ts = entries[-1]["hash"], entries[-1]["ts"]
                    continue
            i = start + at
            checked = _check_line(block[at], i + 1, i, prev, last_ts, now, seen)
            if type(checked) is not dict:
                return cast(Anomaly, checked)
            entries.append(checked)
            prev, last_ts = checked["hash"], checked["ts"]
            at += 1
        start += len(block)
    return None


def _ending(verdict: Verdict, problem: Anomaly | None, text: str, end: int, now: int | None,
            expected_head: str | None) -> Verdict:
    """The verdict once the complete lines (up to ``end``) are judged (``problem``: the
    first bad one): then the torn last line, if any, and the expected head."""
    if problem is not None:
        return _invalid(verdict, problem)
    entries, start = verdict.entries, len(verdict.entries)
    prev, last_ts = (entries[-1]["hash"], entries[-1]["ts"]) if entries else (GENESIS, 0)
    tail = text[end:]  # after the last newline: a torn write, if anything
    if tail:
        problem = _torn_problem(tail, start, prev, last_ts, now)
        if problem is not None:
            return _invalid(verdict, problem)
        verdict.notes.append(f"line {start + 1} is a torn write (no newline): discarded")
    if expected_head is not None and prev != expected_head:
        return _invalid(verdict, Anomaly("truncated", start,
                                         "the journal ends before the expected last entry"))
    return verdict


def _blocks(text: str, begin: int = 0, end: int = -1) -> Iterator[list[str]]:
    """The complete lines of ``text`` (without their newlines), BLOCK at a time: what
    ``text.split("\n")[:-1]`` holds, split a piece of about _PIECE characters (ending at a
    newline) at a time, so that the lines of the whole journal are never all held at once
    beside its entries (520 MB for 1,000,000 lines of the benchmark's journal)."""
    if end < 0:
        end = text.rfind("\n") + 1  # where the complete lines end
    pos, lines = begin, list[str]()
    while pos < end:
        cut = text.find("\n", min(pos + _PIECE, end - 1))  # a newline: the piece's last
        lines += text[pos:cut].split("\n")
        pos = cut + 1
        while len(lines) >= BLOCK:
            yield lines[:BLOCK]
            del lines[:BLOCK]
    if lines:
        yield lines


# ---------------------------------------------------------------- the fast path

BLOCK = 1024  # lines the fast path parses in one call of orjson
_PIECE = 1 << 18  # characters of the text split into lines at a time
_SORTED_SAFE = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER
_HASH_KEY = b'"hash":"'
_HASH_MEMBER = len(_HASH_KEY) + 64 + 2  # '"hash":"' + 64 hex digits + '",': what is cut


def _plain(levels: int) -> Any:
    """The type of a JSON value without floats and with at most ``levels`` containers
    nested. msgspec reads no recursive alias, and its parser's type tree doubles with each
    level spelled out, so the fast path stops at _FREE_DEPTH levels: a deeper free-form
    value leaves its line to the exact path, which applies the real limit, LINE_DEPTH."""
    value: Any = None | bool | int | str
    for _ in range(levels):
        value = None | bool | int | str | list[value] | dict[str, value]
    return value


_FREE_DEPTH = 8
_Nat = Annotated[int, msgspec.Meta(ge=0, le=MAX_SAFE_INT)]
_Pos = Annotated[int, msgspec.Meta(ge=1, le=MAX_SAFE_INT)]
_Free: Any = _plain(_FREE_DEPTH)
_FreeObject: Any = dict[str, _plain(_FREE_DEPTH - 1)]  # type: ignore[misc]


class _Lease(TypedDict):
    id: str
    expires_at: int
    revoked: bool
    live: bool


class _Checks(TypedDict):
    lease: _Lease
    facts: _FreeObject
    stale: list[str]


class _Lookup(TypedDict):
    found: bool
    asked_at: _Nat


class _Capabilities(TypedDict):
    dedupes: bool
    queryable: bool
    dedup_window: _Nat
    lookup_lag: _Nat
    bounds_in_flight: NotRequired[Literal[False]]


class _Timing(TypedDict):
    send_timeout: _Pos
    settle_margin: _Pos
    dedup_margin: _Nat


class _Entry(TypedDict, total=False):
    """Every member an entry of some kind may have, with its type (KINDS, stricter: the
    checks record has exactly its three members, and no float anywhere)."""
    seq: _Nat
    ts: _Nat
    kind: str
    effect_id: str
    prev: str
    hash: str
    payload: _Free
    payload_digest: str
    key: _Free
    premises: _FreeObject
    lease: str
    target: str
    capabilities: _Capabilities
    timing: _Timing
    coordination: _FreeObject
    admission: _FreeObject
    checks: _Checks
    attempt: _Pos
    phase: Literal["dispatch", "recovery"]
    deadline: _Nat
    claim_until: _Nat
    first_sent_at: _Nat
    lookup: _Lookup
    via: Literal["ack", "lookup", "verification"]
    result: Literal["could_not_run"]
    reason: str
    executed: Literal["false", "true"]
    answer: Literal["ack", "lookup"]
    found: bool
    asked_at: _Nat


_read_block = msgspec.json.Decoder(list[_Entry]).decode
_read_entry = msgspec.json.Decoder(_Entry).decode


def _shapes() -> dict[tuple[str, ...], dict[str, str]]:
    """Each member tuple an entry may have (sorted, as its canonical line spells them) ->
    the kinds that have it, each name mapped to itself."""
    shapes: dict[tuple[str, ...], dict[str, str]] = {}
    for kind, (required, optional) in KINDS.items():
        for n in range(len(optional) + 1):
            for extra in itertools.combinations(optional, n):
                shapes.setdefault(tuple(sorted({*COMMON, *required, *extra})), {})[kind] = kind
    return shapes


_SHAPES = _shapes()
# What a member's type in _Entry leaves unsaid, by kind.
_KIND_RULES: dict[str, Callable[[dict[str, Any]], bool]] = {
    "PROPOSED": lambda e: _hex64(e["payload_digest"]),
    "REJECTED": lambda e: e["reason"] == "conflicting_payload" and _hex64(e["payload_digest"]),
    "LANDED": lambda e: e["via"] != "verification",
}


def _typed_fields(entry: dict[str, Any], known: dict[str, str]) -> bool:
    """What _check_fields checks (but seq, ts, prev and hash, left to the chain) of an
    entry msgspec parsed as an _Entry: True proves the entry's fields sound; False: not
    proven. Its members are those of its kind (its types were checked by the parse).
    ``known`` maps effect ids already found to be 64 hex digits to themselves: an entry
    whose id is there gets that string object, as its kind gets the name in KINDS (equal,
    so the entry is the same; shared, so a journal holds one copy of each)."""
    kinds = _SHAPES.get(tuple(entry))
    kind = None if kinds is None else kinds.get(entry["kind"])
    if kind is None:
        return False
    entry["kind"] = kind
    rule = _KIND_RULES.get(kind)
    if rule is not None and not rule(entry):
        return False
    eid = entry["effect_id"]
    same = known.get(eid)
    if same is None:
        if not _hex64(eid):
            return False
        if len(known) > 4096:
            known.clear()
        known[eid] = eid
    else:
        entry["effect_id"] = same
    return True


def _parse_block(lines: list[str]) -> list[Any]:
    """The block's lines parsed by msgspec as _Entry values in one call; if that fails,
    line by line, None standing for each line that is not one."""
    try:
        parsed = _read_block("[" + ",".join(lines) + "]")
        if len(parsed) == len(lines):
            return cast(list[Any], parsed)
    except (msgspec.DecodeError, UnicodeEncodeError, RecursionError):  # ValidationError too
        pass
    return [_parsed_line(line) for line in lines]


def _parsed_line(line: str) -> Any:
    try:
        return _read_entry(line)
    except (msgspec.DecodeError, UnicodeEncodeError, RecursionError):
        return None


def _proven(parsed: list[Any], lines: list[str], at: int, seq: int, prev: str, last_ts: int,
            now: int | None, known: dict[str, str]) -> int:
    """How many lines from ``lines[at]`` on are proven sound, ``parsed[at:]`` being their
    entries; seq, prev and last_ts are those the line at ``at`` must follow. It never words
    an anomaly: the first line it does not prove is judged by the exact path.

    A line is proven when the typed parse read it (so it holds no float and nests within
    the parse's types, a bound under the depth limit), it is exactly what orjson writes for
    that value (sorted keys, safe integers only; a member the schema does not know was
    dropped by the parse, so its line is not) and it holds no character beyond the Basic
    Multilingual Plane (where orjson's key order differs from RFC 8785's): then it is its
    entry's RFC 8785 spelling, and the one spelled entry the line can be, so each value
    lines up with its line. Its members are its kind's (_typed_fields). Its hash member is
    the only text ``"hash":"`` in it (a second one, nested, leaves the line to the exact
    path), so the line with that member cut out is the canonical entry without its hash,
    as _unsigned would cut it, and hashing those bytes must give the hash. Last, it
    chains: seq, prev, time order.
    A proven entry's prev becomes the string object of the hash before it (``prev``), so
    the two equal strings are kept once."""
    dumps, sha256, bmp, long_line = orjson.dumps, hashlib.sha256, "\U00010000", MAX_LINE
    for i in range(at, len(lines)):
        entry, line = parsed[i], lines[i]
        try:
            data = line.encode()
            if (len(data) > long_line or type(entry) is not dict
                    or dumps(entry, option=_SORTED_SAFE) != data
                    or (not line.isascii() and max(line) >= bmp)
                    or not _typed_fields(entry, known)):
                return i - at
            cut = data.find(_HASH_KEY)
            if cut < 0 or data.rfind(_HASH_KEY) != cut:
                return i - at
            digest = sha256(data[:cut] + data[cut + _HASH_MEMBER:]).hexdigest()
            ts = entry["ts"]
            if (type(entry["seq"]) is not int or entry["seq"] != seq or entry["prev"] != prev
                    or digest != entry["hash"] or type(ts) is not int or ts < last_ts
                    or (now is not None and ts > now)):
                return i - at
        except (KeyError, TypeError, UnicodeEncodeError, orjson.JSONEncodeError):
            return i - at
        entry["prev"] = prev
        seq, prev, last_ts = seq + 1, entry["hash"], ts
    return len(lines) - at


def _too_long(line: str) -> bool:
    """Whether ``line`` holds more than MAX_LINE bytes of UTF-8 (a character is 1-4 bytes)."""
    return len(line) > MAX_LINE // 4 and (
        len(line) > MAX_LINE or len(line.encode("utf-8", "surrogatepass")) > MAX_LINE)


def _long_line(line_no: int) -> Anomaly:
    return Anomaly("malformed", line_no, f"line {line_no}: longer than the limit of "
                                         f"{MAX_LINE:,} bytes for a journal line")


def _invalid(verdict: Verdict, anomaly: Anomaly) -> Verdict:
    verdict.valid = False
    verdict.anomalies.append(anomaly)
    return verdict


def _check_line(line: str, line_no: int, seq: int, prev: str, last_ts: int,
                now: int | None, seen: set[tuple[str, ...]] | None = None) -> Any:
    """The entry of one line, or the Anomaly that stops verification there."""
    if _too_long(line):
        return _long_line(line_no)
    try:
        entry = parse_line(line, line_no, seen)
    except JournalError as exc:
        return Anomaly("malformed", line_no, str(exc))
    if entry["seq"] != seq:
        kind = "duplicate_seq" if entry["seq"] < seq else "seq_gap"
        return Anomaly(kind, line_no, f"line {line_no}: seq is {entry['seq']}, expected {seq} "
                                      f"(an entry was dropped, inserted or moved)")
    if entry["prev"] != prev:
        return Anomaly("broken_chain", line_no, f"line {line_no}: prev does not match the "
                                                f"hash of the entry before it")
    try:
        unsigned = _unsigned(line, entry).encode("utf-8")
    except UnicodeEncodeError:
        return Anomaly("malformed", line_no, f"line {line_no}: a string holds a lone "
                                             f"surrogate (it has no UTF-8 form)")
    if hashlib.sha256(unsigned).hexdigest() != entry["hash"]:
        return Anomaly("hash_mismatch", line_no, f"line {line_no}: content does not match its "
                                                 f"hash (the entry was edited)")
    if entry["ts"] < last_ts:
        return Anomaly("time_reversed", line_no, f"line {line_no}: ts {entry['ts']} is earlier "
                                                 f"than the entry before ({last_ts})")
    if now is not None and entry["ts"] > now:
        return Anomaly("from_the_future", line_no, f"line {line_no}: ts {entry['ts']} is later "
                                                   f"than now ({now})")
    return entry

# ---------------------------------------------------------------- a torn last line

# A crash can leave only a prefix of a canonical entry: an object whose top-level members
# are known entry fields in sorted order, spelled without spaces. The prefix is tokenised
# with these patterns; what is left must be the start of one more token.
_STRING = r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*'
_TOKEN = re.compile(_STRING + r'"|(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)'
                    r'|true|false|null|[{}\[\]:,]')
_PARTIAL_VALUE = re.compile(_STRING + r'(?:\\(?:u[0-9a-fA-F]{0,3})?)?\Z'
                            r'|-?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?(?:[eE][+-]?[0-9]*)?)?\Z'
                            r'|(?:t(?:ru?)?|f(?:a(?:ls?)?)?|n(?:ul?)?)\Z')
_CLOSER = {"{": "}", "[": "]"}


def _torn_problem(tail: str, seq: int, prev: str, last_ts: int,
                  now: int | None) -> Anomaly | None:
    """None if ``tail`` (a last line without its newline) is what a crash can leave."""
    line_no = seq + 1
    if _too_long(tail):  # no prefix of a sound line is longer than the longest line
        return _long_line(line_no)
    why = _not_a_prefix(tail)
    if why == "complete":  # a whole line that lost only its newline must be a sound entry
        checked = _check_line(tail, line_no, seq, prev, last_ts, now)
        return checked if isinstance(checked, Anomaly) else None
    if why is None:
        return None
    return Anomaly("malformed", line_no, f"line {line_no}: the last line has no newline and "
                                         f"is not the beginning of a journal entry ({why})")


def _not_a_prefix(tail: str) -> str | None:
    """Why ``tail`` is no prefix of a canonical entry; "complete" if it is a whole object."""
    if not tail.startswith("{"):
        return "it does not begin with {"
    stack: list[str] = []
    expect, last_key, pos = "value", "", 0
    while pos < len(tail):
        m = _TOKEN.match(tail, pos)
        if m is None:
            break
        tok, pos = m.group(), m.end()
        if expect == "done":
            return "text follows the end of the entry"
        if tok in "{[" and expect == "value":
            stack.append(tok)
            expect = "key" if tok == "{" else "value"
        elif tok in "}]" and stack and tok == _CLOSER[stack[-1]] and expect in ("next", "key",
                                                                                 "value"):
            stack.pop()
            expect = "next" if stack else "done"
        elif tok == "," and expect == "next":
            expect = "key" if stack[-1] == "{" else "value"
        elif tok == ":" and expect == "colon":
            expect = "value"
        elif tok[0] == '"' and expect == "key":
            key = json.loads(tok)
            if len(stack) == 1 and (key not in ENTRY_FIELDS or key <= last_key):
                return f"member {tok} is not the next entry field in order"
            last_key = key if len(stack) == 1 else last_key
            expect = "colon"
        elif expect == "value" and tok not in "{}[]:,":
            if tok[0] == '"' and json.dumps(json.loads(tok), ensure_ascii=False) != tok:
                return f"string {tok[:40]} is not canonically spelled"
            expect = "next"
        else:
            return f"{tok[:40]!r} cannot come at character {m.start() + 1}"
    rest = tail[pos:]
    if not rest:
        return "complete" if expect == "done" else None
    if expect in ("value", "key") and _PARTIAL_VALUE.match(rest):
        if expect == "key" and len(stack) == 1 and not any(
                f.startswith(rest[1:]) and f > last_key for f in ENTRY_FIELDS):
            return f"member {rest[:40]} begins no entry field that may come next"
        return None
    return f"{rest[:40]!r} cannot come at character {pos + 1}"


def read_entries(text: str) -> list[dict[str, Any]]:
    """The verified entries of a journal, or JournalError at the first bad line."""
    verdict = verify(text)
    if verdict.anomalies:
        first = verdict.anomalies[0]
        raise JournalError(first.line, first.explanation.split(": ", 1)[-1])
    return verdict.entries


def render(entries: Iterable[Mapping[str, Any]]) -> str:
    """Lines for already-sealed entries (used by tests and tools that rewrite journals)."""
    return "".join(canonical(dict(e)).decode("utf-8") + "\n" for e in entries)
