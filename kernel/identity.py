"""Effect identity: the dedup key *is* the decision record.

An approved decision is named by the SHA-256 of the RFC 8785 canonical JSON of its
decision key (for example ``{"case": 4471, "order": 881}``), or of its payload when no key
is given. The payload's own digest is recorded beside the id, so a later proposal with the
same id and another payload is caught by comparing two hex strings.

Canonical JSON comes from the ``rfc8785`` library (pure Python). It rejects what RFC 8785
cannot represent: NaN, infinities and integers outside the IEEE-754 safe range.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import rfc8785

from kernel.errors import KernelError

JSON = Any  # a JSON value: None, bool, int, float, str, list, dict[str, JSON]


_MAX_SAFE = 2**53 - 1
_fast_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True,
                                allow_nan=False).encode


def _plain(value: JSON) -> bool:
    """True when Python's json spells ``value`` exactly as RFC 8785 does: no floats, safe
    integers, and keys inside the Basic Multilingual Plane (so both sort orders agree)."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(-_MAX_SAFE <= value <= _MAX_SAFE)
    if kind is dict:
        return all(type(k) is str and (k.isascii() or max(k) < "\U00010000") and _plain(v)
                   for k, v in value.items())
    if kind is list:
        return all(_plain(v) for v in value)
    return False


def canonical(value: JSON) -> bytes:
    """The RFC 8785 canonical JSON bytes of ``value``; raises KernelError if it has none."""
    if _plain(value):
        return _fast_encode(value).encode("utf-8")
    try:
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        raise KernelError(f"value has no canonical JSON form (RFC 8785): {exc}") from None


def digest(value: JSON) -> str:
    """Hex SHA-256 of the canonical JSON of ``value``."""
    return hashlib.sha256(canonical(value)).hexdigest()


def effect_id(payload: JSON, key: JSON = None) -> str:
    """The effect id of a decision: digest of its key, or of its payload if there is no key."""
    return digest(payload if key is None else key)


def payload_digest(payload: JSON) -> str:
    return digest(payload)
