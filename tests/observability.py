#!/usr/bin/env python3
"""`dtnn run --trace` and `--profile`, `dtnn predict` and `dtnn plot` as a user runs them, on the
default experiment cut short.

    observability.py DTNN one            one process: the .json, .csv and .prv files, the profile
    observability.py DTNN mpi MPIEXEC    two ranks: one merged timeline, each rank a process
    observability.py DTNN plots          dtnn predict --output, then PNGs of it and of a history

one: the Chrome trace parses and holds every kind of span a step has (data, each layer's forward
     and backward with its shapes, algorithm and GFLOP/s, the loss, the optimizer), the batch
     loader's thread, evaluation and checkpoints; the CSV has PyDTNN's columns and per-layer rows;
     the Paraver trace has its three files with PyDTNN's event type; the profile is printed and in
     the history; a trace name of no known format is refused before training.
plots: a prediction's JSON from a run's profile; dtnn plot makes a PNG of it and of the history.
mpi: rank 0 writes one file with both ranks as processes, each bucket's allreduce as an async
     pair, and the ranks' step-status collectives ending together on the aligned clocks.
"""
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXP = os.path.join(HERE, "..", "configs", "fashion_mnist_simplecnn.json")
SHORT = ["--num-epochs", "1", "--steps-per-epoch", "12", "--set", "training.evaluate=false",
         "--set", 'output.progress="lines"']

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)


def spans(trace, pid=None):
    return [e for e in trace["traceEvents"] if e["ph"] == "X" and (pid is None or e["pid"] == pid)]


