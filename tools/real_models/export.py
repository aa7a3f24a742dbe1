#!/usr/bin/env python3
"""Exports the real-model corpus: torchvision and timm networks through PyTorch's ONNX exporter.

The networks are the kind a user brings (not the zoo's hand-written graphs): what the exporter
writes, with BN folded into the convs, Clip/HardSwish/HardSigmoid activations, channel shuffles,
squeeze-excitation, LayerNormalization (opset 17) and Erf-form GELU. Weights are random and seeded
(weights=None, nothing is downloaded); BN running statistics are randomised too, so the folded
convs carry non-trivial scales and shifts instead of the identity of a fresh BN.

Each export is cached as CACHE/<name>-<key>.onnx, where the key hashes this script and the torch,
torchvision and timm versions: a cache hit costs nothing, and any change to the recipe or the
versions exports again. CACHE is --cache-dir, else $TESSERA_REAL_MODELS_CACHE, else
~/.cache/tessera/real_models.

Needs torch and torchvision (Debian: python3-torch, python3-torchvision) and, for the timm
networks, timm (tools/setup-deps.sh installs it with --no-deps for Debian's torch).

Usage: export.py [--list] [--cache-dir DIR] [--json] [NAME...]   (no NAME: every network)
Prints one line per network: NAME PATH (or a JSON object per line with --json, adding the export
seconds and whether the cache answered).
"""
import argparse
import glob
import hashlib
import json
import os
import sys
import tempfile
import time

OPSET = 17  # the highest torch 1.13 exports; 17 writes LayerNormalization as one node
SEED = 0
VIDEO_FRAMES = 8  # clip length of the "video" networks (torchvision.models.video)

# name -> (library, constructor name, input side). Inputs are [1, 3, side, side] ([1, 3,
# VIDEO_FRAMES, side, side] for "video"); timm networks use their own default resolution
# (mobilevit's blocks need a multiple of 64).
NETWORKS = {
    "resnet18": ("torchvision", "resnet18", 224),
    "resnet50": ("torchvision", "resnet50", 224),
    "mobilenet_v2": ("torchvision", "mobilenet_v2", 224),
    "mobilenet_v3_small": ("torchvision", "mobilenet_v3_small", 224),
    "mobilenet_v3_large": ("torchvision", "mobilenet_v3_large", 224),
    "efficientnet_b0": ("torchvision", "efficientnet_b0", 224),
    "shufflenet_v2_x1_0": ("torchvision", "shufflenet_v2_x1_0", 224),
    "regnet_y_400mf": ("torchvision", "regnet_y_400mf", 224),
    "mnasnet1_0": ("torchvision", "mnasnet1_0", 224),
    "squeezenet1_1": ("torchvision", "squeezenet1_1", 224),
    "densenet121": ("torchvision", "densenet121", 224),
    "googlenet": ("torchvision", "googlenet", 224),
    "lraspp_mobilenet_v3_large": ("segmentation", "lraspp_mobilenet_v3_large", 224),
    "deeplabv3_mobilenet_v3_large": ("segmentation", "deeplabv3_mobilenet_v3_large", 224),
    "convnext_atto": ("timm", "convnext_atto", 224),
    "mobilevit_xxs": ("timm", "mobilevit_xxs", 256),
    "efficientvit_b0": ("timm", "efficientvit_b0", 224),
    "fastvit_t8": ("timm", "fastvit_t8", 256),
    "repvit_m0_9": ("timm", "repvit_m0_9", 224),
    # Shifted-window attention: Mod in the window padding, ScatterND building the attention
    # mask, a training-mode Dropout of ratio 0 (all folded or normalised before any plugin).
    "swin_t": ("torchvision", "swin_t", 224),
    "tiny_vit_5m_224": ("timm", "tiny_vit_5m_224", 224),
    # Conv encoder with sine/cosine positional encoding (CumSum, Sin, Cos, Not on a mask).
    "edgenext_xx_small": ("timm", "edgenext_xx_small", 256),
}


