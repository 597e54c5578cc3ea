#!/usr/bin/python3
"""Training throughput of dtnn beside the PyTorch peer (../shared/peers/torch_peer.py).

Runs `dtnn run` and torch_peer.py alternately on the same model, data, batch size, optimizer and
thread count, `--repeats` times each, and prints both steady-state throughputs (samples/s, the first
5 batches of a run excluded, evaluation excluded), their medians and the ratio of the medians, and
the median of the paired ratios (each dtnn run over the PyTorch run right after it: the pair shares
the machine's state of the moment, which on a shared host drifts by tens of percent over minutes).
Each PyTorch is a Python that imports it (`--peer-python`, repeatable): by default Debian's
(/usr/bin/python3, PyTorch 1.13) and the current one from PyPI in /opt/dtnn-torch, where
`scripts/install-deps.sh --bench` puts them; each gets its own ratio. `--pin CPUS` runs every side
on the same cores (taskset), so that the shared machine's other load moves the ratio less.

  bench/compare_torch.py --model simplecnn --threads 2 --epochs 1 --repeats 3
  bench/compare_torch.py --model vgg_small --repeats 3     (dtnn with conv.algorithm best_of)
  bench/compare_torch.py --model resnet20 --steps 40 --repeats 3   (the peer's resnet_small)
  bench/compare_torch.py --model resnet20 --precision bf16   (dtnn's training.precision bf16 beside
                                                              torch.autocast("cpu", dtype=torch.bfloat16))
"""
import argparse, json, os, pathlib, statistics, subprocess, sys, tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
CONFIGS = {"simplecnn": "configs/fashion_mnist_simplecnn.json", "simplemlp": "configs/fashion_mnist_simplemlp.json",
           "vgg_small": "configs/synthetic_vgg_small.json", "resnet20": "configs/synthetic_resnet20.json"}
# The peer's name where it differs (its resnet_small is ResNet-20 with projection shortcuts).
PEER_MODELS = {"resnet20": "resnet_small"}
# The peer's dataset for each model (vgg_small: random 32x32x3 tensors, as dtnn's synthetic dataset).
DATASETS = {"simplecnn": ["fashion-mnist"], "simplemlp": ["fashion-mnist"],
            "vgg_small": ["synthetic", "--synthetic-samples", "8192"],
            "resnet20": ["synthetic", "--synthetic-samples", "8192"]}


ISA_HELP = ("cap both at an instruction set, to compare on a lesser CPU's code paths: dtnn's DTNN_ISA "
            "(portable, avx2) and PyTorch's ATEN_CPU_CAPABILITY / ONEDNN_MAX_CPU_ISA")


def cap_isa(isa, dtnn_env, torch_env):
    """Both sides capped at instruction set `isa` (None: each runs its best)."""
    if not isa:
        return
    dtnn_env["DTNN_ISA"] = isa
    onednn = {"avx2": "AVX2", "portable": "SSE41", "avx512": "AVX512_CORE"}[isa]
    torch_env.update(ATEN_CPU_CAPABILITY={"avx2": "avx2", "portable": "default"}.get(isa, isa),
                     ONEDNN_MAX_CPU_ISA=onednn, DNNL_MAX_CPU_ISA=onednn)


def find_peer(explicit):
    for p in [explicit, ROOT.parent / "shared/peers/torch_peer.py", ROOT / "../shared/peers/torch_peer.py"]:
        if p and pathlib.Path(p).is_file():
            return pathlib.Path(p).resolve()
    sys.exit("compare_torch.py: cannot find torch_peer.py; pass --peer PATH")


def pinned(a, cmd):
    pin = getattr(a, "pin", None)  # (compare_builds.py passes its own arguments)
    return ["taskset", "-c", pin, *cmd] if pin else cmd


