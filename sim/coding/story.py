"""The coding scenario as a plug-in of the SimPy world: units of work, world edits, the target.

How it works. ``CodingPlan`` says which units of work arrive when (each one agent's change,
``UNITS``), what other people do to the repository meanwhile (``WORLD``: a rename, a
reformat-only edit, a semantic-only edit), where the control plane crashes (the world's crash
points, or ``mid_change``: after the first file of a multi-file write), which leases are
revoked or expire, which plans are superseded, and the shared budget. ``simulate`` builds one
``sim.world.Run`` with ``CodingStory`` as its scenario and ``RepoTarget`` as its target, so
clock, network, disk, crashes and restarts are the refund world's own. ``RepoTarget``
receives requests (a change with after-images and a token, or a blind patch), applies them to
the repository backend (``sim.coding.model.RepoModel``, or the real directory of
``sim.coding.real``), charges each landing's cost, and records every landing with the time
its request was sent: the judge reads that record and the tree, nothing a system says.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from faults.plans import FaultPlan
from kernel import Capabilities, Lease
from kernel.changes import Change
from sim.coding.model import Op, RepoModel, merge
from sim.target import Request, Response
from sim.world import Run

WORK = 400  # ms an agent works between reading the tree and submitting its change
HORIZON_LEASE = 10**9
CAPS = Capabilities(dedupes=True, queryable=True, dedup_window=10**9, lookup_lag=0)

POST_URL = 'def post_url(title):\n    return "/posts/" + text.slugify(title)\n'
URLS = 'import text\n\n\n' + POST_URL
SHOUT = 'def shout(s):\n    return s.upper() + "!"\n'
BANNER = 'def banner(t):\n    return "<b>" + text.shout(t) + "</b>"\n'
TRUNCATED = ('def slugify(s):\n'
             '    """Lower-case words joined by dashes, at most 10 characters."""\n'
             '    return "-".join(s.lower().split())[:10]\n')
WRONG_POST_URL = 'def post_url(title):\n    return "/posts/" + title\n'
WEAKENED_TEST = ('import app\nimport text\n\n\ndef test_page():\n'
                 '    assert app.page("Hi") == "<h1>Hi</h1>"\n\n\ndef test_tag():\n'
                 '    assert app.tag("Big Cat") == "#" + text.slugify("Big Cat")\n')


@dataclass(frozen=True, slots=True)
class Unit:
    """One agent's unit of work: its patch, the tests that verify it, its cost and plan."""

    name: str
    agent: str
    work: str  # units with the same work implement the same thing
    ops: tuple[Op, ...]
    tests: tuple[str, ...] = ("test_app.py",)
    cost: int = 10
    plan: str = "plan-main"


def _add(path: str, code: str) -> Op:
    return {"op": "add", "path": path, "code": code}


UNITS: dict[str, Unit] = {u.name: u for u in (
    Unit("post_url", "agent-a", "post_url", (_add("app.py", POST_URL),)),
    Unit("post_url_dup", "agent-c", "post_url", (_add("urls.py", URLS),)),
    Unit("post_url_takeover", "agent-d", "post_url", (_add("urls.py", URLS),)),
    Unit("banner", "agent-b", "banner", (_add("text.py", SHOUT), _add("app.py", BANNER))),
    Unit("shout", "agent-e", "shout", (_add("text.py", SHOUT),), ("test_text.py",)),
    Unit("footer", "agent-f", "footer", (_add("footer.py", 'def footer():\n    return '
                                                           '"<footer/>"\n'),),
         ("test_extra.py",)),
    Unit("truncate_slugs", "agent-b", "truncate_slugs",
         ({"op": "replace", "path": "text.py", "name": "slugify", "code": TRUNCATED},),
         ("test_text.py",)),
    Unit("post_url_own_test", "agent-a", "post_url",
         (_add("app.py", WRONG_POST_URL), {"op": "put", "path": "test_app.py",
                                           "text": WEAKENED_TEST})),
    Unit("post_url_buggy", "agent-a", "post_url", (_add("app.py", WRONG_POST_URL),)),
)}

REFORMATTED = ('def slugify( s ):\n'
               '    # words, lower-cased, joined\n'
               '    """Lower-case the words and join them with dashes."""\n'
               '    return "-".join(\n        s.lower().split()\n    )\n')
INITIALS = 'def initials(s):\n    return "".join(w[0] for w in s.split())\n'
SEMANTIC = 'def slugify(s):\n    """Lower-case words joined by dashes."""\n' \
           '    return "_".join(s.lower().split())\n'


def _rename(path: str) -> Op:
    return {"op": "rename", "path": path, "old": "slugify", "new": "make_slug"}


# name -> (ops on the code, ops on the reference tests): edits by people outside the systems
WORLD: dict[str, tuple[tuple[Op, ...], tuple[Op, ...]]] = {
    "rename": ((_rename("text.py"), _rename("app.py")),
               (_rename("test_text.py"), _rename("test_app.py"))),
    "reformat": (({"op": "replace", "path": "text.py", "name": "slugify", "code": REFORMATTED},
                  {"op": "add", "path": "text.py", "code": INITIALS}), ()),
    "semantic": (({"op": "replace", "path": "text.py", "name": "slugify", "code": SEMANTIC},),
                 ({"op": "sub", "path": "test_text.py", "old": "big-cat", "new": "big_cat"},)),
}


