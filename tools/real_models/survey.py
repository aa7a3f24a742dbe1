#!/usr/bin/env python3
"""A wider survey than the corpus: ~90 more torchvision and timm networks, three video networks
(3-D convs) and eight small networks built here (a CRNN with LSTM and GRU layers, a BERT-like
text encoder and a GPT-like decoder on int64 token ids, a Whisper-like audio encoder, a U-Net,
style transfer, ESPCN super-resolution, a GridSample flow warp), each exported with export.py's
recipe (the built ones with torch.onnx.export at its opset), run with
`tessera run --targets cpu` beside ONNX Runtime on the same seeded input, then timed with both at
the same thread count.
Prints one line per network: whether Tessera loads and places it on the targets, the largest
|difference| relative to max |ORT output|, and the median latency ratio of one round (a screen
for gaps, not a benchmark: tools/bench/real_models_compare.py alternates rounds for that).

Not part of CI (exports take minutes and a 2-core machine needs ~20 minutes for the whole list).
A network whose head timm initialises to zero compares zeros with zeros (max |ORT| is 0): its
line says so, and only its latency means something.

Usage: survey.py --tessera build/tools/tessera [--targets cpu] [--threads 2] [--cache-dir DIR]
                 [NAME...]   (no NAME: every network; --list prints them)
Runs under any python3 with numpy and onnxruntime; exports go to the interpreter that has torch
(corpus.torch_python(), as the corpus check does).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import corpus  # noqa: E402
import export  # noqa: E402

# name -> (library, constructor, input side). "custom" networks are built below.
SURVEY = {
    **{n: ("torchvision", n, 224) for n in [
        "resnext50_32x4d", "shufflenet_v2_x0_5", "efficientnet_v2_s", "regnet_x_400mf",
        "regnet_y_800mf", "convnext_tiny", "swin_t", "mnasnet0_5", "maxvit_t", "alexnet",
        "vgg11_bn", "wide_resnet50_2"]},
    "inception_v3": ("torchvision", "inception_v3", 299),
    "efficientnet_b3": ("torchvision", "efficientnet_b3", 300),
    "fcn_resnet50": ("segmentation", "fcn_resnet50", 224),
    "deeplabv3_resnet50": ("segmentation", "deeplabv3_resnet50", 224),
    "lraspp_mobilenet_v3_large_320": ("segmentation", "lraspp_mobilenet_v3_large", 320),
    **{n: ("timm", n, 224) for n in [
        "ghostnet_100", "ghostnet_050", "ghostnetv2_100", "repghostnet_050", "lcnet_050",
        "efficientnet_lite0", "tf_efficientnet_lite0", "mixnet_s", "mobileone_s0", "levit_128s",
        "deit_tiny_patch16_224", "deit_tiny_distilled_patch16_224", "vit_tiny_patch16_224",
        "vit_small_patch16_224", "poolformer_s12", "rexnet_100", "hrnet_w18_small",
        "efficientformer_l1", "efficientformerv2_s0", "res2net50_26w_4s", "skresnet18",
        "ese_vovnet19b_dw", "vovnet39a", "dla34", "resmlp_12_224", "tiny_vit_5m_224",
        "semnasnet_075", "fbnetc_100", "hardcorenas_a", "efficientvit_m0", "beit_base_patch16_224",
        "pvt_v2_b0", "twins_svt_small", "coat_lite_tiny", "xcit_nano_12_p16_224", "convit_tiny",
        "visformer_tiny", "pit_ti_224", "cait_xxs24_224", "inception_next_tiny",
        "mobilenetv3_large_100", "regnetz_b16", "nf_resnet26", "dpn68", "selecsls42b",
        "gernet_s", "resnest14d", "tresnet_m", "coatnet_nano_rw_224", "mvitv2_tiny",
        "gcvit_xxtiny", "nest_tiny", "sequencer2d_s", "mixer_s16_224", "gmlp_ti16_224",
        "davit_tiny", "focalnet_tiny_srf", "hgnetv2_b0", "mnasnet_small", "resnet18d",
        "eca_resnet33ts", "lambda_resnet26t"]},
    "tinynet_a": ("timm", "tinynet_a", 192),
    "crossvit_tiny_240": ("timm", "crossvit_tiny_240", 240),
    "flexivit_small": ("timm", "flexivit_small", 240),
    **{n: ("timm", n, 256) for n in [
        "edgenext_xx_small", "mobilevitv2_050", "mobilevit_s", "cs3darknet_s",
        "sebotnet33ts_256", "gcresnet33ts", "maxvit_nano_rw_256"]},
    **{n: ("video", n, 112) for n in ["r3d_18", "mc3_18", "r2plus1d_18"]},
    "crnn_lstm_gru": ("custom", "crnn", 0),
    # Small networks of the kinds torchvision and timm do not cover, built here with torch alone:
    # text (int64 ids, a padding mask, a causal mask), audio, image-to-image, a flow warp.
    **{n: ("custom", n, 0) for n in [
        "text_encoder", "gpt_decoder", "audio_encoder", "unet_small", "style_transfer", "espcn",
        "flow_warp"]},
}


def build_custom(name):
    """The "custom" networks: (model in eval mode, example inputs as a tuple)."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    torch.manual_seed(export.SEED)

    def encoder(d, layers, norm_first=False):
        layer = nn.TransformerEncoderLayer(d, 4, 4 * d, batch_first=True, activation="gelu",
                                           norm_first=norm_first)
        return nn.TransformerEncoder(layer, layers)

    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU())

    class Crnn(nn.Module):
        """A text recogniser's shape: convs, two bidirectional LSTM layers, a GRU, a classifier
        per time step."""
        def __init__(self):
            super().__init__()
            self.conv = nn.Sequential(
                nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d((4, 1)))
            self.lstm = nn.LSTM(128, 96, num_layers=2, bidirectional=True)
            self.gru = nn.GRU(192, 64)
            self.fc = nn.Linear(64, 37)

        def forward(self, x):
            f = self.conv(x)
            n, c, h, w = f.shape
            y, _ = self.lstm(f.reshape(n, c * h, w).permute(2, 0, 1))
            y, _ = self.gru(y)
            return self.fc(y)

    class TextEncoder(nn.Module):
        """BERT's shape: token ids and a padding mask (int64), embeddings, a transformer whose
        attention masks the padding (a bool Expand at run time), a classifier on token 0."""
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(1000, 128)
            self.pos = nn.Parameter(torch.randn(1, 64, 128) * 0.02)
            self.enc = encoder(128, 2)
            self.head = nn.Linear(128, 2)

        def forward(self, ids, mask):
            x = self.enc(self.emb(ids) + self.pos, src_key_padding_mask=mask == 0)
            return self.head(x[:, 0])

    class GptDecoder(nn.Module):
        """A decoder-only language model: token and position embeddings, pre-norm blocks under a
        causal mask, logits over the vocabulary."""
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(500, 96)
            self.pos = nn.Embedding(32, 96)
            self.enc = encoder(96, 2, norm_first=True)
            self.norm = nn.LayerNorm(96)
            self.head = nn.Linear(96, 500, bias=False)
            self.register_buffer("causal", torch.triu(torch.full((32, 32), float("-inf")), 1))

        def forward(self, ids):
            x = self.tok(ids) + self.pos(torch.arange(ids.shape[1]))
            return self.head(self.norm(self.enc(x, mask=self.causal)))

    class AudioEncoder(nn.Module):
        """Whisper's encoder shape: Conv1d stem over 80 mel bins with GELU, pre-norm blocks."""
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv1d(80, 128, 3, padding=1)
            self.c2 = nn.Conv1d(128, 128, 3, stride=2, padding=1)
            self.enc = encoder(128, 2, norm_first=True)

        def forward(self, x):
            x = F.gelu(self.c2(F.gelu(self.c1(x))))
            return self.enc(x.transpose(1, 2))

    class UnetSmall(nn.Module):
        """Segmentation's encoder-decoder: pools down, a ConvTranspose and a bilinear Resize up,
        skip Concats, a sigmoid mask."""
        def __init__(self):
            super().__init__()
            self.d1, self.d2, self.d3 = block(3, 16), block(16, 32), block(32, 64)
            self.u2 = nn.ConvTranspose2d(64, 32, 2, stride=2)
            self.c2, self.c1 = block(64, 32), block(48, 16)
            self.out = nn.Conv2d(16, 2, 1)

        def forward(self, x):
            a = self.d1(x)
            b = self.d2(F.max_pool2d(a, 2))
            c = self.d3(F.max_pool2d(b, 2))
            y = self.c2(torch.cat([self.u2(c), b], 1))
            y = F.interpolate(y, scale_factor=2.0, mode="bilinear", align_corners=False)
            return torch.sigmoid(self.out(self.c1(torch.cat([y, a], 1))))

    class StyleTransfer(nn.Module):
        """Fast style transfer's shape: reflection padding, instance norms, nearest upsampling."""
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 16, 9)
            self.n1 = nn.InstanceNorm2d(16, affine=True)
            self.c2 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
            self.n2 = nn.InstanceNorm2d(32, affine=True)
            self.c3 = nn.Conv2d(32, 3, 3, padding=1)

        def forward(self, x):
            x = F.relu(self.n1(self.c1(F.pad(x, (4, 4, 4, 4), mode="reflect"))))
            x = F.relu(self.n2(self.c2(x)))
            return torch.tanh(self.c3(F.interpolate(x, scale_factor=2.0, mode="nearest")))

    class Espcn(nn.Module):
        """Super-resolution by sub-pixel convolution (PixelShuffle, x3)."""
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(1, 32, 5, padding=2)
            self.c2 = nn.Conv2d(32, 16, 3, padding=1)
            self.c3 = nn.Conv2d(16, 9, 3, padding=1)

        def forward(self, x):
            return F.pixel_shuffle(self.c3(torch.tanh(self.c2(torch.tanh(self.c1(x))))), 3)

    class FlowWarp(nn.Module):
        """A predicted flow field warping the input (GridSample, bilinear, zeros padding)."""
        def __init__(self):
            super().__init__()
            self.c = nn.Conv2d(3, 2, 3, padding=1)

        def forward(self, x):
            flow = torch.tanh(self.c(x)).permute(0, 2, 3, 1)
            return F.grid_sample(x, flow, align_corners=False)

    ids = torch.randint(0, 1000, (1, 64))
    mask = torch.ones(1, 64, dtype=torch.int64)
    mask[:, 50:] = 0
    built = {
        "crnn": (Crnn, (torch.randn(1, 1, 16, 64),)),
        "text_encoder": (TextEncoder, (ids, mask)),
        "gpt_decoder": (GptDecoder, (torch.randint(0, 500, (1, 32)),)),
        "audio_encoder": (AudioEncoder, (torch.randn(1, 80, 200),)),
        "unet_small": (UnetSmall, (torch.randn(1, 3, 128, 128),)),
        "style_transfer": (StyleTransfer, (torch.randn(1, 3, 128, 128),)),
        "espcn": (Espcn, (torch.randn(1, 1, 96, 96),)),
        "flow_warp": (FlowWarp, (torch.randn(1, 3, 64, 64),)),
    }
    cls, inputs = built[SURVEY[name][1]]
    return cls().eval(), inputs


