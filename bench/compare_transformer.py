#!/usr/bin/python3
"""dtnn's sequence models beside PyTorch (bench/torch_transformer.py), alternating runs on one machine.

  bench/compare_transformer.py lm [--steps 60] [--repeats 3]
      configs/fortunes_char_lm.json (transformer_lm on the fortunes text, batch 32, context 128,
      Adam) against the same model in PyTorch: training tokens/s, steady state.
  bench/compare_transformer.py attention [--seqs 128,512] [--repeats 3]
      the multi_head_attention layer's forward + backward (bench/attention_bench) against
      nn.MultiheadAttention's, width 128, 4 heads, 4096 tokens per batch, causal and not.
  bench/compare_transformer.py lm --gpu [--text DIR] [--build .gpu]
      the same on one NVIDIA GPU, both sides (dtnn's --enable-gpu, PyTorch's cuda; float32, TF32
      off); --text where the fortunes text is on that machine (scripts/gpu-bundle.sh packs it).
  bench/compare_transformer.py lm --precision bf16
      dtnn's training.precision bf16 against PyTorch inside torch.autocast("cpu", torch.bfloat16).
  bench/compare_transformer.py quality --steps 538
      both trained the same number of steps (538: one epoch at batch 32), then the validation and
      test loss in bits per character and the training time of each.

Medians over --repeats alternations and the median of the paired ratios (each dtnn run over the
PyTorch run right after it). Each PyTorch is a Python that imports it (`--peer-python`, repeatable;
default: Debian's /usr/bin/python3 and PyPI's /opt/dtnn-torch, which scripts/install-deps.sh
--bench sets up); `--pin CPUS` runs every side on the same cores; `--isa avx2` caps both sides'
instruction set as bench/compare_torch.py's does.
"""
import argparse, json, math, os, pathlib, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_torch import ISA_HELP, cap_isa  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
PEER = ROOT / "bench" / "torch_transformer.py"
CONFIG = ROOT / "configs" / "fortunes_char_lm.json"


def pinned(a, cmd):
    return ["taskset", "-c", a.pin, *cmd] if a.pin else cmd


def last_json(out):
    return json.loads([l for l in out.splitlines() if l.startswith("JSON ")][-1][5:])


def dtnn_lm(a, env, evaluate=False):
    with tempfile.NamedTemporaryFile(suffix=".json") as h:
        cmd = [str(a.build / "bin" / "dtnn"), "run", str(CONFIG), "--steps-per-epoch", str(a.steps),
               "--set", "output.progress=\"none\"", "--history", h.name,
               "--set", "training.evaluate=%s" % ("true" if evaluate else "false")]
        if a.gpu:
            cmd += ["--enable-gpu", "true"]
        if a.precision != "fp32":
            cmd += ["--set", f'training.precision="{a.precision}"']
        if a.text:
            cmd += ["--dataset-path", a.text]
        if not evaluate:
            cmd += ["--validation-split", "0"]
        done = subprocess.run(pinned(a, cmd), env=env, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"compare: {' '.join(cmd)} failed:\n{done.stderr}")
        hist = json.load(open(h.name))
    out = dict(tokens_per_s=hist["train_samples_per_second"] * 128, train_seconds=hist["train_seconds"])
    if evaluate:
        out["validation_bits_per_char"] = hist["epochs"][-1]["val_loss"] / math.log(2)
        out["test_bits_per_char"] = hist["test"]["loss"] / math.log(2)
    return out


def torch_lm(a, env, python, evaluate=False):
    # Lower precision: the peer's run inside torch.autocast (bench/torch_autocast.py).
    autocast = {"bf16": "bfloat16", "fp16": "float16"}.get(a.precision)
    wrapper = [str(ROOT / "bench" / "torch_autocast.py"), "--dtype", autocast] if autocast else []
    cmd = [python, *wrapper, str(PEER), "lm", "--steps", str(a.steps), "--threads", str(a.threads)]
    if a.gpu:
        cmd += ["--device", "cuda"]
    if a.text:
        cmd += ["--path", a.text]
    if evaluate:
        cmd.append("--evaluate")
    return last_json(subprocess.run(pinned(a, cmd), env=env, check=True, capture_output=True,
                                    text=True).stdout)