def one(dtnn):
    with tempfile.TemporaryDirectory() as d:
        j, c, p, h = (os.path.join(d, n) for n in ("t.json", "t.csv", "t.prv", "h.json"))
        r = run([dtnn, "run", EXP, *SHORT, "--trace", j, "--profile", "--history", h,
                 "--set", "dataset.prefetch=true", "--set", f'output.checkpoint_dir="{d}/ck"'])
        check(r.returncode == 0, f"dtnn run --trace --profile exits 0 ({r.stderr[-300:]})")
        trace = json.load(open(j))
        cats = {e["cat"] for e in spans(trace)}
        for cat in ("step", "data", "load", "augment", "forward", "backward", "loss", "optimizer",
                    "evaluation", "checkpoint"):
            check(cat in cats, f"the timeline has '{cat}' spans")
        threads = {e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"}
        check(threads == {"training", "batch loader"}, f"threads named: {sorted(threads)}")
        convs = [e for e in spans(trace) if e["cat"] == "forward" and e["args"].get("type") == "conv2d"]
        check(len(convs) > 0 and all("input" in e["args"] and "attributes" in e["args"] for e in convs),
              "a conv2d forward carries its input shape and attributes")
        check(all(e["args"].get("gflops", 0) > 0 for e in convs), "and its GFLOP/s")
        steps = [e for e in spans(trace) if e["cat"] == "step"]
        check(len(steps) == 12, f"12 step spans ({len(steps)})")
        inside = [e for e in spans(trace) if e["cat"] == "backward" and
                  any(s["ts"] <= e["ts"] and e["ts"] + e["dur"] <= s["ts"] + s["dur"] + 1e-3 for s in steps)]
        check(len(inside) > 0, "backward spans lie inside step spans")
        check(trace["otherData"]["dropped_events"] == 0, "no event dropped")
        check("Profile: 12 training steps" in r.stdout and "waiting for data" in r.stdout,
              "the profile table is printed")
        profile = json.load(open(h)).get("profile", {})
        conv_rows = [l for l in profile.get("layers", []) if l["type"] == "conv2d"]
        check(len(conv_rows) == 2 and all(l["gflops"] > 0 and l["forward_ms"] > 0 for l in conv_rows),
              "the history's profile has both conv2d layers with times and GFLOP/s")
        check(0 < profile.get("step_ms", 0), "and the step's time")

        check(r.stdout.count("Energy: ") == 1 and
              ("Energy: not measured (rapl: " in r.stdout or "(counted)" in r.stdout),
              "the profile says which energy source measured, or why none did")

        # Energy through a test double that counts the process's CPU time as 10 W.
        env = dict(os.environ, DTNN_PLUGIN_PATH=os.path.join(
            os.path.dirname(os.path.abspath(dtnn)), "..", "lib", "dtnn", "test-doubles", "energy"))
        r = run([dtnn, "run", EXP, *SHORT, "--profile", "--history", h, "--trace", j,
                 "--set", 'output.energy=["test_cpu_energy"]'], env=env)
        check(r.returncode == 0, f"a run measuring energy exits 0 ({r.stderr[-300:]})")
        hist = json.load(open(h))
        epoch, profile = hist["epochs"][0], hist["profile"]
        check(epoch.get("energy_j", 0) > 0 and
              abs(epoch["joules_per_sample"] - epoch["energy_j"] / epoch["samples"]) < 1e-12,
              f"the epoch has its joules and joules per sample: {epoch.get('energy_j')}")
        # CPU time x 10 W on at most 2 threads (OMP_NUM_THREADS in ctest's environment or 2).
        threads = int(os.environ.get("OMP_NUM_THREADS", "2"))
        check(epoch["energy_j"] <= 10 * threads * epoch["seconds"] * 1.5 + 0.05,
              f"no more than the CPU time can give ({epoch['energy_j']} J in {epoch['seconds']} s)")
        check(hist.get("train_energy_j") == epoch["energy_j"] and
              "test_cpu_energy" in hist.get("energy_source", ""),
              "the run's total and its source are in the history")
        layer_mj = sum(l["forward_mj"] + l["backward_mj"] for l in profile["layers"] if not l["block"])
        check(0 < layer_mj <= 1e3 * profile["step_j"] * 1.05,
              f"the layers' millijoules ({layer_mj:.3f}) fit in the step's ({1e3 * profile['step_j']:.3f})")
        check("forward mJ" in r.stdout and "mJ per sample" in r.stdout and
              "Energy: test_cpu_energy" in r.stdout and "J in the training steps" in r.stdout,
              "the profile table and the run's end show the energy")
        steps = [e for e in spans(json.load(open(j))) if e["cat"] == "step"]
        check(len(steps) == 12 and all(e["args"].get("joules", 0) > 0 for e in steps),
              "the trace's step spans carry their joules")
        r = run([dtnn, "run", EXP, *SHORT, "--set", 'output.energy=["rapl"]',
                 "--set", 'output.energy=[{"name": "rapl", "powercap": "/nonexistent"}]'])
        check(r.returncode != 0 and "output.energy: energy source 'rapl' does not work here: no RAPL "
              "zone under /nonexistent" in r.stderr, f"a listed source that cannot read is an error: {r.stderr[-200:]}")

        # best_of's choices in the profile, with each candidate's error against the reference.
        r = run([dtnn, "run", EXP, *SHORT, "--profile", "--history", h, "--set",
                 'conv={"algorithm": "best_of", "rounds": 1, "cache_file": ""}'])
        check(r.returncode == 0, f"a profiled best_of run exits 0 ({r.stderr[-300:]})")
        reports = json.load(open(h)).get("profile", {}).get("algorithm_reports", [])
        check(len(reports) == 2 and all("(chosen)" in l and " error " in l for l in reports),
              f"the profile has best_of's choice and errors for both conv2d layers: {reports}")
        check("Algorithms' choices:" in r.stdout and r.stdout.count("(chosen)") == 2,
              "the profile table prints them, once")

        r = run([dtnn, "run", EXP, *SHORT, "--trace", j, "--set", "output.trace_max_events=50"])
        dropped = json.load(open(j))["otherData"]["dropped_events"]
        check(r.returncode == 0 and dropped > 0 and
              f"trace: {dropped} events were dropped past output.trace_max_events (50)" in r.stderr,
              f"a capped trace keeps 50 events and warns of the {dropped} dropped")

        r = run([dtnn, "run", EXP, *SHORT, "--trace", c])
        rows = list(csv.reader(open(c), delimiter=";"))
        check(rows[0] == ["Event type", "Event value", "Event name", "Calls", "Total time",
                          "Median of times"], "the CSV has PyDTNN's columns")
        forward = [x for x in rows[1:] if x[0] == "Model" and x[2] == "000_conv2d_forward"]
        check(len(forward) == 1 and int(forward[0][3]) >= 12 and float(forward[0][4]) > 0,
              "the CSV's first conv2d forward: a call per step (and validation's) and a total time")

        r = run([dtnn, "run", EXP, *SHORT, "--trace", p])
        prv = open(p).read().splitlines()
        check(prv[0].startswith("#Paraver (") and "_ns:1(" in prv[0], f"the .prv header: {prv[0]}")
        check(any(":60000001:1" in line for line in prv[1:]), "the .prv has PyDTNN's Model events")
        check("60000001    Model" in open(p[:-4] + ".pcf").read(), "the .pcf names them")
        check(open(p[:-4] + ".row").read().startswith("LEVEL CPU SIZE"), "the .row exists")

        r = run([dtnn, "run", EXP, *SHORT, "--trace", os.path.join(d, "t.txt")])
        check(r.returncode == 1 and "output.trace" in r.stderr and ".json" in r.stderr
              and "Epoch" not in r.stdout, f"a .txt trace is refused before training: {r.stderr.strip()}")


def mpi(dtnn, mpiexec):
    with tempfile.TemporaryDirectory() as d:
        j = os.path.join(d, "t.json")
        r = run([mpiexec, "-n", "2", dtnn, "run", EXP, *SHORT, "--trace", j,
                 "--set", "training.threads=1"])
        check(r.returncode == 0, f"2 ranks with --trace exit 0 ({r.stderr[-300:]})")
        trace = json.load(open(j))
        pids = {e["pid"] for e in trace["traceEvents"]}
        check(pids == {0, 1}, f"both ranks are processes: {sorted(pids)}")
        for pid in (0, 1):
            b = [e for e in trace["traceEvents"] if e["ph"] == "b" and e["pid"] == pid]
            e = [e for e in trace["traceEvents"] if e["ph"] == "e" and e["pid"] == pid]
            check(len(b) == 12 and len(e) == 12, f"rank {pid}: a bucket allreduce per step ({len(b)})")
            check(any(s["cat"] == "comm_wait" for s in spans(trace, pid)), f"rank {pid}: waits")
        # A step-status allreduce completes on no rank before every rank has entered it: on aligned
        # clocks each rank's end follows the other's begin (however the ranks are scheduled; the
        # slack is for the offset's own error on a loaded machine).
        syncs = [[s for s in spans(trace, pid) if s["cat"] == "sync"] for pid in (0, 1)]
        check(len(syncs[0]) == len(syncs[1]) > 10, "both ranks' step-status collectives")
        lead = statistics.median(min(a["ts"] + a["dur"], b["ts"] + b["dur"]) - max(a["ts"], b["ts"])
                                 for a, b in zip(*syncs))
        check(lead > -1000, f"each ends after both began, on the aligned clocks: median {lead:.0f} us")
        print("clock offsets (ns):", trace["otherData"]["clock_offsets_ns"])


def is_png(path):
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n"


def plots(dtnn):
    with tempfile.TemporaryDirectory() as d:
        h, p = os.path.join(d, "h.json"), os.path.join(d, "p.json")
        r = run([dtnn, "run", EXP, *SHORT[2:], "--num-epochs", "2", "--profile", "--history", h])
        check(r.returncode == 0, f"a profiled run ({r.stderr[-200:]})")
        r = run([dtnn, "predict", EXP, "--ranks", "1,2,4,8", "--profile", h, "--output", p,
                 "--network", "latency_us=10,bandwidth_gbps=1"])
        check(r.returncode == 0, f"dtnn predict --profile --output ({r.stderr[-200:]})")
        points = json.load(open(p))["points"]
        check([x["ranks"] for x in points] == [1, 2, 4, 8], "a point per rank count")
        check(points[0]["speedup"] == 1.0 and all(0 < x["efficiency"] <= 1.0 for x in points),
              "speedup 1 at one rank, efficiencies in (0, 1]")
        check(all(a["communication_wait_ms"] <= b["communication_wait_ms"]
                  for a, b in zip(points, points[1:])), "communication waits grow with ranks")
        for f in (h, p):
            r = run([dtnn, "plot", f])
            png = f[:-5] + ".png"
            check(r.returncode == 0 and os.path.exists(png) and is_png(png),
                  f"dtnn plot {os.path.basename(f)} gives a PNG ({r.stderr.strip()})")
        trace = os.path.join(d, "t.json")
        run([dtnn, "run", EXP, *SHORT, "--trace", trace])
        r = run([dtnn, "plot", trace])
        check(r.returncode == 1 and "expected a history" in r.stderr and
              not os.path.exists(trace[:-5] + ".png"), f"a trace is refused: {r.stderr.strip()}")


if __name__ == "__main__":
    if sys.argv[2] == "one":
        one(sys.argv[1])
    elif sys.argv[2] == "plots":
        plots(sys.argv[1])
    else:
        mpi(sys.argv[1], sys.argv[3])
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
