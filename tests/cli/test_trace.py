#!/usr/bin/env python3
"""--trace and --trace-goal on N ranks, checked against the run's own communication accounting
(the results file) and against themselves: the trace is valid JSON; every send has a receive of
the same bytes on its peer in the same call of the same pattern; sends per pattern and locality
equal the accounting; the GOAL file parses and holds as many sends as the accounting's messages
between different ranks, each with one matching receive. Standard library only."""
import argparse
import collections
import json
import os
import re
import shutil
import sys
import tempfile

parser = argparse.ArgumentParser()
parser.add_argument("--beatnik", required=True)
parser.add_argument("--mpiexec", default="mpiexec")
parser.add_argument("--ranks", type=int, required=True)
args = parser.parse_args()

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from program_checks import Checks, run_beatnik  # noqa: E402

check = Checks()
N = args.ranks
tmp = tempfile.mkdtemp(prefix="beatnik-trace-")
LOC = ["self", "on_node", "off_node"]
RPN = 2  # --ranks-per-node: ranks 2k and 2k+1 form node k, so 3 and 4 ranks have both kinds


def read_goal(path):
    """A small GOAL reader: {rank: {label: op}} and the dependencies, checked as it reads."""
    ranks, deps, num = {}, [], None
    cur = None
    op_re = re.compile(r"^(l\d+): (send|recv) (\d+)b (to|from) (\d+) tag (\d+)$")
    calc_re = re.compile(r"^(l\d+): calc (\d+)$")
    req_re = re.compile(r"^(l\d+) requires (l\d+)$")
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("num_ranks "):
                num = int(line.split()[1])
            elif (m := re.match(r"^rank (\d+) \{$", line)):
                if cur is not None:
                    raise ValueError(f"line {n}: rank inside rank")
                cur = int(m.group(1))
                ranks[cur] = {}
            elif line == "}":
                cur = None
            elif cur is None:
                raise ValueError(f"line {n}: outside a rank: {line}")
            elif (m := op_re.match(line)):
                lab, kind, b, _, peer, tag = m.groups()
                if lab in ranks[cur]:
                    raise ValueError(f"line {n}: label {lab} twice")
                ranks[cur][lab] = (kind, int(b), int(peer), int(tag))
            elif (m := calc_re.match(line)):
                ranks[cur][m.group(1)] = ("calc", int(m.group(2)))
            elif (m := req_re.match(line)):
                deps.append((cur, m.group(1), m.group(2), n))
            else:
                raise ValueError(f"line {n}: not GOAL: {line}")
    for r, a, b, n in deps:
        if a not in ranks[r] or b not in ranks[r]:
            raise ValueError(f"line {n}: requires an unknown label")
    return num, ranks, deps