@dataclass(frozen=True, slots=True)
class CodingPlan:
    name: str
    units: tuple[tuple[str, int], ...]  # (unit name, arrival ms); a unit twice = resubmitted
    world: tuple[tuple[str, int], ...] = ()  # (WORLD event, ms)
    crash: str | None = None  # a world crash point, or "mid_change"
    recrash: str | None = None
    outage: int = 1_000
    slow_send: int = 0
    revoke: tuple[tuple[str, int], ...] = ()  # (agent, ms): the agent's lease revoked
    expire: tuple[tuple[str, int], ...] = ()  # (agent, ms): the agent's lease ends then
    supersede: tuple[tuple[str, int], ...] = ()  # (plan, ms): a new plan version
    cap: int | None = None  # the shared budget, if any
    claim_ttl: int | None = None  # ms a kernel claim lasts (None: the systems' CLAIM_TTL);
    # a short one expires while its agent still works or is down (fencing must stop it)

    def fault_plan(self) -> FaultPlan:
        world_crash = self.crash if self.crash != "mid_change" else None
        return FaultPlan(name=self.name, crash=world_crash, recrash=self.recrash,
                         outage=self.outage, slow_send=self.slow_send)

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "units": [list(u) for u in self.units],
                "world": [list(w) for w in self.world], "crash": self.crash,
                "recrash": self.recrash, "outage": self.outage, "slow_send": self.slow_send,
                "revoke": [list(r) for r in self.revoke], "expire": [list(e) for e in self.expire],
                "supersede": [list(s) for s in self.supersede], "cap": self.cap,
                **({"claim_ttl": self.claim_ttl} if self.claim_ttl is not None else {})}


@dataclass(slots=True)
class Job:
    id: int
    at: int
    unit: Unit
    kind: str = "original"
    arrived: bool = False
    done: bool = False
    outcome: str = ""
    done_at: int | None = None
    # sim.world's Node.decide records the decision here and compares its "amount" with the
    # job's; a code change carries no amount, so that comparison never fires for this target
    payload: dict[str, Any] | None = None
    amount: int | None = None


@dataclass
class Landing:
    """One write the target carried out (the judge's record)."""

    unit: str
    at: int
    sent_at: int
    system_kind: str  # "change" | "patch"
    result: str
    cost: int
    effect_id: str | None = None


@dataclass
class CodingStory:
    """The Scenario protocol of sim.world for the coding target."""

    plan: CodingPlan
    repo: Any = field(default_factory=RepoModel)
    name: str = "coding"
    approved: int = 0
    reference: dict[str, str] = field(default_factory=dict)  # the tests the judge runs
    revoked: dict[str, int] = field(default_factory=dict)  # agent -> revoked at
    expires: dict[str, int] = field(default_factory=dict)  # agent -> lease end
    plans: dict[str, list[int]] = field(default_factory=dict)  # plan -> version start times
    landings: list[Landing] = field(default_factory=list)
    restored: list[tuple[str, int]] = field(default_factory=list)
    changes: dict[str, Change] = field(default_factory=dict)  # effect id -> change
    journaled: set[str] = field(default_factory=set)  # effects whose target keeps images
    world_log: list[tuple[int, str]] = field(default_factory=list)
    verifying_until: int = 0  # the control plane runs one verification at a time

    def __post_init__(self) -> None:
        tree = self.repo.tree()
        self.reference = {p: t for p, t in tree.items() if p.startswith("test_")}
        self.expires = dict(self.plan.expire)

    # ---------------------------------------------------------------- the Scenario protocol

    def jobs(self, plan: FaultPlan) -> list[Job]:
        seen: set[str] = set()
        out = []
        for n, (name, at) in enumerate(self.plan.units):
            out.append(Job(n, at, UNITS[name], "duplicate" if name in seen else "original"))
            seen.add(name)
        return out

    def decision(self, job: Job) -> str:
        return job.unit.name

    def decision_of(self, payload: dict[str, Any]) -> str:
        return str(payload.get("unit", "?"))

    def key(self, job: Job) -> Any:
        return None

    def decide(self, job: Job, rerun: bool, plan: FaultPlan) -> dict[str, Any]:
        return {"unit": job.unit.name, "ops": list(job.unit.ops)}

    def describe(self, payload: dict[str, Any]) -> str:
        return f"change {payload.get('unit', '?')}"

    def facts(self, exclude: str | None = None) -> dict[str, Any]:
        return {}

    def premises_hold(self, decision: str) -> bool:
        return True

    def on_apply(self, payload: dict[str, Any], decision: str, effect_id: str | None) -> None:
        return None

    def world_event(self, name: str) -> str | None:
        return None

    def conflicts(self, payload: dict[str, Any], decision: str) -> bool:
        return False

    def metrics(self) -> dict[str, int]:
        return {"landings": len(self.landings), "spent": self.spent()}

    def overreached(self) -> bool:
        return False

    # ---------------------------------------------------------------- authority and plans

    def lease(self, agent: str, now: int) -> Lease:
        end = self.expires.get(agent, HORIZON_LEASE)
        return Lease(f"lease-{agent}", end, agent in self.revoked and self.revoked[agent] <= now)

    def lease_live(self, agent: str, at: int) -> bool:
        return self.lease(agent, at).live(at)

    def plan_version(self, plan: str, at: int) -> int:
        return 1 + sum(t <= at for t in self.plans.get(plan, []))

    def spent(self) -> int:
        return sum(landing.cost for landing in self.landings)

    # ---------------------------------------------------------------- the world's edits

    def world_edit(self, name: str, now: int) -> str:
        code, tests = WORLD[name]
        tree = self.repo.tree()
        writes = merge(tree, list(code) + list(tests))
        reference = {**self.reference, **{p: t for p, t in merge(self.reference,
                                                                  list(tests)).items() if t}}
        after = {p: t for p, t in {**tree, **writes}.items() if t is not None}
        candidate = {**{p: t for p, t in after.items() if not p.startswith("test_")},
                     **reference}
        if self.repo.verify(candidate) != "passed":  # people run the tests before pushing
            self.world_log.append((now, f"{name} not pushed"))
            return f"someone's {name} edit would break the tests: not pushed"
        for path, text in writes.items():
            self.repo.write(path, text)
        self.reference = reference
        self.world_log.append((now, name))
        return {"rename": "someone renames slugify to make_slug (and its callers)",
                "reformat": "someone reformats text.py and appends an unrelated function",
                "semantic": "someone changes slugify's body: same name and arity, new "
                            "meaning"}[name]


