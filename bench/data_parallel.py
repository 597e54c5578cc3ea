#!/usr/bin/python3
"""Data-parallel throughput: 1 rank x 2 threads against 2 ranks x 1 thread (mpirun), same global batch.

For each model, runs alternately, `--repeats` times each:
  1x2  : dtnn run CONFIG, 2 threads, global batch B
  2x1  : mpirun -np 2 dtnn run CONFIG, 1 thread per rank, global batch B (B/2 per rank)
  2x1b : the same with blocking gradient allreduce (PyDTNN's --use-blocking-mpi)
and prints median steady-state samples/s, the ratio 2x1 / 1x2, the time a step waits on the
gradient exchange, and the share of the allreduce hidden behind backward
(1 - non-blocking wait / blocking allreduce time).

  bench/data_parallel.py --repeats 3 --steps 60
"""
import argparse, json, os, pathlib, statistics, subprocess, sys, tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODELS = {"simplecnn": "configs/fashion_mnist_simplecnn.json", "vggstyle": "configs/synthetic_vggstyle.json"}
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_pml": "ob1"}


def run(config, ranks, threads, batch, steps, blocking=False):
    with tempfile.NamedTemporaryFile(suffix=".json") as h:
        cmd = [str(ROOT / "build/bin/dtnn"), "run", str(ROOT / config), "--set", f"training.threads={threads}",
               "--set", f"training.global_batch_size={batch}", "--set", f"training.batch_size={batch}",
               "--set", "training.evaluate=false", "--set", "dataset.validation_split=0",
               "--set", f"training.steps_per_epoch={steps}", "--set", "output.progress=\"none\"",
               "--set", f"parallel.blocking={'true' if blocking else 'false'}", "--history", h.name]
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), **MPI_ENV)
        if ranks > 1:
            cmd = ["mpirun", "-np", str(ranks), "--bind-to", "core"] + cmd
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
        return json.load(open(h.name))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="simplecnn,vggstyle")
    ap.add_argument("--batch", type=int, default=64, help="global batch size")
    ap.add_argument("--steps", type=int, default=60, help="steps per run")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    results = []
    for model in a.models.split(","):
        runs = {"1x2": [], "2x1": [], "2x1b": []}
        for r in range(a.repeats):
            runs["1x2"].append(run(MODELS[model], 1, 2, a.batch, a.steps))
            runs["2x1"].append(run(MODELS[model], 2, 1, a.batch, a.steps))
            runs["2x1b"].append(run(MODELS[model], 2, 1, a.batch, a.steps, blocking=True))
            print(f"{model} repeat {r + 1}: " + "  ".join(
                f"{k} {v[-1]['train_samples_per_second']:,.0f}" for k, v in runs.items()), flush=True)
        med = {k: statistics.median(x["train_samples_per_second"] for x in v) for k, v in runs.items()}
        wait = statistics.median(x["comm_wait_ms_per_step"] for x in runs["2x1"])
        blocking = statistics.median(x["comm_wait_ms_per_step"] for x in runs["2x1b"])
        hidden = 1 - wait / blocking if blocking > 0 else 0.0
        row = {"model": model, "global_batch": a.batch, "samples_per_second": med,
               "ratio_2x1_over_1x2": med["2x1"] / med["1x2"], "comm_wait_ms_per_step": wait,
               "blocking_allreduce_ms_per_step": blocking, "hidden_fraction": hidden,
               "buckets": runs["2x1"][0].get("buckets", 0)}
        results.append(row)
        print(f"{model}: 1x2 {med['1x2']:,.0f}  2x1 {med['2x1']:,.0f}  2x1 blocking {med['2x1b']:,.0f} samples/s; "
              f"2x1/1x2 = {row['ratio_2x1_over_1x2']:.2f}; wait {wait:.3f} ms/step (blocking allreduce "
              f"{blocking:.3f} ms/step, {100 * hidden:.0f}% hidden)", flush=True)
    print("JSON " + json.dumps(results))


if __name__ == "__main__":
    sys.exit(main())
