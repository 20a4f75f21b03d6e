"""The journal's canonical-form check agrees with RFC 8785 itself on every spelling.

A line is canonical exactly when it equals ``rfc8785.dumps`` of what it parses to; the
kernel's check (the standard json encoder, falling back to rfc8785) must say the same for
canonical lines and for reordered, spaced, escaped and duplicated-key spellings.
"""

from __future__ import annotations

import json

import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from kernel.journal import _decode, _is_canonical

keys = st.text(alphabet="abcdeXYZ_01:", min_size=1, max_size=4)
leaves = (st.none() | st.booleans() | st.integers(-(10**6), 10**6)
          | st.text(alphabet="ab -:,\"\\/é\u2028", max_size=5))
values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(keys, inner, max_size=4), max_leaves=10)
objects = st.dictionaries(keys, values, min_size=1, max_size=5)


def _truth(text: str) -> bool:
    return rfc8785.dumps(json.loads(text)).decode("utf-8") == text


def _spellings(obj: dict) -> list[str]:
    canonical = rfc8785.dumps(obj).decode("utf-8")
    reordered = json.dumps(dict(sorted(obj.items(), reverse=True)), separators=(",", ":"),
                           ensure_ascii=False)
    spaced = json.dumps(obj, sort_keys=True, ensure_ascii=False)
    escaped = json.dumps(obj, sort_keys=True, separators=(",", ":"))
    first = next(iter(sorted(obj)))
    duplicated = canonical[:1] + json.dumps(first) + ":0," + canonical[1:]
    return [canonical, reordered, spaced, escaped, duplicated]


@settings(max_examples=400, derandomize=True)
@given(objects)
def test_canonical_check_matches_rfc8785(obj):
    for text in _spellings(obj):
        assert _is_canonical(text, _decode(text)) == _truth(text), text
