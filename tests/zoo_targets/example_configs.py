#!/usr/bin/env python3
"""Runs every deployment config of configs/ (the default one and configs/examples/*.yaml) through
`tessera run`, as a user following the README would, and checks what each promises here:

- a config whose targets this machine has (cpu, reference; mali and adreno on any OpenCL device,
  PoCL in CI) runs, places nodes on its first target, and its outputs match ONNX Runtime on the
  same input (tests/zoo/compare_with_ort.py's check, the tolerance of that target);
- a config that needs something absent (a CLML device for clml.yaml) exits non-zero with one error
  line that names what is missing, not a crash and not minutes on the reference kernels;
- clml.yaml runs again under the CLML emulator (tests/clml/emulator, an OpenCL layer named by
  $TESSERA_CLML_EMULATOR), places nodes on clml and matches ONNX Runtime.

It also checks `run`'s three levels of output on the cpu example: by default the counts per
plugin and only the nodes that left the first target (no per-node table, no notes about packs
of other devices), --verbose every node, --quiet the latency line alone; a pack ignored for its engine version
still warns by default; contradicting flags (--verbose with --quiet,
--json with either) are refused naming both.

A config in configs/examples without an entry below fails the test: a new example must say what
it is expected to do. A config whose first plugin this build lacks (no OpenCL) must fail naming
it. Usage: example_configs.py TESSERA_BIN WORKDIR BUILT_PLUGINS (comma-separated)
"""
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "zoo"))
from compare_with_ort import compare, ort_session  # noqa: E402

# config -> ("runs", first target's plugin, rtol) or ("fails", text the error must contain).
# Tolerances as tests/zoo_targets: fp32 cpu/reference 1e-4, OpenCL fp32 1e-3, fp16 storage 5e-3.
EXPECTED = {
    "default.yaml": ("runs", "cpu", 1e-4),
    "examples/cpu.yaml": ("runs", "cpu", 1e-4),
    "examples/reference.yaml": ("runs", "reference", 1e-4),
    "examples/mali.yaml": ("runs", "mali", 1e-3),
    "examples/adreno.yaml": ("runs", "adreno", 5e-3),
    "examples/clml.yaml": ("fails", "does not list the cl_qcom_ml_ops extension"),
}
# Configs that run once more with the CLML emulator layer loaded (fp16: half tensors).
EMULATED = {"examples/clml.yaml": ("runs", "clml", 5e-3)}


