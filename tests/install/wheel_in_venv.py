#!/usr/bin/env python3
"""`pip install .` of the source tree into a fresh venv, then what was installed, run from there:
- pip runs in a pseudo-terminal, where the build shows one line per tenth of a whole build's
  compiles that it ran ("tessera: N/M files compiled (P%)");
- every ELF file of the package (the module, libraries, plugins, binaries) has only $ORIGIN run
  paths and ldd resolves all of its libraries, with no LD_LIBRARY_PATH;
- the `tessera` console script: `tessera info --json` loads the cpu and reference plugins from the
  package, refuses none; `tessera zoo` and `tessera compile` make the test models, and
  `python -m tessera info` answers as the script does;
- `import tessera` in the venv runs the zoo's squeezenet from the package and from the ONNX model
  on `cpu`; ONNX Runtime (this python3's, outside the venv) runs the ONNX model on the same input
  (sin(0.01 i)); every output within 1e-4 x max |ref| (+1e-5).

The wheel's build tree is kept in WORK_DIR/build (a rerun builds only what changed); the venv is
made afresh each run. ccache is used when installed.
Usage: wheel_in_venv.py SOURCE_DIR WORK_DIR"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "capi"))
from ort_required import import_onnxruntime  # noqa: E402

NET = "squeezenet_v1.1"
IN_CI = os.environ.get("CI") == "true"


def skip(reason):
    """Exit 77 (skipped) naming what is missing; in CI a missing requirement fails."""
    print(("CI requires " if IN_CI else "needs ") + reason)
    sys.exit(1 if IN_CI else 77)


def run(cmd, **kw):
    """Runs cmd with its output on ours; raises with the command on failure."""
    print("$ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def clean_env(venv):
    """The environment an installed command gets: the venv's bin first, no library paths."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LD_", "PYTHON", "TESSERA_")) and k != "VIRTUAL_ENV"}
    env["PATH"] = os.path.join(venv, "bin") + os.pathsep + env.get("PATH", "/usr/bin:/bin")
    return env


def pip_install(source, venv, build_dir, log_path):
    """`pip install -v SOURCE` in a pseudo-terminal (script(1)), so that the build's terminal
    progress shows; its log is written to log_path and returned."""
    settings = [f"--config-settings=build-dir={build_dir}"]
    if shutil.which("ccache"):
        settings.append("--config-settings=cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache")
    pip = [os.path.join(venv, "bin", "pip"), "install", "-v", "--disable-pip-version-check",
           "--no-color", "--progress-bar", "off", *settings, source]
    # script -e: pip's exit status; -q: no script banner. A new session (setsid) so that the only
    # terminal is script's: the progress goes to its log, not to the terminal running ctest.
    cmd = ["script", "-qec", " ".join(map(shell_quote, pip)), log_path]
    print("$ " + " ".join(pip), flush=True)
    t0 = time.monotonic()
    out = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.STDOUT, start_new_session=True,
                         env=clean_env(venv))
    with open(log_path, errors="replace") as f:
        log = f.read().replace("\r\n", "\n")
    print(f"pip install: exit {out.returncode} after {time.monotonic() - t0:.0f} s")
    if out.returncode != 0:
        print(log[-20000:])
        if re.search(r"No matching distribution found|Could not find a version that satisfies|"
                     r"Failed to establish a new connection|Temporary failure in name resolution",
                     log):
            skip("the Python package index for pip's build requirements "
                 "(scikit-build-core, nanobind, numpy)")
        sys.exit(1)
    return log


def shell_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def check_progress(log, build_dir):
    """A build showed one progress line on the terminal per tenth of a whole build's compiles
    that it ran (ninja's "[n/N] Building" lines under -v): all ten from nothing."""
    ran = len(re.findall(r"^\s*\[\d+/\d+\] Building", log, re.M))
    # Not anchored: the terminal lines can land inside a line pip is printing.
    shown = re.findall(r"tessera: (\d+)/(\d+) files compiled \((\d+)%\)", log)
    with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
        ninja = re.search(r"^CMAKE_MAKE_PROGRAM:\w+=(.*)$", f.read(), re.M).group(1)
    commands = subprocess.run([ninja, "-C", build_dir, "-t", "commands", "all"], check=True,
                              capture_output=True, text=True).stdout
    whole = commands.count("wheel-progress/step.sh")
    print(f"build: {ran} of a whole build's {whole} compiles ran, "
          f"{len(shown)} progress lines shown")
    for line in shown:
        print(f"  tessera: {line[0]}/{line[1]} files compiled ({line[2]}%)")
    expected = ran * 10 // whole if whole else 0
    if whole == 0 or len(shown) != expected:
        print(f"expected {expected} progress lines (one per 10% of {whole} compiles)")
        return 1
    return 0


def elf_files(package):
    for root, _, files in os.walk(package):
        for name in files:
            path = os.path.join(root, name)
            if os.path.islink(path):
                continue
            with open(path, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    yield path


def check_elf(package, env):
    """Every ELF file: run paths only relative to $ORIGIN, and every needed library resolved."""
    failures = 0
    files = sorted(elf_files(package))
    for path in files:
        dyn = subprocess.run(["readelf", "-d", path], check=True, capture_output=True,
                             text=True, env=env).stdout
        paths = [p for m in re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[(.*)\]",
                                       dyn) for p in m.split(":")]
        bad = [p for p in paths if p and not p.startswith("$ORIGIN")]
        ldd = subprocess.run(["ldd", path], capture_output=True, text=True, env=env).stdout
        missing = [line.strip() for line in ldd.splitlines() if "not found" in line]
        rel = os.path.relpath(path, package)
        if bad or missing:
            print(f"{rel}: run path {paths}" + (f", not relative: {bad}" if bad else "") +
                  (f", unresolved: {missing}" if missing else ""))
            failures += 1
        else:
            print(f"{rel}: run path {':'.join(paths) or '(none)'}, all libraries found")
    if not any(os.path.basename(p) == "tessera" for p in files):
        print("the package has no bin/tessera")
        failures += 1
    return failures