def torch_version(python):
    done = subprocess.run([python, "-c", "import torch; print(torch.__version__)"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"compare: {python} cannot import torch:\n{done.stderr}")
    return done.stdout.strip()


def run_dtnn(a, env, dtnn=None):
    """Steady-state samples/s of one `dtnn run` of a.model (dtnn: the binary, build/bin/dtnn by default)."""
    with tempfile.NamedTemporaryFile(suffix=".json") as h:
        cmd = [str(dtnn or a.dtnn), "run", str(ROOT / CONFIGS[a.model]), "--num-epochs", str(a.epochs),
               "--batch-size", str(a.batch_size), "--evaluate", "false", "--validation-split", "0",
               "--set", "output.progress=\"none\"", "--history", h.name]
        if a.steps:
            cmd += ["--steps-per-epoch", str(a.steps)]
        if getattr(a, "precision", "fp32") != "fp32":
            cmd += ["--set", f'training.precision="{a.precision}"']
        done = subprocess.run(pinned(a, cmd), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
        if done.returncode != 0:  # best_of's choices and other notes go to stderr: shown only on failure
            sys.exit(f"compare: {' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
        return json.load(open(h.name))["train_samples_per_second"]


def run_torch(a, peer, env, python="/usr/bin/python3"):
    # Lower precision: the peer's run inside torch.autocast (bench/torch_autocast.py).
    autocast = {"bf16": "bfloat16", "fp16": "float16"}.get(getattr(a, "precision", "fp32"))
    wrapper = [str(ROOT / "bench/torch_autocast.py"), "--dtype", autocast] if autocast else []
    cmd = [python, *wrapper, str(peer), "--model", PEER_MODELS.get(a.model, a.model), "--dataset", *DATASETS[a.model], "--threads", str(a.threads),
           "--epochs", str(a.epochs), "--batch-size", str(a.batch_size), "--optimizer", "adam", "--lr", "1e-3"]
    if a.steps:
        cmd += ["--steps", str(a.steps * a.epochs)]
    out = subprocess.run(pinned(a, cmd), check=True, env=env, capture_output=True, text=True).stdout
    line = [l for l in out.splitlines() if l.startswith("JSON ")][-1]
    return json.loads(line[5:])["samples_per_s"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=sorted(CONFIGS), default="simplecnn")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--steps", type=int, default=0, help="batches per epoch (0: the whole epoch)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--peer", default=None, help="path of torch_peer.py")
    p.add_argument("--peer-python", action="append", default=None,
                   help="a Python that imports the PyTorch to compare with (repeatable; default: "
                        "/usr/bin/python3 and /opt/dtnn-torch/bin/python3 where present)")
    p.add_argument("--precision", choices=["fp32", "bf16", "fp16"], default="fp32",
                   help="dtnn's training.precision, and the peer inside torch.autocast(\"cpu\", dtype) "
                        "(bench/torch_autocast.py); docs/precision.md")
    p.add_argument("--pin", default=None, help="cores for every run, as taskset -c takes them (e.g. 1)")
    p.add_argument("--dtnn", default=str(ROOT / "build/bin/dtnn"), help="the dtnn binary (default: build/bin/dtnn)")
    p.add_argument("--isa", default=None, choices=["portable", "avx2", "avx512"], help=ISA_HELP)
    p.add_argument("--peer-blis-arch-type", default=None,
                   help="BLIS_ARCH_TYPE for the PyTorch runs (the peer README's command uses 0; unset by "
                        "default: on CPUs BLIS recognises, 0 makes PyTorch slower)")
    a = p.parse_args()
    peer = find_peer(a.peer)
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    torch_env = dict(env)
    if a.peer_blis_arch_type is not None:
        torch_env["BLIS_ARCH_TYPE"] = a.peer_blis_arch_type
    cap_isa(a.isa, env, torch_env)
    if '"best_of"' in (ROOT / CONFIGS[a.model]).read_text():
        # best_of tunes for 10 rounds of every candidate (40 steps with four) and caches its
        # choices per machine; one untimed run fills the cache, as a user's first run would.
        tune = argparse.Namespace(**vars(a))
        tune.steps, tune.epochs = 60, 1
        print(f"tuning run: {run_dtnn(tune, env):,.0f} samples/s (best_of choosing; not counted)", flush=True)
    pythons = a.peer_python or [p for p in ("/usr/bin/python3", "/opt/dtnn-torch/bin/python3")
                                if pathlib.Path(p).exists()]
    versions = [torch_version(python) for python in pythons]
    dtnn_runs, torch_runs = [], [[] for _ in pythons]
    for r in range(a.repeats):
        dtnn_runs.append(run_dtnn(a, env))
        line = f"repeat {r + 1}: dtnn {dtnn_runs[-1]:,.0f} samples/s"
        for runs, python, version in zip(torch_runs, pythons, versions):
            runs.append(run_torch(a, peer, torch_env, python))
            line += f"   pytorch {version} {runs[-1]:,.0f} samples/s"
        print(line, flush=True)
    d = statistics.median(dtnn_runs)
    peers = []
    for runs, python, version in zip(torch_runs, pythons, versions):
        t = statistics.median(runs)
        paired = statistics.median(x / y for x, y in zip(dtnn_runs, runs))
        print(f"{a.model} {a.precision}, batch {a.batch_size}, {a.threads} threads{', cores ' + a.pin if a.pin else ''}, "
              f"median of {a.repeats}: dtnn {d:,.0f} samples/s, pytorch {version} {t:,.0f} samples/s, "
              f"ratio {d / t:.2f}x (median of the paired ratios, each dtnn run over the PyTorch run "
              f"after it: {paired:.2f}x)")
        peers.append(dict(python=python, torch=version, pytorch=runs, pytorch_median=t,
                          ratio=round(d / t, 3), paired_ratio=round(paired, 3)))
    print("JSON " + json.dumps(dict(model=a.model, precision=a.precision, threads=a.threads, batch_size=a.batch_size, epochs=a.epochs, isa=a.isa,
                                    peer_blis_arch_type=a.peer_blis_arch_type, pin=a.pin,
                                    steps=a.steps, repeats=a.repeats, dtnn=dtnn_runs, dtnn_median=d,
                                    peers=peers)))


if __name__ == "__main__":
    main()