def default_cache_dir():
    return os.environ.get("TESSERA_REAL_MODELS_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "tessera", "real_models")


def versions():
    """torch, torchvision and timm versions from the installed packages' metadata: importing
    torch only to read its version would cost a cache hit two seconds."""
    from importlib import metadata
    found = {}
    for package in ("torch", "torchvision", "timm"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = "absent"
    return found


def cache_key(name):
    """Hash of this script, the library versions and the network name."""
    h = hashlib.sha256()
    with open(os.path.abspath(__file__), "rb") as f:
        h.update(f.read())
    h.update(json.dumps(versions(), sort_keys=True).encode())
    h.update(name.encode())
    return h.hexdigest()[:12]


def build(name):
    """The network in eval mode with seeded random weights and randomised BN statistics."""
    import torch
    library, ctor, _ = NETWORKS[name]
    torch.manual_seed(SEED)
    if library == "torchvision":
        import torchvision
        kwargs = {"weights": None}
        if ctor == "googlenet":
            kwargs.update(aux_logits=False, init_weights=True)
        model = getattr(torchvision.models, ctor)(**kwargs)
    elif library == "video":
        import torchvision
        model = getattr(torchvision.models.video, ctor)(weights=None)
    elif library == "segmentation":
        import torchvision
        model = segmentation_output(getattr(torchvision.models.segmentation, ctor)(
            weights=None, weights_backbone=None, aux_loss=False))
    else:
        import timm
        model = timm.create_model(ctor, pretrained=False)
    randomise_norm_statistics(model, torch.Generator().manual_seed(SEED + 1))
    return model.eval()


def randomise_norm_statistics(model, generator):
    """Gives each BatchNorm non-trivial running statistics and affine parameters (a fresh BN is
    the identity, which would hide a wrong fold)."""
    import torch
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and m.running_mean is not None:
                c = m.running_mean.shape[0]
                m.running_mean.copy_(0.1 * torch.randn(c, generator=generator))
                m.running_var.copy_(0.5 + torch.rand(c, generator=generator))
                if m.weight is not None:
                    m.weight.copy_(0.75 + 0.5 * torch.rand(c, generator=generator))
                    m.bias.copy_(0.1 * torch.randn(c, generator=generator))


def segmentation_output(inner):
    """torchvision's segmentation models return a dict; the exporter wants a tensor."""
    import torch

    class SegmentationOutput(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x)["out"]

    return SegmentationOutput()


def reparameterize(model):
    """timm's re-parameterisable networks (fastvit, repvit) fold their training-time branches into
    one conv for inference, as a deployment does before export."""
    try:
        from timm.utils.model import reparameterize_model
    except ImportError:
        return model
    return reparameterize_model(model)


def export(name, path):
    import torch
    model = build(name)
    if NETWORKS[name][0] == "timm":
        model = reparameterize(model)
    side = NETWORKS[name][2]
    # Video networks take clips: VIDEO_FRAMES frames of side x side.
    shape = [1, 3, VIDEO_FRAMES, side, side] if NETWORKS[name][0] == "video" else [1, 3, side, side]
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(SEED + 2))
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    # Written beside the target and renamed: a concurrent or interrupted export never leaves a
    # half-written file under the cached name.
    fd, tmp = tempfile.mkstemp(prefix=f".{name}-", suffix=".onnx", dir=directory)
    os.close(fd)
    try:
        with torch.no_grad():
            # The batch stays open (dim_param "batch"), as deployments export it: the importer
            # plans batch 1 first and a session plans again for the batch a run brings.
            torch.onnx.export(model, x, tmp, opset_version=OPSET, input_names=["input"],
                              output_names=["output"], do_constant_folding=True,
                              dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def cached_export(name, cache_dir):
    """Path of the network's ONNX file, exporting it when the cache lacks it; also the seconds the
    export took (0 for a hit) and whether the cache answered."""
    path = os.path.join(cache_dir, f"{name}-{cache_key(name)}.onnx")
    if os.path.exists(path):
        return path, 0.0, True
    start = time.perf_counter()
    export(name, path)
    # Exports of an older recipe or older versions are never read again.
    for stale in glob.glob(os.path.join(cache_dir, f"{name}-" + "[0-9a-f]" * 12 + ".onnx")):
        if stale != path:
            os.remove(stale)
    return path, time.perf_counter() - start, False


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="networks to export (default: all)")
    ap.add_argument("--list", action="store_true", help="print the network names and exit")
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--json", action="store_true", help="one JSON object per line")
    args = ap.parse_args()
    if args.list:
        for name, (library, _, side) in NETWORKS.items():
            print(f"{name} {library} {side}")
        return 0
    unknown = [n for n in args.names if n not in NETWORKS]
    if unknown:
        ap.error(f"unknown network(s) {', '.join(unknown)}; --list shows the corpus")
    cache_dir = args.cache_dir or default_cache_dir()
    import warnings
    warnings.filterwarnings("ignore")  # the exporter's tracer warnings drown the report
    for name in args.names or list(NETWORKS):
        path, seconds, cached = cached_export(name, cache_dir)
        if args.json:
            print(json.dumps({"name": name, "path": path, "export_s": round(seconds, 2),
                              "cached": cached}), flush=True)
        else:
            print(f"{name} {path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
