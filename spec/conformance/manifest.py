"""Run the spec's model configs and compare them with spec/manifest.json.

How it works. Every ``spec/MC*.cfg`` is checked against ``spec/Kernel.tla`` (``MC_coord*``
against ``spec/Coord.tla``) and every
``spec/broken/X*.cfg`` against ``spec/broken/X.tla`` (X is the cfg name up to its first
underscore). A result records the fields of /work/shared/tla-conformance/manifest.json
(``result``, ``violated``, ``distinct_states``, ``depth``, ``trace_length``, ...) plus
``seconds``. ``python -m spec.conformance.manifest --write`` regenerates the manifest;
without ``--write`` it compares and exits non-zero on a difference. ``--nightly`` includes
the configs whose name contains ``nightly``; ``--table`` prints the manifest as markdown.
"""
from __future__ import annotations

import json
import pathlib
import sys
from typing import Any

SPEC_DIR = pathlib.Path(__file__).resolve().parent.parent
MANIFEST = SPEC_DIR / "manifest.json"
COMPARED = ("result", "violated", "distinct_states", "depth", "trace_length")


def pairs(nightly: bool = False) -> list[tuple[str, str]]:
    """(spec, cfg) paths relative to spec/, in a stable order."""
    out = [("Coord.tla" if p.name.startswith("MC_coord") else "Kernel.tla", p.name)
           for p in sorted(SPEC_DIR.glob("MC*.cfg"))]
    for p in sorted((SPEC_DIR / "broken").glob("*.cfg")):
        out.append((f"broken/{p.stem.split('_')[0]}.tla", f"broken/{p.name}"))
    return [(s, c) for s, c in out if nightly or "nightly" not in c]


def notes_of(cfg: str) -> str:
    lines = (SPEC_DIR / cfg).read_text().splitlines()
    text = [ln[2:].strip() for ln in lines if ln.startswith("\\*")]
    return " ".join(text)


def run(spec: str, cfg: str) -> dict[str, Any]:
    """Check one pair with the project's checker; the manifest entry it yields."""
    from spec.checker import check
    r = check(str(SPEC_DIR / spec), str(SPEC_DIR / cfg))
    if r.result == "error":
        raise RuntimeError(f"{spec} {cfg}: {r.error}")
    return {"spec": spec, "cfg": cfg, "result": r.result, "violated": r.violated,
            "distinct_states": r.distinct_states, "states_generated": r.states_generated,
            "depth": r.depth, "trace_length": r.trace_length,
            "seconds": round(r.seconds, 2), "notes": notes_of(cfg)}


def load() -> list[dict[str, Any]]:
    return json.loads(MANIFEST.read_text())


def expected(spec: str, cfg: str) -> dict[str, Any]:
    for entry in load():
        if entry["spec"] == spec and entry["cfg"] == cfg:
            return entry
    raise KeyError(f"{cfg} is not in spec/manifest.json")


def differences(got: dict[str, Any], want: dict[str, Any]) -> list[str]:
    """Fields that differ. For violations only the verdict and trace length are stable
    (the counts at the moment the checker stops depend on exploration order)."""
    fields = COMPARED if got["result"] == "ok" else ("result", "violated", "trace_length")
    return [f"{f}: got {got[f]!r}, manifest says {want[f]!r}"
            for f in fields if got[f] != want[f]]


def table(entries: list[dict[str, Any]]) -> str:
    """The manifest as a markdown table (spec/README.md quotes it)."""
    rows = ["| cfg | spec | result | violated | distinct states | depth | trace | seconds |",
            "|---|---|---|---|---:|---:|---:|---:|"]
    for e in entries:
        rows.append(f"| {e['cfg']} | {e['spec']} | {e['result']} | {e['violated'] or ''} | "
                    f"{e['distinct_states']} | {e['depth']} | {e['trace_length'] or ''} | "
                    f"{e['seconds']} |")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    if "--table" in argv:
        print(table(load()))
        return 0
    nightly = "--nightly" in argv
    results = []
    for spec, cfg in pairs(nightly):
        got = run(spec, cfg)
        results.append(got)
        print(f"{cfg:40} {got['result']:9} {got['violated'] or '-':26} "
              f"{got['distinct_states']:>8} states depth {got['depth']:>3} "
              f"trace {got['trace_length'] or '-':>3} {got['seconds']:7.2f}s", flush=True)
    if "--write" in argv:
        old = {(e["spec"], e["cfg"]): e for e in load()} if MANIFEST.exists() else {}
        for r in results:
            old[(r["spec"], r["cfg"])] = r
        order = {pair: i for i, pair in enumerate(pairs(nightly=True))}
        kept = sorted((e for k, e in old.items() if k in order), key=lambda e: order[
            (e["spec"], e["cfg"])])
        MANIFEST.write_text(json.dumps(kept, indent=2) + "\n")
        return 0
    bad = [(r["cfg"], d) for r in results for d in differences(r, expected(r["spec"], r["cfg"]))]
    for cfg, d in bad:
        print(f"DIFFERS {cfg}: {d}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
