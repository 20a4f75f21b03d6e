"""Run a whole check: load the model, explore, check properties, fill a Result.

`check()` never raises for problems in the spec or cfg: they become a Result
with result "error" and a one-line message with a position when known.
"""
import gc
import time

from .bfs import Explorer, Result, build_trace, guarded, print_progress
from .errors import TLAError

EXIT_CODES = {"ok": 0, "invariant": 12, "property": 13, "deadlock": 11, "error": 150}


def load(spec_path, cfg_path=None):
    """Parse, resolve and compile a spec under a cfg (default: SPEC.cfg); raises TLAError."""
    import sys

    from .model import Model
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    if cfg_path is None:
        cfg_path = spec_path[:-4] + ".cfg" if spec_path.endswith(".tla") else spec_path + ".cfg"
    return Model(spec_path, cfg_path)


def check(spec_path, cfg_path=None, progress=False, workers=1, check_deadlock=None):
    """Model-check spec_path under cfg_path; returns a Result.

    check_deadlock=False/True overrides the cfg's CHECK_DEADLOCK (TLC's -deadlock flag).
    """
    started = time.monotonic()
    result = Result()
    collecting = gc.isenabled()
    gc.disable()  # the explorer collects at its checkpoints (bfs.Explorer.checkpoint)
    try:
        model = load(spec_path, cfg_path)
        if check_deadlock is not None:
            model.check_deadlock = check_deadlock
        run_model(model, result, progress, workers)
    except TLAError as exc:
        result.result = "error"
        result.error = str(exc)
    except RecursionError:
        result.result = "error"
        result.error = "evaluation error: recursion too deep"
    except (TypeError, KeyError, IndexError, ValueError, ZeroDivisionError, AttributeError,
            NameError) as exc:
        result.result = "error"
        result.error = f"evaluation error: {type(exc).__name__}: {exc}"
    except Exception as exc:  # never a traceback: report what went wrong on one line
        result.result = "error"
        result.error = f"internal error: {type(exc).__name__}: {exc}"
    finally:
        gc.unfreeze()  # what the explorer froze is collectable again
        if collecting:
            gc.enable()
    result.seconds = time.monotonic() - started
    return result


def run_model(model, result, progress=False, workers=1):
    from .liveness import PropertyChecker
    if model.assumptions_only:  # the cfg names no behaviour: the ASSUMEs held, nothing more
        result.distinct_states = result.states_generated = result.depth = 0
        return
    props = PropertyChecker(model)
    if workers > 1 and not (props.needs_graph or props.step_tests or props.init_tests
                            or model.symmetry
                            or model.view_fn is not None or model.postconditions):
        from .parallel import run_parallel
        if run_parallel(model, result, workers, progress):
            return
    explorer = Explorer(model, keep_edges=props.needs_graph, step_tests=props.step_tests,
                        init_tests=props.init_tests,
                        progress=print_progress if progress else None)
    outcome, name, idx, extra = explorer.run()
    result.states_generated = explorer.generated
    result.distinct_states = len(explorer.states)
    result.depth = explorer.depth
    if outcome != "ok":
        path = explorer.path_to(idx) if idx is not None else []
        states = [explorer.states[i] for i in path]
        if extra is not None:
            states.append(extra)
        result.result = outcome
        result.violated = name
        result.trace = build_trace(model, states, explorer.key)
        return
    props.check(explorer, result)
    if result.result == "ok" and model.postconditions:
        check_postconditions(model, explorer)


def check_postconditions(model, explorer):
    """TLC's POSTCONDITIONs, evaluated once the search has ended without a violation,
    TLCGet giving its counts; one that is not TRUE is an error, as a false ASSUME is."""
    model.compiler.tlc_stats.update(distinct=len(explorer.states), generated=explorer.generated,
                                    diameter=explorer.depth, queue=0)
    state = explorer.states[0] if explorer.states else (None,) * len(model.var_names)
    for name, fn in model.postconditions:
        where = model.where(name)
        if guarded(fn, state, what=f"the postcondition {name}", where=where) is not True:
            raise TLAError(f"postcondition {name} is false", where)
