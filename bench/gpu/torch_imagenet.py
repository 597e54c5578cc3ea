#!/usr/bin/env python3
"""The PyTorch peer of bench/gpu: training throughput of torchvision's VGG-16 or ResNet-50 (the
models of configs/models/vgg16_imagenet.json and resnet50_imagenet.json) on a GPU, or with
--device cpu on the CPU (bench/scale_of_step.py: memory and start-up beside dtnn's).

The work of a step is dtnn's: a batch of synthetic 224x224x3 images copied from pinned host memory,
forward, cross-entropy, backward, SGD with momentum 0.9, and the batch's accuracy brought back to
the host (dtnn's metrics read the predictions every step). float32, NCHW, cuDNN's algorithm search
on (torch.backends.cudnn.benchmark, as dtnn's gpu.cudnn_auto_conv_alg); TF32 only with --tf32.

  python3 bench/gpu/torch_imagenet.py --model resnet50_imagenet --batch 64 --steps 30 --repeats 3
Prints the samples/s of each repeat and a final `JSON {...}` line with their median, the seconds
from the process's start to the first step (import and model build included) and the peak
resident memory.
"""
import argparse, json, os, resource, statistics, time

import torch
import torchvision

MODELS = {"vgg16_imagenet": torchvision.models.vgg16, "resnet50_imagenet": torchvision.models.resnet50}


def process_age_seconds():
    """Seconds since this process started, as dtnn's history counts them (/proc)."""
    with open("/proc/self/stat") as f:
        start_ticks = float(f.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/uptime") as f:
        uptime = float(f.read().split()[0])
    return uptime - start_ticks / os.sysconf("SC_CLK_TCK")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=sorted(MODELS), default="vgg16_imagenet")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=30, help="timed steps per repeat")
    p.add_argument("--warmup", type=int, default=10, help="untimed steps first")
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--tf32", action="store_true", help="TF32 tensor-core math for float32")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--threads", type=int, default=0, help="CPU threads (0: PyTorch's default)")
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.backends.cuda.matmul.allow_tf32 = a.tf32
    torch.backends.cudnn.allow_tf32 = a.tf32
    torch.backends.cudnn.benchmark = True
    device = torch.device(a.device)
    on_gpu = a.device == "cuda"
    model = MODELS[a.model](num_classes=1000).to(device).train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    batches = 4
    x_host = torch.randn(batches * a.batch, 3, 224, 224)
    y_host = torch.randint(0, 1000, (batches * a.batch,))
    if on_gpu:
        x_host, y_host = x_host.pin_memory(), y_host.pin_memory()

    def step(i):
        lo = (i % batches) * a.batch
        x = x_host[lo:lo + a.batch].to(device, non_blocking=True)
        y = y_host[lo:lo + a.batch].to(device, non_blocking=True)
        out = model(x)
        loss = loss_fn(out, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return (out.argmax(1) == y).sum().item()

    def synchronize():
        if on_gpu:
            torch.cuda.synchronize()

    first_step = process_age_seconds()
    for i in range(a.warmup):
        step(i)
    synchronize()
    rates = []
    for _ in range(a.repeats):
        t0 = time.perf_counter()
        for i in range(a.steps):
            step(i)
        synchronize()
        rates.append(a.steps * a.batch / (time.perf_counter() - t0))
    print("samples/s per repeat:", " ".join(f"{r:.0f}" for r in rates))
    print("JSON " + json.dumps({"model": a.model, "batch_size": a.batch, "samples_per_second": statistics.median(rates),
                                "tf32": a.tf32, "device": a.device,
                                "gpu": torch.cuda.get_device_name() if on_gpu else "",
                                "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                                "repeats": a.repeats, "steps": a.steps,
                                "seconds_to_first_step": first_step,
                                "max_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))


if __name__ == "__main__":
    main()