def check(tessera, config, expected, work, env=None):
    name = os.path.relpath(config, os.path.join(ROOT, "configs"))
    out = os.path.join(work, name.replace("/", "_").replace(".yaml", ""))
    os.makedirs(out, exist_ok=True)
    # An input of our own, so ONNX Runtime can be given the same one.
    input_path = os.path.join(out, "input.npy")
    np.save(input_path, np.random.default_rng(11).standard_normal([1, 3, 224, 224])
            .astype(np.float32))
    cmd = [tessera, "run", config, "--repeat", "1", "--input", f"data={input_path}",
           "--output-dir", out, "--force"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    log = proc.stdout + proc.stderr
    if expected[0] == "fails":
        errors = [line for line in log.splitlines() if "error:" in line]
        if proc.returncode == 0 or proc.returncode < 0:
            print(f"{name}: expected a clean failure, got exit {proc.returncode}\n{log}")
            return False
        if len(errors) != 1 or expected[1] not in errors[0]:
            print(f"{name}: expected one error line containing \"{expected[1]}\", got:\n{log}")
            return False
        print(f"{name}: fails as expected (exit {proc.returncode}): {errors[0]}")
        return True
    _, plugin, rtol = expected
    if proc.returncode != 0:
        print(f"{name}: exit {proc.returncode}\n{log}")
        return False
    counts = re.search(r"^nodes by plugin: (.*)$", log, re.M)
    placed = dict(item.split("=") for item in counts.group(1).split()) if counts else {}
    if int(placed.get(plugin, 0)) == 0:
        print(f"{name}: no node ran on {plugin} ({counts.group(0) if counts else log})")
        return False
    model = re.search(r"^running deployment .* \(model (.*)\)$", log, re.M).group(1)
    session = ort_session(model)
    feeds = {"data": np.load(input_path)}
    names = [o.name for o in session.get_outputs()]
    ok = True
    for label, reference in zip(names, session.run(names, feeds)):
        ok &= compare("example", name, label, np.load(os.path.join(out, f"{label}.npy")),
                      reference, rtol)
    print(f"{name}: {counts.group(0)}")
    return ok


def check_verbosity(tessera, work):
    config = os.path.join(ROOT, "configs", "examples", "cpu.yaml")
    outputs = {}
    for level in ("", "--verbose", "--quiet"):
        cmd = [tessera, "run", config, "--repeat", "1"] + ([level] if level else [])
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            print(f"verbosity {level or 'default'}: exit {proc.returncode}\n{proc.stderr}")
            return False
        outputs[level] = proc.stdout
    rows = {k: len(re.findall(r"^  \S+ +\S+ +-> cpu +region \d+$", v, re.M))
            for k, v in outputs.items()}
    total = int(re.search(r"^placement \((\d+) nodes", outputs["--verbose"], re.M).group(1))
    failures = []
    if rows["--verbose"] != total:
        failures.append(f"--verbose shows {rows['--verbose']} node rows of {total}")
    if rows[""] != 0 or "ignored: it is for device" in outputs[""]:
        failures.append("the default output has per-node rows or notes about other packs")
    if "nodes by plugin: cpu=" not in outputs[""]:
        failures.append("the default output lacks the counts per plugin")
    # Contradicting output flags are refused, naming them, before anything runs.
    for pair in (["--verbose", "--quiet"], ["--json", "--quiet"], ["--json", "--verbose"]):
        proc = subprocess.run([tessera, "run", config, "--repeat", "1"] + pair,
                              capture_output=True, text=True, timeout=300)
        if proc.returncode == 0 or not all(flag in proc.stderr for flag in pair):
            failures.append(f"{' '.join(pair)}: exit {proc.returncode}, {proc.stderr.strip()}")
    # A pack the user gave that no longer applies (made for another engine version) is not one
    # of those notes: the default output warns about it.
    with open(os.path.join(ROOT, "schedules", "cpu", "intel-xeon-emerald-rapids.yaml")) as f:
        pack = re.sub(r"(?m)^engine_version: .*$", 'engine_version: "==0.0.1"', f.read())
    # Edited content no longer matches the shipped pack's hash: sealed again, as a user would.
    pack = re.sub(r"(?m)^sha256: .*\n?", "", pack)
    old_pack = os.path.join(work, "old-engine-pack.yaml")
    with open(old_pack, "w") as f:
        f.write(pack)
    subprocess.run([tessera, "pack", "seal", old_pack], capture_output=True, text=True,
                   timeout=60, check=True)
    proc = subprocess.run([tessera, "run", config, "--repeat", "1", "--pack", old_pack],
                          capture_output=True, text=True, timeout=300)
    if "ignored: made for engine versions '==0.0.1'" not in proc.stdout:
        failures.append(f"a pack of another engine version was not warned about: {proc.stdout}")
    quiet = [line for line in outputs["--quiet"].splitlines() if line.strip()]
    if len(quiet) != 1 or not quiet[0].startswith("latency: median"):
        failures.append(f"--quiet printed {quiet}")
    for f in failures:
        print(f"verbosity: {f}")
    if not failures:
        print(f"verbosity: default 0 node rows, --verbose {total}, --quiet the latency line")
    return not failures


def main():
    tessera, work, built = sys.argv[1], sys.argv[2], set(sys.argv[3].split(","))
    configs = [os.path.join(ROOT, "configs", "default.yaml")] + sorted(
        os.path.join(ROOT, "configs", "examples", f)
        for f in os.listdir(os.path.join(ROOT, "configs", "examples")) if f.endswith(".yaml"))
    ok = True
    for config in configs:
        name = os.path.relpath(config, os.path.join(ROOT, "configs"))
        if name not in EXPECTED:
            print(f"{name}: no expectation in {os.path.relpath(__file__, ROOT)}; add one")
            ok = False
            continue
        expected = EXPECTED[name]
        if expected[0] == "runs" and expected[1] not in built:
            expected = ("fails", f"no plugin named '{expected[1]}' is loaded")
        ok &= check(tessera, config, expected, work)
        emulator = os.environ.get("TESSERA_CLML_EMULATOR", "")
        if name in EMULATED and EMULATED[name][1] in built and os.path.exists(emulator):
            print(f"{name}: again under the CLML emulator ({emulator})")
            ok &= check(tessera, config, EMULATED[name], work,
                        env=dict(os.environ, OPENCL_LAYERS=emulator))
    if "cpu" in built:
        ok &= check_verbosity(tessera, work)
    missing = set(EXPECTED) - {os.path.relpath(c, os.path.join(ROOT, "configs")) for c in configs}
    for name in sorted(missing):
        print(f"{name}: expected but not in configs/")
        ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
