"""Level-synchronous parallel BFS over forked worker processes.

Each state is owned by worker `hash(state) % W` (hashes agree because the
workers are forked from one interpreter). Per BFS level, every worker expands
its own frontier, keeps successors it owns, and sends the others to their
owners in one batch per level (a state already seen or sent is not sent
again). The parent process only sums counts and tells the workers to go on
or stop. Counts and depth are those of the sequential search; when a worker
finds a violation or an evaluation error, the caller re-runs sequentially to
get TLC's shortest trace (or a positioned error) and the counts at that moment.
"""
import gc
import multiprocessing as mp
import pickle
import queue
import sys
import threading
import time

from .bfs import PY_ERRORS, print_progress, sharer
from .errors import TLAError

_MODEL = None


def run_parallel(model, result, workers, progress):
    """Fill result and return True, or return False when a sequential re-run is needed."""
    global _MODEL
    if sys.platform == "win32" or "fork" not in mp.get_all_start_methods():
        return False
    _MODEL = model
    if model.invariants:
        model.invariant_all()  # compiled once, before the workers fork
    ctx = mp.get_context("fork")
    if workers == 2:
        left, right = ctx.Pipe()
        inboxes = [PairLink(left, first=True), PairLink(right, first=False)]
    else:
        inboxes = [QueueLinks(ctx.Queue(), w) for w in range(workers)]
        for link in inboxes:
            link.all = inboxes
    controls = [ctx.Queue() for _ in range(workers)]
    reports = ctx.Queue()
    procs = [ctx.Process(target=worker_main, args=(w, workers, inboxes, controls[w], reports),
                         daemon=True) for w in range(workers)]
    for p in procs:
        p.start()
    try:
        return coordinate(procs, controls, reports, result, progress)
    finally:
        for p in procs:
            p.join(timeout=0.5)
            if p.is_alive():
                p.terminate()
                p.join()


def coordinate(procs, controls, reports, result, progress):
    generated = distinct = depth = 0
    last = time.monotonic()
    while True:
        frontier = 0
        failed = False
        for _ in procs:
            kind, payload = next_report(reports, procs)
            if kind == "error":  # re-run sequentially: it reports the error with a position
                for c in controls:
                    c.put("stop")
                return False
            new, gen, bad = payload
            frontier += new
            generated += gen
            failed = failed or bad
        distinct += frontier
        if failed:
            for c in controls:
                c.put("stop")
            return False
        if frontier == 0:
            for c in controls:
                c.put("stop")
            break
        depth += 1
        for c in controls:
            c.put("go")
        if progress and time.monotonic() - last > 3:
            last = time.monotonic()
            print_progress(generated, distinct, depth, frontier)
    result.states_generated = generated
    result.distinct_states = distinct
    result.depth = depth
    return True


def next_report(reports, procs):
    """The next worker report; an error if a worker died without reporting."""
    while True:
        try:
            return reports.get(timeout=1)
        except queue.Empty:
            if not all(p.is_alive() for p in procs):
                raise TLAError("a parallel worker process died unexpectedly") from None


def worker_main(wid, workers, inboxes, control, reports):
    gc.enable()  # forked from check.check, which turned automatic collection off
    try:
        Worker(_MODEL, wid, workers, inboxes, control, reports).run()
    except TLAError as exc:
        reports.put(("error", str(exc)))
    except PY_ERRORS as exc:
        reports.put(("error", f"evaluation error: {type(exc).__name__}: {exc}"))
    except Exception as exc:  # the coordinator must hear about every failure
        reports.put(("error", f"internal error in worker {wid}: {type(exc).__name__}: {exc}"))


class PairLink:
    """Two workers over one duplex pipe. Each pickles its batch, writes it from a helper
    thread (the write releases the GIL) while reading the other's batch, then unpickles."""

    def __init__(self, conn, first):
        self.conn = conn
        self.first = first

    def exchange(self, outgoing):
        data = pickle.dumps(outgoing[1] if self.first else outgoing[0], pickle.HIGHEST_PROTOCOL)
        writer = threading.Thread(target=self.conn.send_bytes, args=(data,))
        writer.start()
        incoming = self.conn.recv_bytes()
        writer.join()
        return [pickle.loads(incoming)]


class QueueLinks:
    """More than two workers: one inbox queue each."""

    def __init__(self, queue, wid):
        self.queue = queue
        self.wid = wid
        self.all = []

    def exchange(self, outgoing):
        for owner, batch in enumerate(outgoing):
            if owner != self.wid:
                self.all[owner].queue.put(batch)
        return [self.queue.get() for _ in range(len(outgoing) - 1)]


class Worker:
    def __init__(self, model, wid, workers, inboxes, control, reports):
        self.model = model
        self.wid = wid
        self.workers = workers
        self.inboxes = inboxes
        self.control = control
        self.reports = reports
        self.seen = set()  # states owned, received or already sent to their owner
        self.share = sharer(len(model.var_names))
        self.inv_all = model.invariant_all() if model.invariants else None

    def first_sight(self, t):
        """Record t and return its shared copy, or None if it was seen before."""
        if t in self.seen:
            return None
        t = self.share(t)
        self.seen.add(t)
        return t

    def admit(self, t):
        """A new owned state: check the invariants (True if all hold)."""
        return self.inv_all is None or self.inv_all(t) is True

    def run(self):
        m = self.model
        inits = []
        m.compiler.tlc_level[0] = 0  # as bfs.Explorer: the level of the states made, from 0
        m.init_fn(None, inits.append)
        frontier = []
        bad = False
        for t in inits:
            if hash(t) % self.workers != self.wid:
                continue
            if not self.admit(t):
                bad = True
            if all(c(t) is True for c in m.constraints):
                t = self.first_sight(t)
                if t is not None:
                    frontier.append(t)
        self.reports.put(("level", (len(frontier), len(inits) if self.wid == 0 else 0, bad)))
        level = 1  # the frontier's, from 1: its successors' from 0
        while self.control.get() == "go":
            m.compiler.tlc_level[0] = level
            level += 1
            frontier, generated, bad = self.level(frontier)
            self.reports.put(("level", (len(frontier), generated, bad)))

    def level(self, frontier):
        m = self.model
        next_fn = m.next_fn
        seen = self.seen
        share = self.share
        wid, workers = self.wid, self.workers
        constrained = bool(m.constraints or m.action_constraints)
        outgoing = [[] for _ in range(workers)]
        mine = []
        generated = 0
        succ = []
        bad = False
        for s in frontier:
            del succ[:]
            next_fn(s, succ.append)
            generated += len(succ)
            if not succ and m.check_deadlock:
                bad = True
            for t in succ:
                if constrained and not self.in_model(s, t):
                    bad = bad or not self.admit(t)
                    continue
                if t in seen:
                    continue
                t = share(t)
                seen.add(t)
                owner = hash(t) % workers
                if owner == wid:
                    mine.append(t)
                else:
                    outgoing[owner].append(t)
        for batch in self.inboxes[wid].exchange(outgoing):
            for t in batch:
                t = self.first_sight(t)
                if t is not None:
                    mine.append(t)
        for t in mine:
            if not self.admit(t):
                bad = True
                break
        return mine, generated, bad

    def in_model(self, s, t):
        m = self.model
        return all(c(t) is True for c in m.constraints) and \
            all(a(s, t) is True for a in m.action_constraints)
