"""The sweep's speed-ups change no answer: memoised proposal names equal fresh ones.

``kernel.model`` names a proposal of flat values once and remembers it by member and type;
these tests watch it answer as ``kernel.identity`` does (true is not 1, key None is not {}),
and still refuse what it refused, after the memo holds a look-alike.
"""

from __future__ import annotations

import pytest

from kernel import Capabilities, KernelError, Proposal
from kernel.identity import effect_id, payload_digest

CAPS = Capabilities(dedupes=False, queryable=False)


def proposal(payload: dict, key: dict | None = None, premises: dict | None = None) -> Proposal:
    return Proposal(payload=payload, premises=premises or {"paid": 100}, lease="l",
                    capabilities=CAPS, key=key)


@pytest.mark.parametrize("payload,key", [
    ({"a": 1}, None), ({"a": True}, None), ({"a": "1"}, None), ({"a": None}, None),
    ({"a": 1}, {}), ({"a": 1}, {"k": 1}), ({"a": 1}, {"k": True}), ({"b": 1, "a": 2}, None),
])
def test_memoised_names_equal_fresh_ones(payload: dict, key: dict | None) -> None:
    for _ in range(2):  # the second proposal is answered by the memo
        p = proposal(payload, key)
        assert p.effect_id == effect_id(payload, key)
        assert p.payload_digest == payload_digest(payload)


@pytest.mark.parametrize("premises", [{"paid": 2**53}, {"paid": "\ud800"}])
def test_refusals_survive_the_memo(premises: dict) -> None:
    proposal({"a": 1}, premises={"paid": 1})  # a look-alike that is accepted and memoised
    with pytest.raises(KernelError):
        proposal({"a": 1}, premises=premises)
