"""The journal's canonical-form check agrees with RFC 8785 itself on every spelling.

A line is canonical exactly when it equals ``rfc8785.dumps`` of what it parses to. The
kernel decides in two steps: a fast proof by string tests and one walk
(``_plainly_canonical``), which may only say "canonical" when RFC 8785 agrees, and the exact
test (``_is_canonical``) for everything it does not prove. Both are checked here on
canonical lines and on reordered, spaced, escaped and duplicated-key spellings, with keys and
strings that hold escapes, spaces, ``-0`` look-alikes and characters beyond ASCII.
"""

from __future__ import annotations

import json
from typing import Any

import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from kernel.journal import _decode, _is_canonical, _plainly_canonical

keys = st.text(alphabet="abcdeXYZ_01:\"\\ -é\U0001f600\uffff", min_size=1, max_size=4)
leaves = (st.none() | st.booleans() | st.integers(-(10**6), 10**6)
          | st.sampled_from([0, 2**53 - 1, -(2**53 - 1), 0.5, -0.25, 1e21, 1e-7])
          | st.text(alphabet="ab -:,\"\\/é\u2028\U0001f600-0", max_size=5))
values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(keys, inner, max_size=4), max_leaves=10)
objects = st.dictionaries(keys, values, min_size=1, max_size=5)


def _truth(text: str) -> bool:
    return bool(rfc8785.dumps(json.loads(text)).decode("utf-8") == text)


def _spellings(obj: dict[str, Any]) -> list[str]:
    canonical = rfc8785.dumps(obj).decode("utf-8")
    reordered = json.dumps(dict(sorted(obj.items(), reverse=True)), separators=(",", ":"),
                           ensure_ascii=False)
    spaced = json.dumps(obj, sort_keys=True, ensure_ascii=False)
    escaped = json.dumps(obj, sort_keys=True, separators=(",", ":"))
    first = next(iter(sorted(obj)))
    duplicated = canonical[:1] + json.dumps(first) + ":0," + canonical[1:]
    python_order = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return [canonical, reordered, spaced, escaped, duplicated, python_order]


@settings(max_examples=600, derandomize=True, deadline=None)
@given(objects)
def test_canonical_check_matches_rfc8785(obj: dict[str, Any]) -> None:
    for text in _spellings(obj):
        try:
            parsed = _decode(text)
        except ValueError:  # a non-canonical float spelling is refused as it is parsed
            assert not _truth(text), text
            continue
        truth = _truth(text)
        assert _is_canonical(text, parsed) == truth, text
        if _plainly_canonical(text, parsed, set()):
            assert truth, text


def test_the_fast_proof_covers_the_kernel_s_common_lines() -> None:
    line = '{"a":[1,{"b":null,"c":true}],"d":"x-1","e":9007199254740991}'
    assert _plainly_canonical(line, _decode(line), set())
    for slow in ('{"a":"x y"}', '{"a":-0}', '{"a":"\\n"}', '{"a":"é"}', '{"b":1,"a":2}',
                 '{"a":1,"a":1}', '{"a":9007199254740992}'):
        assert not _plainly_canonical(slow, _decode(slow), set()), slow
