"""Effect identity: golden vectors, the fast canonical path against RFC 8785 itself."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

import kernel
from kernel.identity import canonical

ROOT = Path(__file__).resolve().parents[2]
VECTORS = json.loads((ROOT / "kernel" / "identity_vectors.json").read_text(encoding="utf-8"))


def _generator():
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_vectors",
                                                  ROOT / "tests/kernel/make_identity_vectors.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("vector", [v for v in VECTORS["vectors"] if "error" not in v],
                         ids=lambda v: v["name"])
def test_golden_vector(vector):
    assert canonical(vector["input"]).decode("utf-8") == vector["canonical"]
    assert kernel.effect_id(payload=None, key=vector["input"]) == vector["effect_id"]


def test_vectors_file_is_what_the_generator_writes():
    assert (ROOT / "kernel" / "identity_vectors.json").read_text(encoding="utf-8") == \
        _generator().render()


@pytest.mark.parametrize("value", [{"big": 2**53 + 1}, {"x": float("nan")}, float("inf")])
def test_values_without_canonical_form_are_refused(value):
    with pytest.raises(kernel.KernelError, match="canonical"):
        canonical(value)


def test_key_wins_over_payload_and_member_order_does_not_matter():
    key = {"order": 881, "case": 4471}
    a = kernel.effect_id({"order": 881, "amount": 20}, key)
    b = kernel.effect_id({"order": 881, "amount": 30}, {"case": 4471, "order": 881})
    assert a == b
    assert kernel.payload_digest({"amount": 20}) != kernel.payload_digest({"amount": 30})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                  max_size=4),
    max_leaves=12)


@settings(max_examples=300, derandomize=True)
@given(json_values)
def test_fast_path_agrees_with_rfc8785(value):
    assert canonical(value) == rfc8785.dumps(value)


ascii_text = st.text(st.characters(max_codepoint=127), max_size=8)
flat_ascii_records = st.dictionaries(
    ascii_text, st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | ascii_text,
    max_size=8)


@settings(max_examples=500, derandomize=True)
@given(flat_ascii_records)
def test_a_flat_ascii_record_is_digested_over_its_rfc8785_bytes(record):
    """digest() spells a flat ASCII record with orjson: those bytes must be RFC 8785's (keys
    in code point order, control characters escaped alike, integers at the safe bounds)."""
    from kernel.identity import _flat_ascii

    assert _flat_ascii(record)
    assert kernel.identity.digest(record) == hashlib.sha256(rfc8785.dumps(record)).hexdigest()


def test_the_digest_of_a_flat_record_does_not_depend_on_member_order():
    record = {"b": "\x00\x1f\"\\\x7f", "a": -(2**53) + 1, "C": None, "": True}
    assert kernel.identity.digest(record) == kernel.identity.digest(dict(reversed(record.items())))
    assert kernel.identity.digest(record) == hashlib.sha256(rfc8785.dumps(record)).hexdigest()