def study(name, opts, warmup=0, expect_gets=False):
    trace, goal, res = (os.path.join(tmp, f"{name}.{x}") for x in ("json", "goal", "results.json"))
    p = run_beatnik(args.mpiexec, args.beatnik,
                    opts + ["--ranks-per-node", str(RPN), "--trace", trace, "--trace-goal", goal, "--results", res,
                            "--progress-every", "0"] + (["--warmup", str(warmup)] if warmup else []), N, 240)
    ran = p is not None and p.returncode == 0
    check(f"{name}: runs", ran, "timeout" if p is None else p.stderr[-2000:])
    if not ran:
        return
    check(f"{name}: no warning", "warning: --trace" not in p.stderr, p.stderr[-1000:])
    try:
        with open(trace) as f:
            doc = json.load(f)
        ok = True
    except (OSError, ValueError) as e:
        ok, doc = False, None
        check(f"{name}: trace is JSON", False, str(e))
    if not ok:
        return
    check(f"{name}: trace is JSON", True)
    with open(res) as f:
        results = json.load(f)
    first = doc["otherData"]["first_measured_step"]
    check(f"{name}: first measured step", first == 1 + warmup, str(first))
    ev = doc["traceEvents"]
    # Phases: every rank took every step once.
    steps = collections.Counter((e["pid"], e["args"]["step"]) for e in ev if e.get("cat") == "phase"
                                and e["name"] == "step")
    per_rank = collections.Counter(pid for pid, _ in steps)
    check(f"{name}: a 'step' phase per rank and step", sorted(per_rank) == list(range(N)) and
          len(set(per_rank.values())) == 1 and all(v == 1 for v in steps.values()), str(per_rank))
    check(f"{name}: phase times non-negative", all(e["dur"] >= 0 and e["ts"] >= 0 for e in ev if e.get("ph") == "X"))
    # Messages: every send has its receive (same pattern, call, ranks and bytes).
    sends = collections.defaultdict(list)
    recvs = collections.defaultdict(list)
    for e in ev:
        if e.get("cat") in ("send", "recv"):
            a = e["args"]
            if e["cat"] == "send":
                sends[(a["pattern"], a["seq"], e["pid"], a["peer"])].append(a["bytes"])
            else:
                recvs[(a["pattern"], a["seq"], a["peer"], e["pid"])].append(a["bytes"])
    bad = [k for k in set(sends) | set(recvs) if sorted(sends.get(k, [])) != sorted(recvs.get(k, []))]
    check(f"{name}: every send has its receive", not bad and sends, f"{len(bad)} calls differ, e.g. {bad[:3]}")
    # Sends of the measured steps per pattern and locality = the accounting (a one-sided get is
    # accounted by the rank that reads, as a message from the owner: the same locality).
    count = collections.defaultdict(lambda: [0, 0, 0])
    volume = collections.defaultdict(lambda: [0, 0, 0])
    gets = 0
    for e in ev:
        if e.get("cat") == "get" and e["args"]["step"] >= first and e["pid"] != e["args"]["peer"]:
            gets += 1
        if e.get("cat") in ("send", "get") and e["args"]["step"] >= first:
            a = e["args"]
            src, dst = e["pid"], a["peer"]
            loc = 0 if src == dst else (1 if src // RPN == dst // RPN else 2)
            count[a["pattern"]][loc] += 1
            volume[a["pattern"]][loc] += a["bytes"]
    acct = results["communication"]
    check(f"{name}: patterns as accounted", sorted(count) == sorted(p for p in acct
                                                                    if sum(acct[p]["messages_total"].values()) > 0),
          f"{sorted(count)} vs {sorted(acct)}")
    for p, s in acct.items():
        want_m = [s["messages_total"][k] for k in LOC]
        want_b = [s["bytes_total"][k] for k in LOC]
        check(f"{name}: {p} messages", count[p] == want_m, f"trace {count[p]} accounting {want_m}")
        check(f"{name}: {p} bytes", volume[p] == want_b, f"trace {volume[p]} accounting {want_b}")
    # GOAL: parses, sends = the accounting's messages between different ranks, each matched.
    try:
        num, ranks, deps = read_goal(goal)
    except (OSError, ValueError) as e:
        check(f"{name}: GOAL parses", False, str(e))
        return
    check(f"{name}: GOAL parses", num == N and sorted(ranks) == list(range(N)), f"num_ranks {num}, ranks {sorted(ranks)}")
    gs = [(r, op[2], op[3], op[1]) for r, ops in ranks.items() for op in ops.values() if op[0] == "send"]
    gr = [(op[2], r, op[3], op[1]) for r, ops in ranks.items() for op in ops.values() if op[0] == "recv"]
    remote = sum(s["messages_total"]["on_node"] + s["messages_total"]["off_node"] for s in acct.values())
    if expect_gets:
        check(f"{name}: the rma LET's gets are traced", (gets > 0) == (N > 1), f"{gets} gets")
    else:
        check(f"{name}: no gets", gets == 0, f"{gets} gets")
    # A get is a request (0 bytes, reader to owner) and its answer (owner to reader) in GOAL.
    check(f"{name}: GOAL sends = accounted messages (+ a request per get)", len(gs) == remote + gets,
          f"GOAL {len(gs)} accounting {remote} gets {gets}")
    check(f"{name}: GOAL get requests", sum(1 for g in gs if g[3] == 0) >= gets)
    check(f"{name}: GOAL sends matched by receives", sorted(gs) == sorted(gr) and len(set(gs)) == len(gs),
          f"{len(gs)} sends, {len(gr)} recvs")
    check(f"{name}: GOAL has no self messages", all(s != d for s, d, _, _ in gs))
    calcs = sum(1 for ops in ranks.values() for op in ops.values() if op[0] == "calc")
    check(f"{name}: GOAL has calc with dependencies", calcs >= N and len(deps) >= len(gs), f"{calcs} calc, {len(deps)} deps")


study("low", ["-n", "32", "-t", "3", "-O", "low"], warmup=1)
study("medium", ["-n", "16", "-t", "1", "-O", "medium"])
study("high-cutoff", ["-n", "16", "-t", "1", "-O", "high", "-S", "cutoff", "-c", "0.3"])
# The tree solver: LET pushed (migration's sparse exchange) and pulled by MPI_Get (rma).
study("high-tree-sparse", ["-n", "16", "-t", "1", "-O", "high", "-S", "tree", "--let-strategy", "sparse"])
study("high-tree-rma", ["-n", "16", "-t", "1", "-O", "high", "-S", "tree", "--let-strategy", "rma"], expect_gets=True)
study("low-alltoall", ["-n", "16", "-t", "1", "-O", "low", "--fft-exchange", "alltoall", "--halo-strategy", "neighbor"])

# A path that cannot be written: refused before the run, exit 2, one message.
p = run_beatnik(args.mpiexec, args.beatnik, ["-n", "16", "-t", "1", "--trace", "/nonexistent-dir/t.json"], N, 60)
check("unwritable --trace refused", p is not None and p.returncode == 2 and "--trace" in p.stderr,
      "timeout" if p is None else f"rc {p.returncode}: {p.stderr[-300:]}")
shutil.rmtree(tmp)
check.finish()
