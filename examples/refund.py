"""One refund, one crash, one receipt: ``gate.effect`` around a plain Python function.

A customer paid $100; case 4471 approves one $20 refund on order 881. The payment service is
an in-process fake whose ledger lives in a JSON file, so it outlives our process like a real
service would. The first run calls the gated ``refund`` function; the service applies the
refund and then the process really dies (os._exit) before the answer comes back. The second
run imports the same decorated function, calls ``gate.recover`` and prints the receipt and
``python -m gate status`` for the journal.

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
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import gate  # noqa: E402
import kernel  # noqa: E402

TIERS = {1: kernel.Capabilities(dedupes=True, queryable=True, dedup_window=86_400_000,
                                 lookup_lag=100),
         2: kernel.Capabilities(dedupes=False, queryable=True, lookup_lag=100),
         3: kernel.Capabilities(dedupes=False, queryable=False)}


class Payments:
    """A refund API whose ledger is a JSON file; optionally dies right after applying."""

    def __init__(self, ledger: Path, tier: int, die: bool) -> None:
        self.ledger, self.capabilities, self.die = ledger, TIERS[tier], die

    def _load(self) -> dict[str, Any]:
        if self.ledger.exists():
            return dict(json.loads(self.ledger.read_text()))
        return {"paid": 100, "refunds": []}

    def refund(self, order: int, amount: int, key: str) -> None:
        book = self._load()
        if not (self.capabilities.dedupes and any(r["key"] == key for r in book["refunds"])):
            book["refunds"].append({"key": key, "order": order, "amount": amount})
            self.ledger.write_text(json.dumps(book))
        if self.die:
            print("  the payment service committed the refund; the process dies before the ack")
            os._exit(1)

    # What recovery may ask the service (the gate calls these, never the agent):
    def lookup(self, effect_id: str) -> bool:
        return any(r["key"] == effect_id for r in self._load()["refunds"])

    def facts(self, effect_id: str) -> dict[str, Any]:
        refunds = self._load()["refunds"]
        if self.capabilities.queryable:  # it can tell our own refund apart
            refunds = [r for r in refunds if r["key"] != effect_id]
        return {"paid": 100, "refunded": sum(r["amount"] for r in refunds)}


def gated_refund(folder: Path, tier: int, die: bool = False) -> Callable[..., kernel.Receipt]:
    """The agent's refund tool: a plain function, gated. Same code before and after a crash."""
    payments = Payments(folder / "ledger.json", tier, die)

    @gate.effect(journal=folder / "journal.jsonl", target=payments, name="refund",
                 lease=kernel.Lease("refund-bot", expires_at=2**52),
                 key=lambda order, amount, case: {"order": order, "case": case},
                 premises=lambda order, amount, case: {"paid": 100, "refunded": 0},
                 timing=kernel.Timing(send_timeout=200, settle_margin=150, dedup_margin=1_000))
    def refund(order: int, amount: int, case: int, idempotency_key: str) -> None:
        payments.refund(order, amount, idempotency_key)

    return refund


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tier", type=int, choices=(1, 2, 3), default=2)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        gated_refund(Path(args.child), args.tier, die=True)(order=881, amount=20, case=4471)
        return 0
    folder = Path(tempfile.mkdtemp(prefix="refund-"))
    print(f"tier {args.tier}: customer paid $100; case 4471 approves a $20 refund")
    subprocess.run([sys.executable, __file__, "--tier", str(args.tier), "--child", str(folder)],
                   check=False)
    print("  restart: the journal says DISPATCHED with no final entry; recovering")
    gated_refund(folder, args.tier)
    receipt = gate.recover(folder / "journal.jsonl")[0]
    refunds = json.loads((folder / "ledger.json").read_text())["refunds"]
    print(f"  refunded on order 881: ${sum(r['amount'] for r in refunds)} "
          f"({len(refunds)} refund record(s))")
    for name, value in receipt.as_json().items():
        if name != "authorized":
            print(f"  {name:<10} {value}")
    print(f"$ python -m gate status {folder / 'journal.jsonl'}")
    sys.stdout.flush()
    subprocess.run([sys.executable, "-m", "gate", "status", str(folder / "journal.jsonl")],
                   cwd=ROOT, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