def attention(a, env, which, seq, causal):
    """which: "dtnn", or the Python of a PyTorch."""
    args = ["--seq", str(seq), "--batch", str(max(1, 4096 // seq))] + (["--causal"] if causal else [])
    cmd = ([str(a.build / "bin" / "attention_bench"), "--kernel", a.attention_kernel]
           if which == "dtnn" else [which, str(PEER), "attention", "--threads", str(a.threads)]) + args
    return last_json(subprocess.run(pinned(a, cmd), env=env, check=True, capture_output=True,
                                    text=True).stdout)


def torch_version(python):
    return subprocess.run([python, "-c", "import torch; print(torch.__version__)"], check=True,
                          capture_output=True, text=True).stdout.strip()


def compare(name, a, dtnn_run, torch_run):
    """torch_run(python): one run of the peer under that Python's PyTorch."""
    d, t = [], [[] for _ in a.pythons]
    for r in range(a.repeats):
        d.append(dtnn_run()["tokens_per_s"])
        line = f"  repeat {r + 1}: dtnn {d[-1]:,.0f} tokens/s"
        for runs, python, version in zip(t, a.pythons, a.versions):
            runs.append(torch_run(python)["tokens_per_s"])
            line += f"   pytorch {version} {runs[-1]:,.0f} tokens/s"
        print(line, flush=True)
    dm = statistics.median(d)
    peers = []
    for runs, version in zip(t, a.versions):
        tm = statistics.median(runs)
        paired = statistics.median(x / y for x, y in zip(d, runs))
        print(f"{name}: dtnn {dm:,.0f} tokens/s, pytorch {version} {tm:,.0f} tokens/s, ratio of "
              f"medians {dm / tm:.2f}x, median paired ratio {paired:.2f}x", flush=True)
        peers.append(dict(torch=version, pytorch=runs, ratio=round(dm / tm, 3),
                          paired_ratio=round(paired, 3)))
    print("JSON " + json.dumps(dict(case=name, dtnn=d, pin=a.pin, peers=peers)), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["lm", "attention", "quality"])
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seqs", default="128,512")
    p.add_argument("--attention-kernel", default="auto", choices=["auto", "stored", "fused"],
                   help="multi_head_attention's \"kernel\" in attention mode (dtnn's side)")
    p.add_argument("--build", type=pathlib.Path, default=ROOT / "build")
    p.add_argument("--peer-python", action="append", default=None,
                   help="a Python that imports the PyTorch to compare with (repeatable)")
    p.add_argument("--pin", default=None, help="cores for every run, as taskset -c takes them")
    p.add_argument("--gpu", action="store_true", help="lm on one NVIDIA GPU, both sides")
    p.add_argument("--precision", choices=["fp32", "bf16", "fp16"], default="fp32",
                   help="lm, quality: dtnn's training.precision, the peer inside torch.autocast on the CPU")
    p.add_argument("--text", default=None, help="the fortunes text's folder (default: the config's)")
    p.add_argument("--isa", default=None, choices=["portable", "avx2", "avx512"], help=ISA_HELP)
    a = p.parse_args()
    a.pythons = a.peer_python or [p for p in ("/usr/bin/python3", "/opt/dtnn-torch/bin/python3")
                                  if pathlib.Path(p).exists()]
    a.versions = [torch_version(python) for python in a.pythons]
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    torch_env = dict(env)
    cap_isa(a.isa, env, torch_env)
    capped = f", both capped at {a.isa}" if a.isa else ""
    if a.mode == "lm":
        compare(f"transformer_lm training, batch 32 x 128 tokens, {a.steps} steps"
                f"{' on the GPU' if a.gpu else ''}{capped}", a,
                lambda: dtnn_lm(a, env), lambda python: torch_lm(a, torch_env, python))
    elif a.mode == "attention":
        for seq in (int(s) for s in a.seqs.split(",")):
            for causal in (True, False):
                compare(f"attention forward+backward, T={seq}, batch {4096 // seq}, width 128, 4 heads"
                        f"{', causal' if causal else ''}{capped}", a,
                        lambda: attention(a, env, "dtnn", seq, causal),
                        lambda python: attention(a, torch_env, python, seq, causal))
    else:
        d, t = dtnn_lm(a, env, evaluate=True), torch_lm(a, torch_env, a.pythons[-1], evaluate=True)
        for name, r in (("dtnn", d), ("pytorch", t)):
            print(f"{name}: {a.steps} steps in {r['train_seconds']:.1f} s, {r['tokens_per_s']:,.0f} tokens/s; "
                  f"validation {r['validation_bits_per_char']:.3f} bits/char, test {r['test_bits_per_char']:.3f}")
        print("JSON " + json.dumps(dict(steps=a.steps, dtnn=d, pytorch=t)))


if __name__ == "__main__":
    main()
