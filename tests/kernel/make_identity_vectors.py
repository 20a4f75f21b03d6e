"""Writes kernel/identity_vectors.json: cross-language test vectors for effect identity.

Each vector gives an input (the decision key or payload), its RFC 8785 canonical JSON, and
the effect id (hex SHA-256 of those bytes). Inputs that have no canonical form carry an
``error`` instead. Canonical forms come from the ``rfc8785`` library directly, not from the
kernel's fast path, so the test that compares them checks one against the other.

    python tests/kernel/make_identity_vectors.py        # rewrite the file
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import rfc8785

OUT = Path(__file__).resolve().parents[2] / "kernel" / "identity_vectors.json"

INPUTS = [
    ("decision key", {"order": 881, "case": 4471}),
    ("same key, other member order", {"case": 4471, "order": 881}),
    ("payload without key", {"order": 881, "amount": 20}),
    ("nested objects and arrays", {"b": [1, {"z": None, "a": True}], "a": {"y": [], "x": {}}}),
    ("unicode text", {"name": "Zoë Ångström", "city": "Kraków", "note": "日本語"}),
    ("escapes and controls", {"s": "quote\" backslash\\ tab\t newline\n bell\u0007 del\u007f"}),
    ("line separators are not escaped", {"s": "a\u2028b\u2029c"}),
    ("keys sort by UTF-16 code units", {"\u20ac": 1, "\U0001f600": 2, "\ufb33": 3, "a": 4}),
    ("emoji value", {"reaction": "\U0001f44d"}),
    ("largest safe integers", {"max": 9007199254740991, "min": -9007199254740991}),
    ("floats in canonical spelling", {"a": 1.5, "b": 0.1, "c": 1e21, "d": 1e-7, "e": -0.0,
                                      "f": 100.0, "g": 123456789.125}),
    ("top-level array", [3, "two", 1.0, None, False]),
    ("top-level string", "refund 881"),
    ("top-level integer", 20),
    ("empty object", {}),
]
ERRORS = [
    ("integer beyond 2^53", {"big": 9007199254740993}),
    ("NaN", {"x": float("nan")}),
    ("infinity", {"x": float("inf")}),
]


def vectors() -> list[dict]:
    out = []
    for name, value in INPUTS:
        text = rfc8785.dumps(value)
        out.append({"name": name, "input": value, "canonical": text.decode("utf-8"),
                    "effect_id": hashlib.sha256(text).hexdigest()})
    for name, value in ERRORS:
        out.append({"name": name, "input_python": repr(value), "error": True})
    return out


def render() -> str:
    return json.dumps({"description": "Effect identity vectors: effect_id = hex SHA-256 of the "
                       "RFC 8785 canonical JSON of the decision key (or the payload).",
                       "vectors": vectors()}, indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    OUT.write_text(render(), encoding="utf-8")
    print(f"wrote {OUT}", file=sys.stderr)
