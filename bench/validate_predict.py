#!/usr/bin/python3
"""dtnn predict against measured runs: 1 to 4 ranks (1 thread each, oversubscribed on a small
machine) on simulated networks (parallel.simulated_network), for simplecnn and a VGG-style model.

For each model and network: `dtnn predict` measures one rank's step here (1 thread) and predicts
1..4 ranks with --shared-cores (the ranks share this machine's cores, so each computes slower);
then each rank count is run under mpirun with the same simulated network, and its steady-state
samples/s is compared with the prediction. With --repeats R, each prediction and each run is
made R times, alternating, and medians are compared (the machine is shared and noisy). Prints a table with the errors, their median and worst
absolute value, and writes each prediction with its measured points (for `dtnn plot`) to --out.

  bench/validate_predict.py --steps 40 --out /tmp/validate
"""
import argparse, json, os, pathlib, statistics, subprocess, tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DTNN = str(ROOT / "build/bin/dtnn")
MODELS = {"simplecnn": "configs/fashion_mnist_simplecnn.json",
          "vggstyle": "configs/synthetic_vggstyle.json"}
# Fast (InfiniBand-like), 10 Gb/s Ethernet, and two slow enough that communication dominates
# (0.5 Gb/s for simplecnn, 0.05 Gb/s for the VGG-style model, whose steps compute longer).
NETWORKS = {"40G/5us": (5, 40), "10G/20us": (20, 10), "0.5G/50us": (50, 0.5),
            "0.05G/100us": (100, 0.05)}
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_pml": "ob1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMP_NUM_THREADS": "1"}


def common(config, network):
    latency, bandwidth = network
    return [str(ROOT / config), "--set", "training.threads=1",
            "--set", f"parallel.simulated_network.latency_us={latency}",
            "--set", f"parallel.simulated_network.bandwidth_gbps={bandwidth}"]


def measure(config, network, ranks, steps):
    with tempfile.NamedTemporaryFile(suffix=".json") as h:
        cmd = [DTNN, "run", *common(config, network), "--set", "training.evaluate=false",
               "--set", "dataset.validation_split=0", "--set", "training.epochs=1",
               "--set", f"training.steps_per_epoch={steps}", "--set", 'output.progress="none"',
               "--history", h.name]
        if ranks > 1:
            cmd = ["mpirun", "-np", str(ranks)] + cmd
        subprocess.run(cmd, check=True, env=dict(os.environ, **MPI_ENV), capture_output=True)
        return json.load(open(h.name))["train_samples_per_second"]


def predict(config, network, ranks, cores, out):
    subprocess.run([DTNN, "predict", *common(config, network), "--ranks",
                    ",".join(map(str, ranks)), "--shared-cores", str(cores), "--output", out],
                   check=True, env=dict(os.environ, **MPI_ENV), capture_output=True)
    return json.load(open(out))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=40, help="steps of each measured run")
    p.add_argument("--ranks", default="1,2,3,4")
    p.add_argument("--cores", type=int, default=os.cpu_count())
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--networks", default=",".join(NETWORKS))
    p.add_argument("--out", default="validate_predict", help="folder for the predictions' JSON")
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args()
    ranks = [int(r) for r in a.ranks.split(",")]
    os.makedirs(a.out, exist_ok=True)
    errors = []
    print(f"{'model':10} {'network':10} {'ranks':>5} {'predicted':>10} {'measured':>10} {'error':>7}")
    for model in a.models.split(","):
        for name in a.networks.split(","):
            network = NETWORKS[name]
            out = os.path.join(a.out, f"{model}-{name.replace('/', '-')}.json")
            predictions, runs = [], {r: [] for r in ranks}
            for _ in range(a.repeats):
                predictions.append(predict(MODELS[model], network, ranks, a.cores, out))
                for r in ranks:
                    runs[r].append(measure(MODELS[model], network, r, a.steps))
            # The prediction whose one-rank throughput is the median one.
            predictions.sort(key=lambda p: p["points"][0]["samples_per_second"])
            prediction = predictions[len(predictions) // 2]
            measured = []
            for point in prediction["points"]:
                m = statistics.median(runs[point["ranks"]])
                measured.append({"ranks": point["ranks"], "samples_per_second": m})
                error = (point["samples_per_second"] - m) / m
                errors.append(abs(error))
                print(f"{model:10} {name:10} {point['ranks']:5d} {point['samples_per_second']:10.0f} "
                      f"{m:10.0f} {100 * error:+6.1f}%", flush=True)
            one = measured[0]["samples_per_second"]
            for m in measured:
                m["speedup"] = m["samples_per_second"] / one
                m["efficiency"] = m["speedup"] / m["ranks"]
            prediction["measured"] = measured
            json.dump(prediction, open(out, "w"), indent=2)
    print(f"absolute error: median {100 * statistics.median(errors):.1f}%, "
          f"worst {100 * max(errors):.1f}% over {len(errors)} points")


if __name__ == "__main__":
    main()
