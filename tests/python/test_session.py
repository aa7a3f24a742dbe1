"""The Python module `tessera` (tools/python) against its oracles: ONNX Runtime on the same
model and input, and the ONNX path for a package (bit for bit). Run by ctest
python_module_pytest with PYTHONPATH=build/python and TESSERA_TOOL=build/tools/tessera."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import tessera

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "capi"))
from ort_required import import_onnxruntime  # noqa: E402


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("m") / "squeezenet.onnx")
    subprocess.run([os.environ["TESSERA_TOOL"], "zoo", "squeezenet_v1.1", "-o", path],
                   check=True, capture_output=True)
    return path


@pytest.fixture(scope="module")
def x():
    return np.random.default_rng(3).uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32)


def test_onnx_matches_onnxruntime(model, x):
    ort = import_onnxruntime()
    s = tessera.Session(model, targets=["cpu"])
    (name, dtype, shape), = s.inputs
    assert (dtype, shape) == ("float32", [1, 3, 224, 224])
    got = s.run({name: x})
    ref = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {name: x})
    out_name = s.outputs[0][0]
    assert got[out_name].shape == ref[0].shape and got[out_name].dtype == np.float32
    assert np.max(np.abs(got[out_name] - ref[0])) <= 1e-4 * np.max(np.abs(ref[0])) + 1e-6


def test_package_runs_as_the_onnx_path(model, x, tmp_path):
    package = str(tmp_path / "squeezenet.tsp")
    info = tessera.compile(model, package, targets=["cpu"])
    assert info["targets"] == ["cpu"] and info["precision"] == "fp32"
    onnx_out = tessera.Session(model, targets=["cpu"]).run({"data": x})
    s = tessera.Session(package)
    assert all(n["plugin"] == "cpu" for n in s.plan()["nodes"])
    pkg_out = s.run({"data": x})
    assert onnx_out.keys() == pkg_out.keys()
    for k in onnx_out:
        assert np.array_equal(onnx_out[k], pkg_out[k])
    stats = s.bench({"data": x}, repeat=3, warmup=1)
    assert stats["runs"] == 3 and 0 < stats["min_ms"] <= stats["median_ms"]
    with pytest.raises(tessera.Error, match="already exists|--force"):
        tessera.compile(model, package, targets=["cpu"])


def test_outputs_own_their_memory_and_threads_share_a_session(model, x):
    s = tessera.Session(model, targets=["cpu"])
    first = s.run({"data": x})["output"]
    keep = first.copy()
    del s  # the arrays outlive the session
    assert np.array_equal(first, keep)
    s = tessera.Session(model, targets=["cpu"])
    results = [None] * 4
    def work(i):
        results[i] = s.run({"data": x})["output"]
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        assert np.array_equal(r, keep)


def test_bad_input_raises_naming_it(model, tmp_path):
    s = tessera.Session(model, targets=["cpu"])
    with pytest.raises(tessera.Error, match="data"):
        s.run({"data": np.zeros((1, 3, 10, 10), np.float32)})
    with pytest.raises(tessera.Error, match="complex|dtype"):
        s.run({"data": np.zeros((1, 3, 224, 224), np.complex64)})
    with pytest.raises(tessera.Error, match="contiguous"):
        s.run({"data": np.zeros((1, 3, 224, 448), np.float32)[:, :, :, ::2]})
    broken = tmp_path / "broken.tsp"
    broken.write_bytes(open(model, "rb").read()[:20])
    with pytest.raises(tessera.Error, match="broken.tsp"):
        tessera.Session(str(broken))