class RepoTarget:
    """What the world's network delivers requests to: the repository, by request kind."""

    def __init__(self, run: Run, story: CodingStory, crash_mid_change: bool) -> None:
        self.run, self.story = run, story
        self.caps = CAPS
        self.armed = crash_mid_change
        self.applications: list[Any] = []  # the refund world's record (unused here)
        self.by_effect: dict[str, int] = {}

    def on_file(self, generation: int) -> Callable[[int], bool]:
        def hook(n: int) -> bool:
            if self.armed and generation == self.run.generation:
                self.armed = False
                self.run.log("world", "crash", "the writer dies after the first file")
                self.run.crash()
                return True
            return False
        return hook

    def receive(self, req: Request, now: int) -> Response | None:
        p, story = req.payload, self.story
        unit = UNITS[p["unit"]]
        if p["kind"] == "patch":
            result = story.repo.patch(p["ops"], self.on_file(req.generation))
        else:
            change = Change.from_json(p["change"])
            result = story.repo.apply(change, p.get("token"), p.get("journaled", False),
                                      self.on_file(req.generation))
        if result in ("applied", "crashed"):
            story.landings.append(Landing(unit.name, now, req.sent_at, p["kind"], result,
                                          unit.cost, req.effect_id))
            if req.effect_id is not None:
                self.by_effect.setdefault(req.effect_id, now)
        if result == "crashed":
            return None
        kind = "applied" if result == "applied" else "deduplicated" \
            if result == "deduplicated" else f"rejected:{result}"
        return Response(kind)

    def lookup(self, effect_id: str, now: int) -> bool:
        change = self.story.changes.get(effect_id)
        return change is not None and self.story.repo.lookup(
            change, effect_id in self.story.journaled) == "after"

    def lag_matters(self, effect_id: str, now: int) -> bool:
        """sim.world's coverage asks whether a lookup lag bit: this target has none."""
        return False


def simulate(plan: CodingPlan, system: Any, seed: int, trace: bool = False,
             repo: Any = None) -> Run:
    """One run of the coding scenario against one system (``repo``: a backend to use)."""
    story_box: list[CodingStory] = []

    def scenario() -> CodingStory:
        story = CodingStory(plan, repo if repo is not None else RepoModel())
        story_box.append(story)
        return story

    run = Run(plan.fault_plan(), system, "t1", seed, trace=trace,
              scenario=scenario)  # type: ignore[arg-type]
    story = story_box[0]
    run.caps = CAPS
    run.target = RepoTarget(run, story, plan.crash == "mid_change")  # type: ignore[assignment]
    for name, at in plan.world:
        run.at(at, lambda n=name: run.log("world", n, story.world_edit(n, run.now)))
    for agent, at in plan.revoke:
        run.at(at, lambda a=agent: _revoke(run, story, a))
    for plan_id, at in plan.supersede:
        story.plans.setdefault(plan_id, []).append(at)
        run.at(at, lambda p=plan_id: run.log("world", "supersede", f"{p} superseded by a new "
                                             f"version"))
    return run.run()


def _revoke(run: Run, story: CodingStory, agent: str) -> None:
    story.revoked.setdefault(agent, run.now)
    run.log("world", "revoke_lease", f"the lease of {agent} is revoked")


def with_name(plan: CodingPlan, name: str) -> CodingPlan:
    return replace(plan, name=name)
