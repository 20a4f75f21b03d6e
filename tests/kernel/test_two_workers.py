"""``spawn=Forked``: the oracle lends the re-execution to a forked helper and must give
exactly the one-process verdict, whatever the journal and whatever the helper does.

The size floor (oracle.FORK_ENTRIES) is lowered to 0 here so that small journals take the
two-process path too: every mutant of the mutation corpus, every hand-made journal, and
large journals with flaws planted in either share. A helper that dies, or answers only in
part, leaves the work to the parent; a system without fork computes in the parent.
Reproduce one: ``pytest tests/kernel/test_two_workers.py -k NAME``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

from kernel import forked, mutations, oracle
from kernel.forked import Forked
from kernel.journal import Chain, render
from sim import corpus
from tests.kernel import test_fast_verify as fast
from tests.kernel import test_handmade as handmade
from tests.kernel.test_handmade import MANIFEST


@pytest.fixture(autouse=True)
def always_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(oracle, "FORK_ENTRIES", 0)


def _both(text: str, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    one, two = oracle.check(text, **kwargs), oracle.check(text, spawn=Forked, **kwargs)
    return one.as_json(), two.as_json()


def _corpus() -> Iterator[tuple[str, list[dict[str, Any]], Any]]:
    for src in corpus.sources():
        yield src.name, list(src.entries), src.history
        for m in mutations.mutants(src.entries, src.history):
            yield f"{src.name}: {m.operator} at {m.site}", list(m.entries), m.history


def test_the_oracle_judges_every_corpus_journal_alike() -> None:
    judged = 0
    for name, entries, history in _corpus():
        text = render(entries)
        one, two = _both(text, history=history, complete=True)
        assert two == one, name
        judged += 1
    assert judged > 1_500


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_the_command_line_judges_every_handmade_journal_alike(name: str) -> None:
    argv = handmade._argv(MANIFEST[name], as_json=True)
    one = handmade._run([*argv, "--workers", "1"])
    assert handmade._run([*argv, "--workers", "2"]) == one


# ---------------------------------------------------------------- large journals, planted flaws

def _large(effects: int = 3_000) -> list[str]:
    """A journal of many effects, each proposed, authorized, dispatched, committed."""
    import kernel
    chain, lines = Chain(), []
    lease = kernel.Lease("L", expires_at=2**40)
    for i in range(effects):
        p = kernel.Proposal(payload={"order": i}, premises={"paid": 1}, lease="L",
                            capabilities=fast.TIER, timing=fast.TIMING, key={"order": i})
        effect = None
        for event in (kernel.Propose(10 * i, p), kernel.Authorize(10 * i + 1, lease, {"paid": 1}),
                      kernel.Dispatch(10 * i + 2, lease, {"paid": 1}),
                      kernel.Ack(10 * i + 3, 1)):
            result = kernel.step(effect, event)
            effect = result.effect
            lines += [chain.seal(c.entry)[1] for c in result.commands
                      if isinstance(c, kernel.Append)]
    return lines


LARGE = _large()


def _forged(lines: list[str], at: int, **change: Any) -> list[str]:
    """``lines`` with entry ``at`` changed and re-sealed, and every later one re-chained:
    a journal whose chain verifies, so only re-execution can catch the change."""
    chain = Chain()
    out = []
    for i, line in enumerate(lines):
        body = {k: v for k, v in json.loads(line).items() if k not in ("seq", "prev", "hash")}
        if i == at:
            body.update(change)
        out.append(chain.seal(body)[1])
    return out


def _share_of(line: str) -> str:
    return "helper" if json.loads(line)["effect_id"][0] in oracle.CHILD_DIGITS else "parent"


def _first_dispatch_in(share: str, after: int = 0) -> int:
    return next(i for i, line in enumerate(LARGE) if i > after and '"DISPATCHED"' in line
                and _share_of(line) == share)


@pytest.mark.parametrize("order", [("helper", "parent"), ("parent", "helper")])
def test_the_earlier_of_two_divergences_is_reported_whichever_share_holds_it(
        order: tuple[str, str]) -> None:
    first = _first_dispatch_in(order[0], after=len(LARGE) // 3)
    second = _first_dispatch_in(order[1], after=first)
    lines = _forged(_forged(LARGE, first, attempt=2), second, attempt=3)
    one, two = _both("".join(lines))
    assert one["valid"] is False and two == one
    assert one["anomalies"][0]["witnesses"] == [f"line {first + 1}"]


def test_an_open_effect_is_named_alike() -> None:
    lines = LARGE[:-1]  # the last effect's COMMITTED is cut: it stays DISPATCHED
    one, two = _both("".join(lines))
    assert one["valid"] == "unknown" and two == one


# ---------------------------------------------------------------- a helper that fails

def _dies_in_the_child(real: Any) -> Any:
    parent = os.getpid()

    def fn(*args: Any) -> Any:
        if os.getpid() != parent:
            os._exit(9)
        return real(*args)
    return fn


def test_a_helper_that_dies_leaves_the_work_to_the_parent(
        monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _forged(LARGE, _first_dispatch_in("helper", after=100), attempt=2)
    expected = oracle.check("".join(lines)).as_json()
    monkeypatch.setattr(oracle, "_share", _dies_in_the_child(oracle._share))
    assert oracle.check("".join(lines), spawn=Forked).as_json() == expected


def test_a_partial_answer_is_not_believed(monkeypatch: pytest.MonkeyPatch) -> None:
    real = forked.pickle.dumps
    monkeypatch.setattr(forked.pickle, "dumps", lambda value, **kw: real(value, **kw)[:-3])
    forged = "".join(_forged(LARGE, _first_dispatch_in("helper", after=100), attempt=2))
    assert oracle.check(forged, spawn=Forked).as_json() == oracle.check(forged).as_json()


def test_without_fork_the_parent_computes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "fork")
    helper = forked.Forked(sum, [1, 2, 3])
    assert helper.pid is None and helper.result() == 6


def test_a_parent_that_stops_early_reaps_its_helper() -> None:
    with pytest.raises(RuntimeError), forked.Forked(sum, [1, 2]) as helper:
        pid = helper.pid
        raise RuntimeError("the parent stops")
    assert helper.pid is None and pid is not None
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def test_the_command_line_refuses_other_worker_counts() -> None:
    argv = handmade._argv(MANIFEST[sorted(MANIFEST)[0]], as_json=False)
    code, out, err = handmade._run([*argv, "--workers", "3"])
    assert code == 254 and "--workers" in err and out == ""
