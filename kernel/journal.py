"""The journal: entry format, hash chain, verification and replay. Pure: text in, values out.

Format. One JSON object per line, in RFC 8785 canonical form (sorted keys, no spaces; numbers
are integers, or floats in their canonical spelling), ending in a newline. Every entry has
``seq`` (0, 1, 2, ...), ``ts`` (an integer time), ``kind``, ``effect_id``, kind-specific
fields, ``prev`` (the previous entry's hash, 64 zeros for the first) and ``hash``: the hex
SHA-256 of the line with its ``"hash":...`` member removed. So the hash covers the canonical
entry and, through ``prev``, every entry before it. The schema is ``journal.schema.json``.

Verification checks, line by line: JSON syntax, canonical spelling, known kind, required
fields and types, seq continuity, the chain link, the hash itself, and time order. It stops
at the first bad line and names it, like a Jepsen checker: ``valid`` is True or False, plus
anomalies with the line number as witness. A last line without its newline is a torn write
from a crash: it was never acknowledged as durable, so it is discarded and reported as a
note, never parsed as an entry. A hash chain cannot see entries cut from the end; pass the
last known hash as ``expected_head`` to catch that.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kernel.errors import JournalError, KernelError
from kernel.identity import canonical

GENESIS = "0" * 64
HEX64 = re.compile(r"[0-9a-f]{64}\Z")
MAX_SAFE_INT = 2**53 - 1
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
CAPABILITY_FIELDS = {"dedupes": _bool, "queryable": _bool, "dedup_window": _nat,
                     "lookup_lag": _nat}
TIMING_FIELDS = {"send_timeout": _pos, "settle_margin": _pos, "dedup_margin": _nat}


# ---------------------------------------------------------------- writing


def seal(body: Mapping[str, Any], seq: int, prev: str) -> tuple[dict[str, Any], str]:
    """Chain an entry body: add seq and prev, compute the hash. Returns (entry, line)."""
    entry = dict(body)
    entry["seq"] = seq
    entry["prev"] = prev
    entry.pop("hash", None)
    unsigned = canonical(entry)
    entry["hash"] = hashlib.sha256(unsigned).hexdigest()
    return entry, canonical(entry).decode("utf-8") + "\n"


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


class _BigInteger(ValueError):
    """An integer outside +-(2^53-1): json reads it, and spells it back, without complaint."""


def _checked_int(text: str) -> int:
    value = int(text)
    if len(text) > 15 and abs(value) > MAX_SAFE_INT:
        raise _BigInteger(text)
    return value


_decode = json.JSONDecoder(parse_float=_checked_float, parse_int=_checked_int,
                           parse_constant=_reject_constant).decode
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True,
                           allow_nan=False).encode


def _big_ints(value: Any) -> bool:
    if type(value) is int:
        return abs(value) > MAX_SAFE_INT
    if isinstance(value, dict):
        return any(_big_ints(v) for v in value.values())
    if isinstance(value, list):
        return any(_big_ints(v) for v in value)
    return False


def _is_canonical(text: str, entry: dict[str, Any]) -> bool:
    if _encode(entry) == text:
        return True
    try:  # floats and non-BMP keys are spelled differently by json; ask RFC 8785 itself
        return canonical(entry).decode("utf-8") == text
    except KernelError:
        return False


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
        _check_nested(entry, "capabilities", CAPABILITY_FIELDS, line_no)
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
                  line_no: int) -> None:
    inner = entry[name]
    for key, ok in fields.items():
        if key not in inner or not ok(inner[key]):
            raise JournalError(line_no, f"{name}.{key} is missing or has the wrong type")
    for key in inner.keys() - fields.keys():
        raise JournalError(line_no, f"{name} has unknown field '{key}'")


def parse_line(text: str, line_no: int) -> dict[str, Any]:
    """One journal line (without its newline) to an entry, or JournalError saying why not."""
    if text.endswith("\r"):
        raise JournalError(line_no, "line ends with a carriage return: journal lines end with "
                                    "a bare newline (LF), not CRLF")
    try:
        entry = _decode(text)
    except _BigInteger:
        raise JournalError(line_no, "integer outside the safe range +-(2^53-1)") from None
    except ValueError as exc:
        raise JournalError(line_no, f"not valid JSON ({exc})") from None
    if not isinstance(entry, dict):
        raise JournalError(line_no, "an entry must be a JSON object")
    if not _is_canonical(text, entry):
        raise JournalError(line_no, "not in RFC 8785 canonical form (key order, spacing, "
                                    "escapes or number spelling)")
    _check_fields(entry, line_no)
    return entry


def entry_hash(text: str) -> str:
    """The hash a canonical line should carry: SHA-256 of the line minus its hash member."""
    start = text.find('"hash":"')
    end = start + 8 + 64 + 1
    if text[end:end + 1] == ",":
        unsigned = text[:start] + text[end + 1:]
    else:  # the last member: drop the comma before it instead
        unsigned = text[:start - 1] + text[end:]
    return hashlib.sha256(unsigned.encode("utf-8", "surrogatepass")).hexdigest()


def verify(text: str, now: int | None = None, expected_head: str | None = None) -> Verdict:
    """Verify a whole journal given as text. Stops at the first bad line."""
    verdict = Verdict(valid=True)
    lines = text.split("\n")
    if lines[-1] != "":
        verdict.notes.append(f"line {len(lines)} is a torn write (no newline): discarded")
    lines.pop()
    prev, last_ts = GENESIS, 0
    for i, line in enumerate(lines):
        line_no = i + 1
        problem = _check_line(line, line_no, i, prev, last_ts, now)
        if isinstance(problem, Anomaly):
            verdict.valid = False
            verdict.anomalies.append(problem)
            return verdict
        verdict.entries.append(problem)
        prev, last_ts = problem["hash"], problem["ts"]
    if expected_head is not None and prev != expected_head:
        verdict.valid = False
        verdict.anomalies.append(Anomaly("truncated", len(lines),
                                         "the journal ends before the expected last entry"))
    return verdict


def _check_line(line: str, line_no: int, seq: int, prev: str, last_ts: int,
                now: int | None) -> dict[str, Any] | Anomaly:
    try:
        entry = parse_line(line, line_no)
    except JournalError as exc:
        return Anomaly("malformed", line_no, str(exc))
    if entry["seq"] != seq:
        kind = "duplicate_seq" if entry["seq"] < seq else "seq_gap"
        return Anomaly(kind, line_no, f"line {line_no}: seq is {entry['seq']}, expected {seq} "
                                      f"(an entry was dropped, inserted or moved)")
    if entry["prev"] != prev:
        return Anomaly("broken_chain", line_no, f"line {line_no}: prev does not match the "
                                                f"hash of the entry before it")
    if entry_hash(line) != entry["hash"]:
        return Anomaly("hash_mismatch", line_no, f"line {line_no}: content does not match its "
                                                 f"hash (the entry was edited)")
    if entry["ts"] < last_ts:
        return Anomaly("time_reversed", line_no, f"line {line_no}: ts {entry['ts']} is earlier "
                                                 f"than the entry before ({last_ts})")
    if now is not None and entry["ts"] > now:
        return Anomaly("from_the_future", line_no, f"line {line_no}: ts {entry['ts']} is later "
                                                   f"than now ({now})")
    return entry


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
