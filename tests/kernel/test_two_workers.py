"""``spawn=Forked``: verify and the oracle lend their work to a forked helper and must give
exactly the one-process verdict (and entries), whatever the journal and whatever the helper
does.

The size floors (journal.FORK_MIN, oracle.FORK_ENTRIES) are lowered to 0 here so that
small journals take the two-process path too: every mutant of the fast path's table
(tests/kernel/test_fast_verify.py), every mutant of the mutation corpus, every hand-made
journal, and large journals with flaws planted in either share. A helper that dies, or
answers only in part, leaves the work to the parent; a system without fork computes in the
parent. Reproduce one: ``pytest tests/kernel/test_two_workers.py -k NAME``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

from kernel import forked, journal, mutations, oracle
from kernel.forked import Forked
from kernel.journal import Chain, render, verify
from sim import corpus
from tests.kernel import test_fast_verify as fast
from tests.kernel import test_handmade as handmade
from tests.kernel.test_handmade import MANIFEST


@pytest.fixture(autouse=True)
def always_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(journal, "FORK_MIN", 0)
    monkeypatch.setattr(oracle, "FORK_ENTRIES", 0)


def _both(text: str, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    one, two = oracle.check(text, **kwargs), oracle.check(text, spawn=Forked, **kwargs)
    return one.as_json(), two.as_json()


@pytest.mark.parametrize(("name", "where"), [
    (name, where) for name in sorted(fast.MUTANTS) for where in sorted(fast.WHERE)
    if not (name in fast.PROPOSED_ONLY and fast.WHERE[where] % 4)])
def test_verify_judges_every_fast_path_mutant_alike(name: str, where: str) -> None:
    text = "".join(fast._mutated(name, fast.WHERE[where]))
    one, two = verify(text), verify(text, spawn=Forked)
    assert two.valid is False and two.as_json() == one.as_json()
    assert two.entries == one.entries


def test_verify_gives_the_same_entries_on_sound_journals_and_torn_tails() -> None:
    text = "".join(fast.LINES)
    for variant in (text, text[:-40], text[:-40] + "x", text + '{"seq":'):
        one, two = verify(variant), verify(variant, spawn=Forked)
        assert two.as_json() == one.as_json() and two.entries == one.entries
    last = json.loads(fast.LINES[-1])
    for kwargs in ({"now": last["ts"] - 1}, {"expected_head": "0" * 64},
                   {"expected_head": last["hash"]}):
        assert verify(text, spawn=Forked, **kwargs).as_json() == verify(text, **kwargs).as_json()


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


def test_a_flaw_in_the_helpers_half_of_verify_is_found() -> None:
    lines = list(LARGE)
    at = len(lines) - 5
    lines[at] = lines[at].replace('"ts":', '"ts":1', 1)  # an edit: the hash no longer matches
    one, two = verify("".join(lines)), verify("".join(lines), spawn=Forked)
    assert two.valid is False and two.as_json() == one.as_json()
    assert two.anomalies[0].type == "hash_mismatch" and two.anomalies[0].line == at + 1


def _seam(text: str) -> int:
    """The index of the first line the helper judges (as verify cuts the text)."""
    end = text.rfind("\n") + 1
    return text.count("\n", 0, text.find("\n", int(end * journal.FIRST_SHARE)) + 1)


SEAM_FLAWS = {
    "edited": lambda line: line.replace('"ts":', '"ts":1', 1),
    "not json": lambda line: line[:40],
    "empty": lambda line: "",
    "another kind": lambda line: line.replace('"kind":"', '"kind":"X', 1),
}


@pytest.mark.parametrize("offset", [-2, -1, 0, 1])
@pytest.mark.parametrize("flaw", sorted(SEAM_FLAWS))
def test_a_flaw_at_the_seam_between_the_two_parts_is_found(offset: int, flaw: str) -> None:
    lines = list(LARGE)
    at = _seam("".join(lines)) + offset
    lines[at] = SEAM_FLAWS[flaw](lines[at].rstrip("\n")) + "\n"
    one, two = verify("".join(lines)), verify("".join(lines), spawn=Forked)
    assert two.valid is False and two.as_json() == one.as_json(), (flaw, offset)
    assert two.entries == one.entries


@pytest.mark.parametrize("offset", [-1, 0])
def test_a_sound_change_resealed_at_the_seam_is_judged_alike(offset: int) -> None:
    """A line re-sealed with a changed body (its hash fits it): the next line's prev
    breaks, wherever the seam falls."""
    lines = list(LARGE)
    at = _seam("".join(lines)) + offset
    body = {k: v for k, v in json.loads(lines[at]).items() if k not in ("hash",)}
    body["ts"] += 1
    lines[at] = fast._with_hash(json.dumps({**body, "hash": "0" * 64}, sort_keys=True,
                                           separators=(",", ":")) + "\n")
    one, two = verify("".join(lines)), verify("".join(lines), spawn=Forked)
    assert one.valid is False and two.as_json() == one.as_json()


def test_on_a_sound_journal_the_parent_judges_only_its_part(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The helper's part is taken, not judged again (the verdict alone cannot tell)."""
    judged: list[tuple[int, int]] = []
    real = journal._lines

    def recorded(text: str, begin: int, end: int, *args: Any) -> Any:
        judged.append((begin, end))  # in this process only: the helper's are its own
        return real(text, begin, end, *args)
    monkeypatch.setattr(journal, "_lines", recorded)
    text = "".join(LARGE)
    assert verify(text, spawn=Forked).valid is True
    assert len(judged) == 1 and judged[0][0] == 0
    assert text.count("\n", 0, judged[0][1]) == _seam(text) < len(LARGE) * 0.6


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
    monkeypatch.setattr(journal, "_second_part", _dies_in_the_child(journal._second_part))
    monkeypatch.setattr(oracle, "_share", _dies_in_the_child(oracle._share))
    assert oracle.check("".join(lines), spawn=Forked).as_json() == expected


def test_a_partial_answer_is_not_believed(monkeypatch: pytest.MonkeyPatch) -> None:
    real = forked.pickle.dumps
    monkeypatch.setattr(forked.pickle, "dumps", lambda value, **kw: real(value, **kw)[:-3])
    lines = list(LARGE)
    lines[7] = lines[7].replace('"ts":', '"ts":1', 1)
    assert verify("".join(lines), spawn=Forked).as_json() == verify("".join(lines)).as_json()
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
