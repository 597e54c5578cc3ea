#!/usr/bin/python3
"""Training throughput of two dtnn builds (or two instruction-set ceilings of one), alternately.

Runs `dtnn run` of each model as bench/compare_torch.py does (same configs, steady state, evaluation
excluded), the baseline and then the candidate, `--repeats` times, and prints the medians, their
ratio (candidate / baseline) and the median of the paired ratios. The question it answers: is the
default build, which runs on any x86-64-v2 CPU and picks its plugins' instruction set at start-up,
as fast as a build for this machine alone?

  cmake -S . -B build-native -G Ninja -DDTNN_NATIVE=ON && cmake --build build-native
  bench/compare_builds.py --baseline build-native/bin/dtnn --candidate build/bin/dtnn
  bench/compare_builds.py --baseline build/bin/dtnn --candidate build/bin/dtnn \\
      --candidate-env DTNN_ISA=avx2          (one build, two levels)
"""
import argparse, json, os, statistics, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_torch import CONFIGS, run_dtnn  # noqa: E402


def env_with(assignments, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    for a in assignments:
        key, _, value = a.partition("=")
        env[key] = value
    return env


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--baseline", required=True, help="dtnn binary of the baseline")
    p.add_argument("--candidate", required=True, help="dtnn binary of the candidate")
    p.add_argument("--baseline-env", action="append", default=[], help="KEY=VALUE for the baseline's runs")
    p.add_argument("--candidate-env", action="append", default=[], help="KEY=VALUE for the candidate's runs")
    p.add_argument("--models", default="simplecnn,simplemlp,resnet20,vgg_small")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--precision", choices=["fp32", "bf16", "fp16"], default="fp32",
                   help="training.precision of both builds' runs")
    p.add_argument("--steps", type=int, default=0,
                   help="batches per run (0: 400 for simplecnn/simplemlp, 40 for the others)")
    a = p.parse_args()
    results = []
    for model in a.models.split(","):
        if model not in CONFIGS:
            sys.exit(f"compare_builds.py: unknown model '{model}'; expected one of {', '.join(sorted(CONFIGS))}")
        run = argparse.Namespace(model=model, epochs=1, batch_size=a.batch_size,
                                 steps=a.steps or (400 if model.startswith("simple") else 40))
        sides = [("baseline", a.baseline, env_with(a.baseline_env, a.threads)),
                 ("candidate", a.candidate, env_with(a.candidate_env, a.threads))]
        if '"best_of"' in open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                            CONFIGS[model])).read():
            for _, dtnn, env in sides:  # best_of's first run tunes and fills its cache
                run_dtnn(argparse.Namespace(**dict(vars(run), steps=60)), env, dtnn)
        runs = {"baseline": [], "candidate": []}
        for r in range(a.repeats):
            for name, dtnn, env in sides:
                runs[name].append(run_dtnn(run, env, dtnn))
            print(f"{model} repeat {r + 1}: baseline {runs['baseline'][-1]:,.0f}  candidate "
                  f"{runs['candidate'][-1]:,.0f} samples/s", flush=True)
        b, c = statistics.median(runs["baseline"]), statistics.median(runs["candidate"])
        paired = statistics.median(y / x for x, y in zip(runs["baseline"], runs["candidate"]))
        print(f"{model}: median baseline {b:,.0f}, candidate {c:,.0f} samples/s, candidate/baseline "
              f"{c / b:.3f}x (paired {paired:.3f}x)", flush=True)
        results.append(dict(model=model, baseline=runs["baseline"], candidate=runs["candidate"],
                            ratio=round(c / b, 3), paired_ratio=round(paired, 3)))
    print("JSON " + json.dumps(dict(baseline=a.baseline, candidate=a.candidate, baseline_env=a.baseline_env,
                                    candidate_env=a.candidate_env, threads=a.threads, precision=a.precision,
                                    batch_size=a.batch_size, repeats=a.repeats, results=results)))


if __name__ == "__main__":
    main()
