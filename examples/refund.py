"""One refund, one crash, one receipt: the kernel gating a plain Python function end to end.

A customer paid $100; case 4471 approves one $20 refund on order 881. The payment service is
an in-process fake whose ledger lives in a JSON file, so it outlives our process like a real
service would. The first run applies the refund and then the process really dies (os._exit)
before the answer comes back. The second run restarts from the journal on disk, recovers,
and prints the receipt.

    python examples/refund.py --tier 2      # lookup finds the refund: COMMITTED, $20
    python examples/refund.py --tier 3      # nothing can tell: AMBIGUOUS, never resent
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kernel  # noqa: E402
from gate import Gate, JsonlJournal  # noqa: E402

TIERS = {1: kernel.Capabilities(dedupes=True, queryable=True, dedup_window=86_400_000,
                                 lookup_lag=100),
         2: kernel.Capabilities(dedupes=False, queryable=True, lookup_lag=100),
         3: kernel.Capabilities(dedupes=False, queryable=False)}


class FakePayments:
    """A refund API whose ledger is a JSON file; optionally dies right after applying."""

    def __init__(self, ledger: Path, capabilities: kernel.Capabilities, die: bool) -> None:
        self.ledger, self.capabilities, self.die = ledger, capabilities, die

    def _load(self) -> dict[str, Any]:
        if self.ledger.exists():
            return dict(json.loads(self.ledger.read_text()))
        return {"paid": 100, "refunds": []}

    def apply(self, key: str, payload: Any, deadline: int) -> bool:
        book = self._load()
        if not (self.capabilities.dedupes and any(r["key"] == key for r in book["refunds"])):
            book["refunds"].append({"key": key, "amount": payload["amount"]})
            self.ledger.write_text(json.dumps(book))
        if self.die:
            print("  the payment service committed the refund; the process dies before the ack")
            os._exit(1)
        return True

    def lookup(self, effect_id: str) -> bool:
        return any(r["key"] == effect_id for r in self._load()["refunds"])

    def facts(self, effect_id: str) -> dict[str, Any]:
        refunds = self._load()["refunds"]
        if self.capabilities.queryable:  # it can tell our own refund apart
            refunds = [r for r in refunds if r["key"] != effect_id]
        return {"paid": 100, "refunded": sum(r["amount"] for r in refunds)}


def proposal(tier: int) -> kernel.Proposal:
    return kernel.Proposal(payload={"order": 881, "amount": 20},
                           premises={"paid": 100, "refunded": 0}, lease="refund-bot",
                           capabilities=TIERS[tier], key={"order": 881, "case": 4471},
                           timing=kernel.Timing(send_timeout=200, settle_margin=150,
                                                dedup_margin=1_000))


def gate(folder: Path, tier: int, die: bool) -> Gate:
    target = FakePayments(folder / "ledger.json", TIERS[tier], die)
    return Gate(JsonlJournal(folder / "journal.jsonl"), target,
                lease_of=lambda lease_id: kernel.Lease(lease_id, expires_at=2**52))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tier", type=int, choices=(1, 2, 3), default=2)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        gate(Path(args.child), args.tier, die=True).submit(proposal(args.tier))
        return 0
    folder = Path(tempfile.mkdtemp(prefix="refund-"))
    print(f"tier {args.tier}: customer paid $100; case 4471 approves a $20 refund")
    subprocess.run([sys.executable, __file__, "--tier", str(args.tier), "--child", str(folder)],
                   check=False)
    print("  restart: the journal says DISPATCHED with no final entry; recovering")
    restarted = gate(folder, args.tier, die=False)
    receipt = restarted.recover()[0]
    refunds = json.loads((folder / "ledger.json").read_text())["refunds"]
    print(f"  refunded on order 881: ${sum(r['amount'] for r in refunds)} "
          f"({len(refunds)} refund record(s))")
    for name, value in receipt.as_json().items():
        if name != "authorized":
            print(f"  {name:<10} {value}")
    print(f"  journal: {folder / 'journal.jsonl'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
