"""Helpers shared by the corpus's CI check (tests/real_models/check_network.py) and its benchmark
(tools/bench/real_models_compare.py): the network list, the networks that still need the
reference plugin, and the cached export run by an interpreter that has torch. Imports neither
torch nor numpy, so any python3 can use it."""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXPORT_SCRIPT = os.path.join(HERE, "export.py")
NEEDS_REFERENCE = os.path.join(ROOT, "tests", "real_models", "needs_reference.txt")
UNSUPPORTED = os.path.join(ROOT, "tests", "real_models", "unsupported.txt")


def names():
    """The corpus's networks in export.py's order."""
    out = subprocess.run([sys.executable, EXPORT_SCRIPT, "--list"], capture_output=True,
                         text=True, check=True)
    return [line.split()[0] for line in out.stdout.splitlines() if line.strip()]


def read_list(path):
    """A list file as {name: reason}: one `NAME  reason` a line; '#' starts a comment."""
    listed = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            name, _, reason = line.partition(" ")
            if not reason.strip():
                raise SystemExit(f"{path}:{number}: '{name}' has no reason; write "
                                 "`NAME  why Tessera cannot run it on cpu alone yet`")
            if name in listed:
                raise SystemExit(f"{path}:{number}: '{name}' is listed twice")
            listed[name] = reason.strip()
    return listed


def needs_reference():
    """The networks the cpu plugin cannot yet run alone (they run on cpu,reference)."""
    return read_list(NEEDS_REFERENCE)


def unsupported():
    """The networks Tessera cannot run at all yet (an op no plugin, or the importer, knows)."""
    return read_list(UNSUPPORTED)


def targets_for(name, listed):
    """`cpu` for a network the cpu plugin runs alone, `cpu,reference` for a listed one."""
    return "cpu,reference" if name in listed else "cpu"


def torch_python():
    """An interpreter that imports torch and torchvision: $TESSERA_TORCH_PYTHON, this one, or
    Debian's /usr/bin/python3 (python3-torch lives there when a pyenv python runs the tests)."""
    for python in (os.environ.get("TESSERA_TORCH_PYTHON"), sys.executable, "/usr/bin/python3"):
        if not python or not shutil.which(python):
            continue
        if subprocess.run([python, "-c", "import torch, torchvision"],
                          capture_output=True).returncode == 0:
            return python
    return None


def export(python, network_names):
    """Exports (or finds cached) each network with `python`; returns {name: {"path", "export_s",
    "cached"}}. Raises RuntimeError with the exporter's output when it fails."""
    out = subprocess.run([python, EXPORT_SCRIPT, "--json", *network_names], capture_output=True,
                         text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{EXPORT_SCRIPT} failed:\n{out.stdout}{out.stderr}")
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    return {row["name"]: row for row in rows}


def nodes_by_plugin(text):
    """The counts of the `nodes by plugin: cpu=12 reference=3` line that `tessera run` and
    `tessera plan` print."""
    for line in text.splitlines():
        if line.startswith("nodes by plugin:"):
            pairs = line.split(":", 1)[1].split()
            return {k: int(v) for k, v in (p.split("=", 1) for p in pairs)}
    return {}


def cpu_share(counts):
    """Percent of the nodes placed on `cpu`."""
    total = sum(counts.values())
    return 100.0 * counts.get("cpu", 0) / total if total else 0.0