def export_one(name, path):
    import torch
    library, ctor, side = SURVEY[name]
    if library == "custom":
        model, inputs = build_custom(name)
        names = ["input"] if len(inputs) == 1 else [f"input{i}" for i in range(len(inputs))]
        # With gradients on: under no_grad an eval-mode nn.TransformerEncoder takes torch's fused
        # fast path, which the exporter does not know.
        torch.onnx.export(model, inputs, path, opset_version=export.OPSET, input_names=names,
                          output_names=["output"])
        return
    if ctor == "inception_v3":
        import torchvision
        torch.manual_seed(export.SEED)
        model = torchvision.models.inception_v3(weights=None, aux_logits=False, init_weights=True)
        export.randomise_norm_statistics(model, torch.Generator().manual_seed(export.SEED + 1))
        original = export.build
        export.build = lambda n: model.eval() if n == name else original(n)
    export.NETWORKS[name] = (library, ctor, side)
    export.export(name, path)


def check(args, name, path):
    import numpy as np
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    work = tempfile.mkdtemp(prefix=f"survey-{name}-")
    rng = np.random.default_rng(5)
    feed, given = {}, []
    for i, spec in enumerate(session.get_inputs()):
        shape = [d if isinstance(d, int) else 1 for d in spec.shape]
        # Integer inputs are token ids or masks: values in [0, 100) are valid ids for every
        # custom text network, and nonzero where a mask keeps the token.
        if spec.type == "tensor(int64)":
            feed[spec.name] = rng.integers(0, 100, shape, dtype=np.int64)
        else:
            feed[spec.name] = rng.uniform(-1.7, 1.7, shape).astype(np.float32)
        np.save(os.path.join(work, f"x{i}.npy"), feed[spec.name])
        given += ["--input", f"{spec.name}={work}/x{i}.npy"]
    run = subprocess.run([args.tessera, "run", path, "--targets", args.targets, *given,
                          "--output-dir", f"{work}/out", "--repeat", "1", "--force", "--threads",
                          str(args.threads)], capture_output=True, text=True)
    if run.returncode != 0:
        lines = (run.stderr or run.stdout).strip().splitlines()
        return f"{name}: FAILED: {' | '.join(lines[-2:])[:400]}"
    ref = session.run(None, feed)
    worst, scale = 0.0, 0.0
    for out, want in zip(session.get_outputs(), ref):
        # `tessera run` replaces characters unsafe in file names with '_' (run_common.cpp).
        stem = re.sub(r"[^A-Za-z0-9_.-]", "_", out.name) or "output"
        got = np.load(os.path.join(work, "out", stem + ".npy"))
        scale = max(scale, float(np.abs(want).max()))
        worst = max(worst, float(np.abs(got - want).max()))
    relative = worst / scale if scale > 0 else worst
    bench = subprocess.run([args.tessera, "bench", path, "--targets", args.targets, "--threads",
                            str(args.threads), "--repeat", "30", "--json"],
                           capture_output=True, text=True)
    ours = json.loads(bench.stdout)["median_ms"] if bench.returncode == 0 else float("nan")
    for _ in range(3):
        session.run(None, feed)
    times = []
    for _ in range(30):
        start = time.perf_counter()
        session.run(None, feed)
        times.append(time.perf_counter() - start)
    theirs = float(np.median(times)) * 1e3
    verdict = "ok" if relative <= 1e-4 else "MISMATCH"
    note = " (ORT output is all zeros)" if scale == 0 else ""
    return (f"{name}: {verdict} rel diff {relative:.1e}{note}; tessera {ours:.2f} ms, "
            f"ORT {theirs:.2f} ms, ratio {ours / theirs:.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--tessera", default=None)
    ap.add_argument("--targets", default="cpu")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cache-dir", default=os.path.join(export.default_cache_dir(), "survey"))
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--export-one", nargs=2, metavar=("NAME", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.export_one:
        export_one(*args.export_one)
        return 0
    if args.list:
        for name, (library, _, side) in SURVEY.items():
            print(f"{name} {library} {side}")
        return 0
    if args.tessera is None:
        ap.error("--tessera is required")
    unknown = [n for n in args.names if n not in SURVEY]
    if unknown:
        ap.error(f"not survey networks: {', '.join(unknown)} (--list shows them)")
    os.makedirs(args.cache_dir, exist_ok=True)
    python = corpus.torch_python()
    if python is None:
        ap.error("no python3 with torch and torchvision (tools/setup-deps.sh installs them)")
    failed = 0
    for name in args.names or list(SURVEY):
        path = os.path.join(args.cache_dir, f"{name}-{export.cache_key(name)}.onnx")
        if not os.path.exists(path):
            done = subprocess.run([python, os.path.abspath(__file__), "--export-one", name, path],
                                  capture_output=True, text=True)
            if done.returncode != 0:  # the exporter's own limits (halonet's Unfold, vit_b_16)
                why = (done.stderr.strip().splitlines() or ["?"])[-1]
                print(f"{name}: EXPORT FAILED: {why[:300]}", flush=True)
                continue
        line = check(args, name, path)
        failed += "FAILED" in line or "MISMATCH" in line
        print(line, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
