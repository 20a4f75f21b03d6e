"""Write spec/broken/*.tla: Kernel.tla with one design decision removed per file.

How it works. Each variant is a list of exact (old, new) line edits applied to
spec/Kernel.tla, whose DECISION-marked lines carry the design decisions; the
module is renamed after the file. `python spec/broken/make.py` rewrites the
files; `variants()` returns their text so a test can assert they are current.
Every variant has a same-named .cfg here under which the checker finds the
counterexample recorded in spec/manifest.json.
"""
from __future__ import annotations

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
KERNEL = HERE.parent / "Kernel.tla"

VARIANTS: dict[str, list[tuple[str, str]]] = {
    # identity derived from the payload: a re-decided amount is a new effect
    "NoIdentity": [
        ("Id(k, a) == k          \\* DECISION identity",
         "Id(k, a) == <<k, a>>   \\* BROKEN: identity from the payload"),
        ("Ids == Keys            \\* DECISION identity",
         "Ids == Keys \\X Amounts \\* BROKEN"),
        ("KeyOf(i) == i          \\* DECISION identity",
         "KeyOf(i) == i[1]       \\* BROKEN"),
    ],
    # DISPATCHED appended without fsync before the send
    "NoDurableIntent": [
        ("            /\\ Fsync(i)                                     \\* DECISION intent",
         "            /\\ Lazy(i)                        \\* BROKEN: intent not fsync'd"),
    ],
    # recovery resends without re-checking lease and premises
    "NoRecheck": [
        ("Recheck(i) == Checks(i)                                     \\* DECISION recheck",
         "Recheck(i) == TRUE                           \\* BROKEN: no re-check"),
    ],
    # recovery does not wait out the claim of the in-flight send
    "NoWait": [
        ("Settled(i, t) == t >= rec[i].claim                          \\* DECISION wait",
         "Settled(i, t) == TRUE                        \\* BROKEN: no claim"),
    ],
    # a tier-1 resend trusts the whole dedup window, no margin
    "NoDedupMargin": [
        ("                /\\ now < rec[i].first + DedupWindow - DedupMargin",
         "                /\\ now < rec[i].first + DedupWindow   \\* BROKEN: no margin"),
    ],
    # tier 3 resends at recovery
    "Tier3Resend": [
        ("BlindResend == FALSE                                        \\* DECISION tier3",
         "BlindResend == ~Dedupes /\\ ~Queryable       \\* BROKEN: tier 3 resends"),
    ],
    # the Python kernel today: a late "not found" alerts whenever it was asked
    "LateLookupNoAskedAt": [
        ("  /\\ Late(i, ans[w][i].found, ans[w][i].asked >= rec[i].claim)",
         "  /\\ Late(i, ans[w][i].found, TRUE)   \\* BROKEN: asked_at ignored"),
    ],
}


def variant_text(name: str, kernel: str) -> str:
    text = kernel.replace("MODULE Kernel ", f"MODULE {name} ", 1)
    for old, new in VARIANTS[name]:
        if text.count(old) != 1:
            raise ValueError(f"{name}: the edit target {old.strip()!r} is not in Kernel.tla "
                             f"exactly once")
        text = text.replace(old, new)
    return text


def variants() -> dict[str, str]:
    """File name -> text of every broken variant, made from the current Kernel.tla."""
    kernel = KERNEL.read_text()
    return {f"{name}.tla": variant_text(name, kernel) for name in VARIANTS}


def main() -> int:
    for fname, text in variants().items():
        (HERE / fname).write_text(text)
        print(f"wrote spec/broken/{fname}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
