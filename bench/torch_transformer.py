#!/usr/bin/python3
"""The PyTorch peer of dtnn's sequence models (Debian's python3-torch 1.13; run with /usr/bin/python3).

  torch_transformer.py lm [--steps N] [--threads 2] [--batch-size 32] [--context 128] [--device cuda]
      configs/models/transformer_lm.json in PyTorch on the text dtnn's configs/fortunes_char_lm.json
      reads: the same files, characters, windows, splits, initialisation scheme, Adam and batch.
      Prints training tokens/s (steady state: the first 5 steps excluded) and, with --evaluate, the
      validation and test loss in bits per character, as a final `JSON {...}` line.
  torch_transformer.py attention --seq 128 [--batch 32 --dim 128 --heads 4 --causal]
      nn.MultiheadAttention forward + backward (self-attention, batch_first), median ms and tokens/s.

The model, as dtnn builds it: token embedding N(0, 1), learned positions N(0, 1), 4 pre-norm blocks
(LayerNorm, 4-head causal attention, residual; LayerNorm, Linear 512, GELU (tanh), Linear 128,
residual), LayerNorm, Linear to the vocabulary, log-softmax, NLL loss. Linear and attention
projections Glorot-uniform with fans (in, out) of each projection, biases zero.
"""
import argparse, fnmatch, json, math, os, statistics, sys, time

import torch
import torch.nn as nn
import torch.nn.functional as F


def read_text(path, exclude):
    """The text dataset's files: a folder's regular files (links skipped), name order."""
    if os.path.isfile(path):
        files = [path]
    else:
        files = sorted(os.path.join(path, n) for n in os.listdir(path)
                       if not os.path.islink(os.path.join(path, n)) and os.path.isfile(os.path.join(path, n))
                       and not (exclude and fnmatch.fnmatch(n, exclude)))
    return "".join(open(f, encoding="utf-8").read() for f in files)


def windows(text, context, test_every=10, validation_split=0.05):
    alphabet = sorted(set(text))
    index = {c: i for i, c in enumerate(alphabet)}
    ids = torch.tensor([index[c] for c in text], dtype=torch.long)
    count = (len(ids) - 1) // context
    train = [w for w in range(count) if w % test_every != test_every - 1]
    test = [w for w in range(count) if w % test_every == test_every - 1]
    held = int(math.floor(len(train) * validation_split))
    return alphabet, ids, train[:len(train) - held], train[len(train) - held:], test


def glorot_(w, fan_in, fan_out):
    bound = math.sqrt(6.0 / (fan_in + fan_out))
    with torch.no_grad():
        w.uniform_(-bound, bound)


class Block(nn.Module):
    def __init__(self, d, heads, ff):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.fc1, self.fc2 = nn.Linear(d, ff), nn.Linear(ff, d)
        for i in range(3):
            glorot_(self.attn.in_proj_weight[i * d:(i + 1) * d], d, d)
        nn.init.zeros_(self.attn.in_proj_bias)
        glorot_(self.attn.out_proj.weight, d, d)
        nn.init.zeros_(self.attn.out_proj.bias)
        for fc in (self.fc1, self.fc2):
            glorot_(fc.weight, fc.in_features, fc.out_features)
            nn.init.zeros_(fc.bias)

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))


class LM(nn.Module):
    def __init__(self, vocab, context, d=128, heads=4, ff=512, layers=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)  # N(0, 1)
        self.pos = nn.Parameter(torch.randn(context, d))
        self.blocks = nn.ModuleList(Block(d, heads, ff) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)
        glorot_(self.head.weight, d, vocab)
        nn.init.zeros_(self.head.bias)
        self.register_buffer("mask", torch.triu(torch.full((context, context), float("-inf")), 1))

    def forward(self, x):
        h = self.embed(x) + self.pos
        for b in self.blocks:
            h = b(h, self.mask)
        return F.log_softmax(self.head(self.ln(h)), dim=-1)


def batch_of(ids, wins, context):
    idx = (torch.tensor(wins).unsqueeze(1) * context + torch.arange(context + 1)).to(ids.device)
    w = ids[idx]
    return w[:, :-1], w[:, 1:]


def evaluate(model, ids, wins, context, batch):
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(wins), batch):
            x, y = batch_of(ids, wins[i:i + batch], context)
            total += F.nll_loss(model(x).reshape(-1, model.head.out_features), y.reshape(-1), reduction="sum").item()
            count += y.numel()
    model.train()
    return total / count / math.log(2)  # bits per character


def lm(a):
    text = read_text(a.path, a.exclude)
    alphabet, ids, train, val, test = windows(text, a.context)
    torch.manual_seed(a.seed)
    device = torch.device(a.device)
    model = LM(len(alphabet), a.context).to(device)
    ids = ids.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    g = torch.Generator().manual_seed(a.seed)
    steps = a.steps or len(train) // a.batch_size
    order, times, start = [], [], time.perf_counter()
    for s in range(steps):
        if not order:
            order = [train[i] for i in torch.randperm(len(train), generator=g).tolist()]
        wins, order = order[:a.batch_size], order[a.batch_size:]
        x, y = batch_of(ids, wins, a.context)
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = F.nll_loss(model(x).reshape(-1, len(alphabet)), y.reshape(-1))
        loss.backward()
        opt.step()
        if device.type == "cuda":
            torch.cuda.synchronize()  # the step's work done, as dtnn waits for its loss
        times.append(time.perf_counter() - t0)
    train_s = time.perf_counter() - start
    steady = times[5:] or times
    out = dict(model="transformer_lm", vocabulary=len(alphabet), train_windows=len(train), steps=steps,
               batch_size=a.batch_size, context=a.context, threads=torch.get_num_threads(),
               tokens_per_s=a.batch_size * a.context * len(steady) / sum(steady), train_seconds=train_s,
               final_loss=loss.item())
    if a.evaluate:
        out.update(validation_bits_per_char=evaluate(model, ids, val, a.context, 64),
                   test_bits_per_char=evaluate(model, ids, test, a.context, 64))
    print("JSON " + json.dumps(out))


def attention(a):
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(a.dim, a.heads, batch_first=True)
    x = torch.randn(a.batch, a.seq, a.dim, requires_grad=True)
    mask = torch.triu(torch.full((a.seq, a.seq), float("-inf")), 1) if a.causal else None
    g = torch.randn(a.batch, a.seq, a.dim)
    times = []
    for r in range(a.warmup + a.repeats):
        t0 = time.perf_counter()
        y = mha(x, x, x, attn_mask=mask, need_weights=False)[0]
        y.backward(g)
        if r >= a.warmup:
            times.append(time.perf_counter() - t0)
    ms = 1e3 * statistics.median(times)
    print("JSON " + json.dumps(dict(seq=a.seq, batch=a.batch, dim=a.dim, heads=a.heads, causal=a.causal,
                                    threads=torch.get_num_threads(), ms=ms,
                                    tokens_per_s=a.batch * a.seq / (ms / 1e3))))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["lm", "attention"])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--path", default="/usr/share/games/fortunes")
    p.add_argument("--exclude", default="*.dat")
    p.add_argument("--context", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--steps", type=int, default=0, help="training steps (0: one epoch)")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", default="cpu", help="cpu, or cuda (one NVIDIA GPU; TF32 off)")
    p.add_argument("--evaluate", action="store_true")
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--causal", action="store_true")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeats", type=int, default=10)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.backends.cuda.matmul.allow_tf32 = False  # float32 on the GPU, as dtnn's default
    torch.backends.cudnn.allow_tf32 = False
    lm(a) if a.mode == "lm" else attention(a)


if __name__ == "__main__":
    main()
