"""Traces: one run as a self-contained JSON document for the viewer (format: sim/TRACES.md).

How it works. A run made with ``trace=True`` records a time-ordered event list as it goes
(``Run.log``). ``build`` adds the run's identity, the plan, the measurements and verdict, the
receipts and final journal (kernel) or the engine's records (durable), and the crash/outage
interval. ``spec_check`` is the hook for the spec's trace validation: the first importable
module of ``SPEC_CHECKERS`` with ``check(trace) -> {"valid": ..., "anomalies": [...]}``
(today ``spec.conformance.trace``: the journal replayed step by step against Kernel.tla)
judges every kernel trace, and its verdict is stored under ``spec_check`` (null without it).
"""

from __future__ import annotations

import importlib
import json
import re
from typing import Any

TRACE_VERSION = 1
SPEC_CHECKERS = ("spec.conformance.trace", "spec.trace_check")  # first importable wins


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def trace_id(fault: str, system: str, tier: str) -> str:
    return f"{slug(fault)}__{system}__{tier}"


def _spec_checker() -> Any:
    for name in SPEC_CHECKERS:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


_spec = _spec_checker()  # once, up front: forked workers then all use the same version


def spec_check(trace: dict[str, Any]) -> dict[str, Any] | None:
    if _spec is None:
        return None
    try:
        verdict = _spec.check(trace)
    except Exception as exc:  # noqa: BLE001 - reported in the trace, never hidden
        return {"valid": "unknown", "anomalies": [{"type": "error", "explanation": repr(exc)}]}
    return json.loads(json.dumps(verdict, default=str))


def intervals(run: Any) -> list[dict[str, Any]]:
    out = []
    for start, end in run.outages:
        end = end if end is not None else start
        out.append({"kind": "outage", "from": start, "to": end,
                    "label": f"worker down ({end - start} ms)"})
    return out


def build(run: Any, m: dict[str, Any], fault: str, expected: dict[str, Any] | None,
          matches: bool | None) -> dict[str, Any]:
    """The trace document of one measured run."""
    view = m.get("kernel")
    metrics = {k: v for k, v in m.items()
               if k not in ("kernel", "violations", "ok", "outcome")}
    doc: dict[str, Any] = {
        "version": TRACE_VERSION,
        "id": trace_id(fault, run.system.name, run.tier),
        "fault": fault,
        "system": run.system.name,
        "tier": run.tier,
        "capabilities": run.caps.as_json(),
        "timing": run.timing.as_json(),
        "seed": run.seed,
        "plan": run.plan.as_json(),
        "plan_summary": run.plan.summary(),
        "approved": m["approved"],
        "refunded": m["refunded"],
        "outcome": m["outcome"],
        "verdict": "ok" if m["ok"] else "FAIL",
        "reasons": m["violations"],
        "expected": expected,
        "matches_reference": matches,
        "metrics": metrics,
        "receipts": view["receipts"] if view else None,
        "journal": view["entries"] if view else journal_records(run),
        "oracle": judge_verdict(view["judge"]) if view else None,
        "intervals": intervals(run),
        "events": run.events or [],
        "end_ms": run.events[-1]["t"] if run.events else 0,
    }
    doc["spec_check"] = spec_check(doc) if view else None
    return doc


def judge_verdict(v: dict[str, Any]) -> dict[str, Any]:
    """The independent judges' verdict (sim.judge) in the shape the viewer reads."""
    anomalies = [{"type": "ground_truth", "invariant": None, "explanation": g, "witnesses": []}
                 for g in v["ground_truth"]]
    anomalies += [{"type": "invariant", "invariant": i["invariant"],
                   "explanation": i["explanation"], "witnesses": []} for i in v["invariants"]]
    if v["spec"] is not None:
        anomalies.append({"type": "not_a_spec_step", "invariant": None,
                          "explanation": v["spec"], "witnesses": []})
    return {"valid": not anomalies, "anomalies": anomalies, "caught_by": v["caught_by"]}


def journal_records(run: Any) -> list[dict[str, Any]]:
    """A baseline's durable records (the durable engine's history), parsed."""
    out = []
    for line in run.disk.lines:
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def dumps(doc: Any) -> str:
    """Stable JSON: sorted keys, fixed indentation, trailing newline."""
    return json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def timeline(doc: dict[str, Any]) -> str:
    """A trace as readable text, for the terminal (``--replay``)."""
    lines = [f"{doc['id']}  seed {doc['seed']}  plan: {doc['plan_summary']}"]
    for e in doc["events"]:
        state = f"  [{e['state']}]" if "state" in e else ""
        worker = (e.get("details") or {}).get("worker")
        who = e["actor"] + (f" w{worker}" if worker is not None else "")
        lines.append(f"{e['t']:>9} ms  {who:<11} {e['label']}{state}")
    lines.append(f"refunded ${doc['refunded']} of ${doc['approved']} approved; "
                 f"outcome {doc['outcome']}; verdict {doc['verdict']}"
                 + (f" ({', '.join(doc['reasons'])})" if doc["reasons"] else ""))
    if doc.get("oracle"):
        lines.append(f"independent judges: valid={doc['oracle']['valid']}"
                     + "".join(f"\n  {a['explanation']}" for a in doc["oracle"]["anomalies"]))
    return "\n".join(lines)