def check_info(venv, package, env, version):
    info = subprocess.run(["tessera", "info", "--json"], check=True, capture_output=True,
                          text=True, env=env, cwd=venv).stdout
    info = json.loads(info)
    failures = 0
    plugins = {p["name"]: p["path"] for p in info["plugins"]}
    print(f"tessera info: version {info['version']}, plugins {sorted(plugins)}, "
          f"refused {len(info['refused'])}")
    if info["version"] != version:
        print(f"tessera info reports version {info['version']}, the package is {version}")
        failures += 1
    for name in ("cpu", "reference"):
        if name not in plugins:
            print(f"plugin {name} not loaded")
            failures += 1
    for name, path in plugins.items():
        if not os.path.realpath(path).startswith(os.path.realpath(package) + os.sep):
            print(f"plugin {name} loaded from {path}, outside the installed package {package}")
            failures += 1
    for r in info["refused"]:
        print(f"refused: {r}")
        failures += 1
    script = subprocess.run(["tessera", "info"], check=True, capture_output=True, text=True,
                            env=env, cwd=venv).stdout
    module = subprocess.run([os.path.join(venv, "bin", "python"), "-m", "tessera", "info"],
                            check=True, capture_output=True, text=True, env=env,
                            cwd=venv).stdout
    if script.splitlines()[:1] != module.splitlines()[:1]:
        print(f"python -m tessera info: {module.splitlines()[:1]}, tessera info: "
              f"{script.splitlines()[:1]}")
        failures += 1
    return failures


RUN_IN_VENV = r"""
import sys
import numpy as np
import tessera
model, package, out = sys.argv[1:4]
print("tessera", tessera.__version__, "from", tessera.__file__)
results = {}
for what, session in (("package", tessera.Session(package)),
                      ("onnx", tessera.Session(model, targets="cpu"))):
    feeds = {}
    for i in session.get_inputs():
        n = int(np.prod(i.shape))
        feeds[i.name] = np.sin(0.01 * np.arange(n)).astype(np.float32).reshape(i.shape)
    for name, value in session.run(feeds).items():
        results[what + "/" + name] = np.asarray(value)
np.savez(out, **results)
"""


def check_outputs(ort, model, outputs_npz):
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    feeds = {}
    for i in sess.get_inputs():
        n = int(np.prod(i.shape))
        feeds[i.name] = np.sin(0.01 * np.arange(n)).astype(np.float32).reshape(i.shape)
    refs = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    got = np.load(outputs_npz)
    failures = 0
    for what in ("package", "onnx"):
        for name, ref in refs.items():
            key = what + "/" + name
            if key not in got:
                print(f"{what}: no output {name}")
                failures += 1
                continue
            tol = 1e-4 * float(np.abs(ref).max()) + 1e-5
            value = got[key]
            diff = float(np.abs(value - ref).max()) if value.shape == ref.shape else float("inf")
            ok = diff <= tol
            print(f"{what}: {name} {list(value.shape)} max |tessera - ONNX Runtime| {diff:.3g} "
                  f"(tolerance {tol:.3g}): {'ok' if ok else 'FAILED'}")
            failures += not ok
    return failures


def main():
    source, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    ort = import_onnxruntime()
    for tool in ("script", "readelf", "ldd"):
        if not shutil.which(tool):
            skip(f"{tool} (Debian: bsdutils, binutils, libc-bin)")
    with open(os.path.join(source, "pyproject.toml")) as f:
        version = re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1)
    os.makedirs(work, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        venv = os.path.join(tmp, "venv")
        made = subprocess.run([sys.executable, "-m", "venv", venv], capture_output=True, text=True)
        if made.returncode != 0:
            print(made.stdout + made.stderr)
            skip("python3's venv with pip (Debian: python3-venv)")
        env = clean_env(venv)
        build_dir = os.path.join(work, "build")
        log = pip_install(source, venv, build_dir, os.path.join(work, "pip-install.log"))
        failures = check_progress(log, build_dir)
        package = subprocess.run(
            [os.path.join(venv, "bin", "python"), "-c",
             "import os, tessera; print(os.path.dirname(tessera.__file__))"],
            check=True, capture_output=True, text=True, env=env, cwd=tmp).stdout.strip()
        size = sum(os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(package)
                   for f in files)
        print(f"installed package: {package} ({size / 1e6:.1f} MB)")
        if not package.startswith(os.path.realpath(venv)) and not package.startswith(venv):
            print(f"import tessera found {package}, not the venv's")
            failures += 1
        failures += check_elf(package, env)
        failures += check_info(venv, package, env, version)
        model = os.path.join(tmp, NET + ".onnx")
        pkg = os.path.join(tmp, NET + ".tsp")
        run(["tessera", "zoo", NET, "-o", model], env=env, cwd=tmp, stdout=subprocess.DEVNULL)
        run(["tessera", "compile", model, "--targets", "cpu", "-o", pkg], env=env, cwd=tmp,
            stdout=subprocess.DEVNULL)
        outputs = os.path.join(tmp, "outputs.npz")
        run([os.path.join(venv, "bin", "python"), "-c", RUN_IN_VENV, model, pkg, outputs],
            env=env, cwd=tmp)
        failures += check_outputs(ort, model, outputs)
    print("FAILED" if failures else "OK")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
