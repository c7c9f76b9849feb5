"""Time per Birkhoff-Rott call of a medium or high order run, read from its timer regions alone (no
--br-check needed): the sum of the solver's top-level regions `br.SOLVER.*` (median over ranks,
seconds per step; their phases nested in them and br.check left out) divided by the BR calls per
step that the timers counted."""
from ..runs import top_level_regions

SOLVERS = ("exact", "cutoff", "tree")
# The region a BR call enters a known number of times: the cutoff and tree solvers' first phase
# once; the exact solver's pair region once per ring round, and the ring has one round per rank.
ENTRY = {"exact": "br.exact.compute", "cutoff": "br.cutoff.to_spatial", "tree": "br.tree.to_spatial"}


def solver_of(doc):
    solver = doc["config"].get("solver")
    return solver if solver in SOLVERS else None


def calls_per_step(doc):
    """BR calls per measured step (timers.regions.ENTRY.calls_per_step), or None without them."""
    solver = solver_of(doc)
    entry = doc["timers"]["regions"].get(ENTRY.get(solver, ""))
    if not entry or not entry.get("calls_per_step"):
        return None
    calls = float(entry["calls_per_step"])
    if solver == "exact":
        calls /= int(doc["decomposition"]["ranks"])
    return int(calls) if calls == int(calls) else calls


def seconds_per_call(doc):
    """(seconds per BR call, calls per step, regions summed) of a run, or None without them."""
    solver = solver_of(doc)
    regions = doc["timers"]["regions"]
    mine = [r for r in top_level_regions(regions) if r.startswith(f"br.{solver}.")]
    calls = calls_per_step(doc)
    if not mine or not calls:
        return None
    return sum(float(regions[r]["median"]) for r in mine) / calls, calls, mine
