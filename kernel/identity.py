"""Effect identity: the dedup key *is* the decision record.

An approved decision is named by the SHA-256 of the RFC 8785 canonical JSON of its
decision key (for example ``{"case": 4471, "order": 881}``), or of its payload when no key
is given. The payload's own digest is recorded beside the id, so a later proposal with the
same id and another payload is caught by comparing two hex strings.

One rule for values, applied at the proposal, in the journal writer and in its reader, so
whatever the kernel accepts it can read back: a value is JSON whose numbers are IEEE-754
doubles (RFC 8785). A Python int must be a safe integer, +-(2^53-1); a float may be any
finite double, and one whose canonical spelling is digits only (1e16 is written
``10000000000000000``) is read back as that double. Strings are Unicode text: a lone
surrogate has no UTF-8 form and is refused. A recorded value (payload, key, a premise, a
fact) nests at most ``MAX_DEPTH`` containers deep; a journal line, which embeds a fact three
levels down (entry, checks, facts), at most ``LINE_DEPTH``.

Canonical JSON comes from the standard json encoder when it provably spells a value as RFC
8785 does (no floats, safe integers, keys in the Basic Multilingual Plane), else from the
``rfc8785`` library (pure Python). A digest of the most common decision record, a flat
dict of ASCII names and ASCII strings, safe integers, booleans and None, takes orjson's
sorted spelling: the same bytes as rfc8785's on such records (a Hypothesis property in
tests/kernel/test_identity.py), in a fraction of the time.
"""

from __future__ import annotations

import hashlib
import json
import json.encoder
from typing import Any

import orjson
import rfc8785

from kernel.errors import KernelError

JSON = Any  # a JSON value: None, bool, int, float, str, list, dict[str, JSON]


_MAX_SAFE = 2**53 - 1
MAX_DEPTH = 32
LINE_DEPTH = MAX_DEPTH + 3
# The C encoder without JSONEncoder's wrapper (a fresh encoder and cycle markers per call):
# canonical() hands it only values _plain has walked (no floats, no cycles, nothing it
# cannot spell), so it needs neither; it returns the text in pieces.
_encode_pieces = json.encoder.c_make_encoder(  # type: ignore[attr-defined]
    None, None, json.encoder.encode_basestring, None, ":", ",", True, False, False)


def _fast_encode(value: JSON) -> str:
    return "".join(_encode_pieces(value, 0))


class _TooDeep(Exception):
    pass


def _plain(value: JSON, room: int) -> bool:
    """True when Python's json spells ``value`` exactly as RFC 8785 does: no floats, safe
    integers, and keys inside the Basic Multilingual Plane (so both sort orders agree).
    Walks the whole value (never stopping early) and raises _TooDeep past ``room`` levels."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(-_MAX_SAFE <= value <= _MAX_SAFE)
    if kind is not dict and kind is not list:
        return False
    if room <= 0:
        raise _TooDeep
    plain = True
    if kind is dict:
        for k, v in value.items():
            if not _plain(v, room - 1) or type(k) is not str \
                    or not (k.isascii() or max(k) < "\U00010000"):
                plain = False
        return plain
    for v in value:
        if not _plain(v, room - 1):
            plain = False
    return plain


def canonical(value: JSON, depth: int = LINE_DEPTH) -> bytes:
    """The RFC 8785 canonical JSON bytes of ``value``; raises KernelError if it has none or
    nests deeper than ``depth`` containers."""
    try:
        text = _fast_encode(value) if _plain(value, depth) else None
        if text is not None:
            return text.encode("utf-8")
        return rfc8785.dumps(value)
    except _TooDeep:
        raise KernelError(f"value nests deeper than {depth} levels") from None
    except UnicodeEncodeError:
        raise KernelError("a string holds a lone surrogate (it has no UTF-8 form)") from None
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        raise KernelError(f"value has no canonical JSON form (RFC 8785): {exc}") from None


def _flat_ascii(value: JSON) -> bool:
    """A dict of ASCII names to ASCII strings, safe integers, booleans and None: the most
    common decision record, which Python's json spells canonically and nothing refuses."""
    if type(value) is not dict:
        return False
    for k, v in value.items():
        kind = type(v)
        if type(k) is not str or not k.isascii():
            return False
        if kind is str:
            if not v.isascii():
                return False
        elif kind is int:
            if not -_MAX_SAFE <= v <= _MAX_SAFE:
                return False
        elif kind is not bool and v is not None:
            return False
    return True


def recordable(premises: JSON, *names: str) -> None:
    """Raise KernelError unless a proposal's premises and names can be journaled and read
    back under the one rule for values (each premise at most MAX_DEPTH deep)."""
    if any(type(n) is not str for n in names):
        raise KernelError("a proposal's lease and target must be strings")
    if _flat_ascii(premises) and all(n.isascii() for n in names):
        return
    canonical({"premises": premises, "names": list(names)}, MAX_DEPTH + 2)


def digest(value: JSON) -> str:
    """Hex SHA-256 of the canonical JSON of ``value``."""
    if _flat_ascii(value):
        return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()
    return hashlib.sha256(canonical(value, MAX_DEPTH)).hexdigest()


def effect_id(payload: JSON, key: JSON = None) -> str:
    """The effect id of a decision: digest of its key, or of its payload if there is no key."""
    return digest(payload if key is None else key)


def payload_digest(payload: JSON) -> str:
    return digest(payload)
