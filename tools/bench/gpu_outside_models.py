#!/usr/bin/env python3
"""Runs networks of the kinds that used to stop the GPU plugins, each on one GPU target alone, and
checks them against ONNX Runtime on the same file and input.

The networks are exported here with torch (and timm where installed), the way users export them,
none kept in the repository: an FPN-like neck with nearest upsampling and SiLU (YOLO's),
torchvision's ViT-B/16 at opset 13 (LayerNorm decomposed into ReduceMean, Pow, Sqrt) and
MobileNet-V3-Small; with timm, LeViT-128S (means over channels, BatchNorm on rank-2/3 tensors),
MobileViT-v2-0.5 (GroupNorm exported as InstanceNormalization) and HRNet-W18-small (nearest
upsampling in every fuse layer).

For each (network, target) it prints the nodes the target ran out of all, the largest
|tessera - ort| relative to max |ort|, and the median latency of `tessera run` beside ONNX
Runtime's CPU provider (and PyTorch eager CUDA where torch sees a GPU), all from this run.

Usage: gpu_outside_models.py --tessera BIN [--targets mali:any,adreno:any] [--repeat 20]
                             [--workdir DIR] [--models NAME,...] [--torchvision NAME,...]
Exit 1 when a run fails or an output differs by more than 1e-3 of max |ref|.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from bench_util import median_ms, ort_cpu_session, torch_cuda_ms


def fpn_nearest(torch):
    class Fpn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Conv2d(3, 16, 3, 2, 1)
            self.b = torch.nn.Conv2d(16, 32, 3, 2, 1)
            self.up = torch.nn.Upsample(scale_factor=2, mode="nearest")
            self.c = torch.nn.Conv2d(48, 16, 3, 1, 1)

        def forward(self, x):
            a = torch.nn.functional.silu(self.a(x))
            b = torch.nn.functional.silu(self.b(a))
            return self.c(torch.cat([self.up(b), a], 1))

    return Fpn(), 160


def networks(torch, torchvision_names=()):
    import torchvision

    out = {name: (lambda n=name: (getattr(torchvision.models, n)(), 224))
           for name in torchvision_names}
    out.update({
        "fpn_nearest": lambda: fpn_nearest(torch),
        "vit_b_16_op13": lambda: (torchvision.models.vit_b_16(), 224),
        "mobilenet_v3_small": lambda: (torchvision.models.mobilenet_v3_small(), 224),
    })
    try:
        import timm

        for name, size in (("levit_128s", 224), ("mobilevitv2_050", 256),
                           ("hrnet_w18_small", 224)):
            out[name] = (lambda n=name, s=size: (timm.create_model(n, pretrained=False), s))
    except ImportError:
        pass
    return out


def export(torch, make, path):
    model, size = make()
    model.eval()
    x = torch.randn(1, 3, size, size)
    with torch.no_grad():
        torch.onnx.export(model, x, path, opset_version=13, input_names=["x"],
                          output_names=["y"])
    return model, size


def cuda_ms(torch, model, size, repeat):
    if not torch.cuda.is_available():
        return None
    x = torch.randn(1, 3, size, size, device="cuda")
    return torch_cuda_ms(torch, model.cuda(), x, repeat, warmup=3)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--targets", default="mali:any,adreno:any")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--workdir")
    ap.add_argument("--models", default="")
    ap.add_argument("--torchvision", default="",
                    help="also these torchvision classifiers (e.g. resnet18,mobilenet_v2)")
    args = ap.parse_args()
    import torch

    work = args.workdir or tempfile.mkdtemp(prefix="gpu-outside-")
    os.makedirs(work, exist_ok=True)
    extra = [n for n in args.torchvision.split(",") if n]
    nets = networks(torch, extra)
    wanted = args.models.split(",") if args.models else list(nets)
    names = [n for n in wanted + extra if n in nets and n not in extra] + extra
    names = list(dict.fromkeys(names))
    print("| network | target | nodes on target | max error / max ref | tessera ms | "
          "ORT CPU ms | torch CUDA ms |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    failed = False
    for name in names:
        path = os.path.join(work, name + ".onnx")
        model, size = export(torch, nets[name], path)
        x = np.random.RandomState(0).rand(1, 3, size, size).astype(np.float32)
        np.save(os.path.join(work, name + ".x.npy"), x)
        session = ort_cpu_session(path)
        ref = session.run(None, {"x": x})
        ort_ms = median_ms(lambda: session.run(None, {"x": x}), args.repeat)
        torch_ms = cuda_ms(torch, model, size, args.repeat)
        for target in args.targets.split(","):
            out_dir = os.path.join(work, f"out-{name}-{target.replace(':', '_')}")
            run = subprocess.run(
                [args.tessera, "run", path, "--targets", target, "--json", "--repeat",
                 str(args.repeat), "--input", f"x={os.path.join(work, name + '.x.npy')}",
                 "--output-dir", out_dir, "--force"], capture_output=True, text=True)
            if run.returncode != 0:
                failed = True
                last = (run.stderr.strip().splitlines() or ["?"])[-1]
                print(f"| {name} | {target} | failed: {last[:160]} | | | | |", flush=True)
                continue
            report = json.loads(run.stdout)
            err = 0.0
            for o, want in zip(report["outputs"], ref):
                got = np.load(o["file"])
                err = max(err, float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-12)))
            failed = failed or err > 1e-3
            placed = report["nodes_by_plugin"]
            on = placed.get(target.split(":")[0], 0)
            cuda = f"{torch_ms:.2f}" if torch_ms is not None else "-"
            print(f"| {name} | {target} | {on}/{sum(placed.values())} | {err:.1e} | "
                  f"{report['latency_ms']['median']:.2f} | {ort_ms:.2f} | "
                  f"{cuda} |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
