"""The Python module `tessera` (tools/python) against its oracles: ONNX Runtime on the same
model and input, and the ONNX path for a package (bit for bit). Run by ctest
python_module_pytest with PYTHONPATH=build/python and TESSERA_TOOL=build/tools/tessera."""
import os
import pathlib
import subprocess
import sys
import threading
import warnings

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
    broken.write_bytes(pathlib.Path(model).read_bytes()[:20])
    with pytest.raises(tessera.Error, match="broken.tsp"):
        tessera.Session(str(broken))


# ---- ONNX Runtime's API shape (issue 44) ----

def _small_model(path, inputs, outputs, nodes):
    from onnx import helper, save
    graph = helper.make_graph(nodes, "small", inputs, outputs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    save(m, str(path))
    return str(path)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """Inputs of four dtypes, one with a symbolic batch; an output per input."""
    from onnx import helper, TensorProto as T
    v = helper.make_tensor_value_info
    return _small_model(
        tmp_path_factory.mktemp("mixed") / "mixed.onnx",
        [v("a", T.FLOAT, ["N", 4]), v("b", T.INT64, ["N", 2]), v("c", T.FLOAT16, [2, 3]),
         v("d", T.UINT8, [3])],
        [v("ya", T.FLOAT, ["N", 4]), v("yb", T.INT64, ["N", 2]), v("yc", T.FLOAT16, [2, 3]),
         v("yd", T.FLOAT, [3])],
        [helper.make_node("Relu", ["a"], ["ya"]), helper.make_node("Add", ["b", "b"], ["yb"]),
         helper.make_node("Mul", ["c", "c"], ["yc"]),
         helper.make_node("Cast", ["d"], ["yd"], to=T.FLOAT)])


def _mixed_feed(batch=2):
    rng = np.random.default_rng(7)
    return {"a": rng.standard_normal((batch, 4)).astype(np.float32),
            "b": rng.integers(-50, 50, (batch, 2)).astype(np.int64),
            "c": rng.standard_normal((2, 3)).astype(np.float16),
            "d": rng.integers(0, 255, 3).astype(np.uint8)}


def _ort_session(path):
    return import_onnxruntime().InferenceSession(path, providers=["CPUExecutionProvider"])


def _ort_shape(shape):
    # ORT names a symbolic dimension ("N"); Tessera reports every open one as None.
    return [d if isinstance(d, int) else None for d in shape]


@pytest.mark.parametrize("which", ["model", "mixed"])
def test_get_inputs_and_outputs_as_onnxruntime_reports_them(which, request):
    path = request.getfixturevalue(which)
    s, ref = tessera.Session(path, targets="cpu,reference"), _ort_session(path)
    for got, want in ((s.get_inputs(), ref.get_inputs()), (s.get_outputs(), ref.get_outputs())):
        assert [a.name for a in got] == [a.name for a in want]
        assert [a.type for a in got] == [a.type for a in want]
        assert [a.shape for a in got] == [_ort_shape(a.shape) for a in want]
    # The tuple properties stay as they were: numpy dtype names, -1 where a dimension is open.
    numpy_of = {"tensor(float)": "float32", "tensor(int64)": "int64",
                "tensor(float16)": "float16", "tensor(uint8)": "uint8"}
    for (name, dtype, shape), arg in zip(s.inputs, s.get_inputs()):
        assert name == arg.name and dtype == numpy_of[arg.type]
        assert shape == [-1 if d is None else d for d in arg.shape]
    assert "NodeArg(name='" in repr(s.get_inputs()[0])


@pytest.fixture(scope="module")
def open_hw(tmp_path_factory):
    """Height and width open: the graph has no sizes before a run (planned at the first)."""
    from onnx import helper, TensorProto as T
    v = helper.make_tensor_value_info
    return _small_model(
        tmp_path_factory.mktemp("open_hw") / "open_hw.onnx", [v("x", T.FLOAT, [1, 3, "H", "W"])],
        [v("pooled", T.FLOAT, [1, 3, 1, 1]), v("relu", T.FLOAT, [1, 3, "H", "W"])],
        [helper.make_node("ReduceMean", ["x"], ["pooled"], axes=[2, 3], keepdims=1),
         helper.make_node("Relu", ["x"], ["relu"])])


def test_outputs_of_a_model_planned_at_its_first_run(open_hw):
    path = open_hw
    s, ref = tessera.Session(path, targets="cpu,reference"), _ort_session(path)
    assert [a.shape for a in s.get_inputs()] == [[1, 3, None, None]]
    assert [a.shape for a in s.get_outputs()] == [_ort_shape(a.shape) for a in ref.get_outputs()]
    assert [a.shape for a in s.get_outputs()] == [[1, 3, 1, 1], [1, 3, None, None]]
    for hw in ((8, 8), (5, 12)):
        x = np.random.default_rng(1).standard_normal((1, 3) + hw).astype(np.float32)
        for g, w in zip(s.run(None, {"x": x}), ref.run(None, {"x": x})):
            assert g.shape == w.shape and np.allclose(g, w, rtol=1e-6, atol=1e-6)


def test_run_with_output_names_as_onnxruntime(mixed):
    s, ref = tessera.Session(mixed, targets="cpu,reference"), _ort_session(mixed)
    feed = _mixed_feed()
    got, want = s.run(None, feed), ref.run(None, feed)
    assert isinstance(got, list) and len(got) == len(want) == 4
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g, w)
    picked = s.run(["yd", "ya"], feed)
    for g, w in zip(picked, ref.run(["yd", "ya"], feed)):
        assert g.dtype == w.dtype and np.array_equal(g, w)
    # The dict form still answers {output name: array}, the same arrays.
    as_dict = s.run(feed)
    assert list(as_dict) == ["ya", "yb", "yc", "yd"]
    for name, w in zip(as_dict, want):
        assert np.array_equal(as_dict[name], w)
    # Another batch in the open dimension: planned again, still ORT's answer.
    feed5 = _mixed_feed(5)
    assert np.array_equal(s.run(["ya"], feed5)[0], ref.run(["ya"], feed5)[0])
    with pytest.raises(tessera.Error, match=r"no output named 'nope' \(outputs: 'ya', 'yb'"):
        s.run(["nope"], feed)


def test_run_refuses_uint16_for_float16(mixed):
    s = tessera.Session(mixed, targets="cpu,reference")
    feed = _mixed_feed()
    bits = feed["c"].view(np.uint16)
    with pytest.raises(tessera.Error, match=r"input 'c'.*float32, float16.*uint16 is not float16"):
        s.run(None, dict(feed, c=bits))
    # The same bits as numpy.float16 are float16.
    (yc,) = s.run(["yc"], dict(feed, c=bits.view(np.float16)))
    assert yc.dtype == np.float16 and np.array_equal(yc, _ort_session(mixed).run(["yc"], feed)[0])


def test_targets_as_a_string_a_list_and_with_options(mixed):
    feed = _mixed_feed()
    want = _ort_session(mixed).run(None, feed)
    for targets in ("cpu,reference", " cpu, reference ", ["cpu", "reference"], ["cpu,reference"]):
        s = tessera.Session(mixed, targets=targets)
        planned = s.plan()["targets"]
        assert len(planned) == 2 and planned[0].startswith("cpu")
        assert planned[1].startswith("reference")
        # The float32 Relu runs on cpu, the float16 Mul only on reference (cpu computes float32
        # and integers).
        plugins = {n["op_type"]: n["plugin"] for n in s.plan()["nodes"]}
        assert plugins["Relu"] == "cpu" and plugins["Mul"] == "reference"
        for g, w in zip(s.run(None, feed), want):
            assert np.array_equal(g, w)
    only_reference = tessera.Session(mixed, targets="reference")
    assert {n["plugin"] for n in only_reference.plan()["nodes"]} == {"reference"}
    # Options in brackets reach the plugin, which names the one it does not take.
    with pytest.raises(tessera.Error, match=r"targets= entry 'cpu\[bogus=1\]'.*bogus"):
        tessera.Session(mixed, targets="cpu[bogus=1]")
    with pytest.raises(tessera.Error, match=r"targets= entry 'reference\[x=1\]'"):
        tessera.Session(mixed, targets=["cpu", "reference[x=1]"])
    with pytest.raises(tessera.Error) as e:
        tessera.Session(mixed, targets="cpu[layout=nchw")
    assert "no closing ']'" in str(e.value) and "targets= entry" in str(e.value)
    assert "--targets" not in str(e.value)
    with pytest.raises(tessera.Error, match="each target is a string"):
        tessera.Session(mixed, targets=["cpu", 3])
    with pytest.raises(tessera.Error, match="targets=3 is neither a string"):
        tessera.Session(mixed, targets=3)


def test_paths_may_be_pathlike_and_never_hold_a_nul(model, x, tmp_path):
    want = tessera.Session(model, targets="cpu").run(None, {"data": x})[0]
    ref = _ort_session(model).run(None, {"data": x})[0]
    assert np.max(np.abs(want - ref)) <= 1e-4 * np.max(np.abs(ref)) + 1e-6
    s = tessera.Session(pathlib.Path(model), targets="cpu")
    assert np.array_equal(s.run(None, {"data": x})[0], want)
    package = tmp_path / "squeezenet.tsp"
    info = tessera.compile(pathlib.Path(model), package, targets="cpu")
    assert info["package"] == str(package) and package.exists()
    assert np.array_equal(tessera.Session(package).run(None, {"data": x})[0], want)
    # The prefix before the NUL is a real model; a C open() of the path would have read it.
    with pytest.raises(tessera.Error, match=r"model='.*squeezenet.onnx\\x00junk': .*NUL"):
        tessera.Session(model + "\0junk", targets="cpu")
    with pytest.raises(tessera.Error, match=r"output='.*other.tsp\\x00': .*NUL"):
        tessera.compile(model, str(tmp_path / "other.tsp") + "\0", targets="cpu")
    assert not (tmp_path / "other.tsp").exists()
    with pytest.raises(TypeError):
        tessera.Session(3)


def test_threads_and_precision_are_checked(mixed):
    feed = _mixed_feed()
    want = _ort_session(mixed).run(None, feed)
    for threads in (0, 1, 2):
        got = tessera.Session(mixed, targets="cpu,reference", threads=threads).run(None, feed)
        assert all(np.array_equal(g, w) for g, w in zip(got, want))
    for bad in (-1, 1025, 1 << 40):
        with pytest.raises(tessera.Error, match=rf"threads={bad} is outside 0\.\.1024"):
            tessera.Session(mixed, targets="cpu,reference", threads=bad)
    for bad in ("fp64", "FP16", ""):
        with pytest.raises(tessera.Error,
                           match=rf"precision='{bad}' is not one of fp32, fp16, fp16-acc32"):
            tessera.Session(mixed, targets="cpu,reference", precision=bad)
    with pytest.raises(tessera.Error, match="precision='int4'"):
        tessera.compile(mixed, mixed + ".tsp", precision="int4")


def test_precision_named_targets_do_not_honour_is_an_error_or_a_warning(mixed):
    feed = _mixed_feed()
    want = _ort_session(mixed).run(None, feed)
    # The cpu plugin runs fp32 only: core's own refusal, in Python's words.
    with pytest.raises(tessera.Error) as e:
        tessera.Session(mixed, targets="cpu,reference", precision="fp16")
    text = str(e.value)
    assert "failed to compile on cpu" in text and "'fp16'" in text
    assert "allow_fallback=True" in text
    assert "--allow-fallback" not in text and "partition.allow_fallback" not in text
    with pytest.warns(UserWarning, match="failed to compile on cpu.*fp16"):
        s = tessera.Session(mixed, targets="cpu,reference", precision="fp16",
                            allow_fallback=True)
    # A run at another batch plans again, and says so again.
    with pytest.warns(UserWarning, match="failed to compile on cpu.*fp16"):
        got = s.run(None, feed)
    assert {n["plugin"] for n in s.plan()["nodes"]} == {"reference"}
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.allclose(g, w, rtol=1e-3, atol=1e-3)


def test_precision_default_targets_do_not_honour_is_an_error_or_a_warning(mixed, open_hw):
    feed = _mixed_feed()
    want = _ort_session(mixed).run(None, feed)
    chosen = [t.split(" -> ")[0] for t in tessera.Session(mixed).plan()["targets"]]
    if chosen != ["cpu", "reference"]:
        pytest.skip(f"targets here are {chosen}; the case needs a machine without fp16 targets")
    # Core only notes such a fallback in the plan when no target was named; Python refuses it.
    with pytest.raises(tessera.Error) as e:
        tessera.Session(mixed, precision="fp16")
    text = str(e.value)
    assert "failed to compile on cpu" in text and "'fp16'" in text
    assert "no targets= named Tessera chose cpu, reference;" in text
    assert "allow_fallback=True" in text
    with pytest.warns(UserWarning, match="failed to compile on cpu.*fp16"):
        s = tessera.Session(mixed, precision="fp16", allow_fallback=True)
    with pytest.warns(UserWarning, match="failed to compile on cpu.*fp16"):
        got = s.run(None, feed)
    assert {n["plugin"] for n in s.plan()["nodes"]} == {"reference"}
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.allclose(g, w, rtol=1e-3, atol=1e-3)
    # compile() meets the same rule before it writes anything.
    package = mixed + ".fp16.tsp"
    with pytest.raises(tessera.Error, match="failed to compile on cpu.*allow_fallback=True"):
        tessera.compile(mixed, package, precision="fp16")
    assert not os.path.exists(package)
    with pytest.warns(UserWarning, match="failed to compile on cpu"):
        info = tessera.compile(mixed, package, precision="fp16", allow_fallback=True)
    assert info["precision"] == "fp16" and os.path.exists(package)
    # A graph planned at its first run meets the same rule there, at every run.
    s = tessera.Session(open_hw, precision="fp16")
    x = np.ones((1, 3, 4, 4), np.float32)
    for _ in range(2):
        with pytest.raises(tessera.Error, match="failed to compile on cpu"):
            s.run(None, {"x": x})
    with pytest.warns(UserWarning, match="failed to compile on cpu"):
        s = tessera.Session(open_hw, precision="fp16", allow_fallback=True)
        got = s.run(None, {"x": x})
    for g, w in zip(got, _ort_session(open_hw).run(None, {"x": x})):
        assert np.allclose(g, w, rtol=1e-6)
    # fp32 runs on cpu: no warning, no error.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = tessera.Session(mixed, precision="fp32")
        assert all(np.array_equal(g, w) for g, w in zip(s.run(None, feed), want))


def test_option_names_become_keywords():
    # Core's option names as core/src writes them, and what Python callers read.
    words = tessera._tessera._python_words
    assert words("another target (`allow_fallback`)") == "another target (allow_fallback=True)"
    assert words("x (no other target is tried without `allow_fallback`, which moves it to the "
                 "next target)") == ("x (no other target is tried without allow_fallback=True, "
                                     "which moves it to the next target)")
    assert words("m.tsp: does not fit (`replan_package` plans its graph again)") == \
        "m.tsp: does not fit (replan=True plans its graph again)"
    assert words("'p.tsp' already exists; pass `overwrite` to replace it") == \
        "'p.tsp' already exists; pass overwrite=True to replace it"
    assert words("`targets` entry 'cpu[': '[' has no closing ']'") == \
        "targets= entry 'cpu[': '[' has no closing ']'"
    # Options Python has no keyword for, other quoted text and flags stay as they are.
    assert words("raise it with `set_memory_limit`; see `tessera info`; --force `overwrite2`") == \
        "raise it with `set_memory_limit`; see `tessera info`; --force `overwrite2`"


def test_core_messages_name_python_keywords(mixed, tmp_path):
    package = str(tmp_path / "m.tsp")
    tessera.compile(mixed, package, targets="cpu,reference")
    with pytest.raises(tessera.Error) as e:
        tessera.compile(mixed, package, targets="cpu,reference")
    assert "overwrite=True" in str(e.value) and "--force" not in str(e.value)
    assert tessera.compile(mixed, package, targets="cpu,reference", overwrite=True)["nodes"] >= 1
    # An input the model gives no shape is refused naming it; input_shapes= gives it one.
    from onnx import helper, TensorProto as T
    shapeless = _small_model(tmp_path / "shapeless.onnx", [helper.make_tensor_value_info(
        "x", T.FLOAT, None)], [helper.make_tensor_value_info("y", T.FLOAT, None)],
        [helper.make_node("Relu", ["x"], ["y"])])
    with pytest.raises(tessera.Error, match="input 'x' has no shape") as e:
        tessera.Session(shapeless, targets="cpu")
    assert "--input-shape" not in str(e.value)
    s = tessera.Session(shapeless, targets="cpu", input_shapes={"x": [2, 3]})
    xs = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    want = _ort_session(shapeless).run(None, {"x": xs})[0]
    assert np.array_equal(s.run(None, {"x": xs})[0], want)
    with pytest.raises(tessera.Error, match="input_shapes= is for ONNX models"):
        tessera.Session(package, input_shapes={"a": [1, 4]})


# ---- Models as users bring them (issue 43): open sizes, data-dependent shapes ----

def _ocr_detector(path):
    """A DBNet-like text detector as Paddle2ONNX writes it: batch, height and width are -1."""
    from onnx import helper, numpy_helper, TensorProto as T, save
    rng = np.random.default_rng(3)
    w = lambda *s: numpy_helper.from_array((rng.standard_normal(s) * 0.3).astype(np.float32))
    inits = [w(8, 3, 3, 3), w(8, 8, 3, 3), w(1, 8, 1, 1),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32))]
    for t, name in zip(inits, ["w0", "w1", "w2", "scales"]):
        t.name = name
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["c0"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c0"], ["r0"]),
        helper.make_node("Conv", ["r0", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Resize", ["r1", "", "scales"], ["up"], mode="nearest"),
        helper.make_node("Conv", ["up", "w2"], ["logit"]),
        helper.make_node("Sigmoid", ["logit"], ["prob"]),
    ]
    x = helper.make_tensor_value_info("x", T.FLOAT, [-1, 3, -1, -1])
    graph = helper.make_graph(nodes, "ocr_det", [x],
                              [helper.make_tensor_value_info("prob", T.FLOAT, None)], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    save(m, str(path))
    return str(path)


def test_an_ocr_detector_runs_three_image_sizes_in_one_session(tmp_path):
    path = _ocr_detector(tmp_path / "ocr_det.onnx")
    s, ref = tessera.Session(path), _ort_session(path)
    assert s.get_inputs()[0].shape == [None, 3, None, None]
    rng = np.random.default_rng(5)
    for shape in ((1, 3, 64, 96), (1, 3, 48, 160), (2, 3, 96, 64)):
        x = rng.random(shape, dtype=np.float32)
        got, = s.run(None, {"x": x})
        want, = ref.run(None, {"x": x})
        assert got.shape == want.shape
        assert np.abs(got - want).max() <= 1e-3 * np.abs(want).max()
    assert s.plan()["plan_number"] == 3


def test_a_detector_with_non_max_suppression_runs_in_stages(tmp_path):
    """The wild suite's detector (tests/wild/check_wild.py: NonMaxSuppression, NonZero and an If
    on the boxes kept) through the Python module, every output against ONNX Runtime."""
    import onnx
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "wild"))
    import check_wild
    path = str(tmp_path / "detector.onnx")
    onnx.save(check_wild.detector_nms(), path)
    s, ref = tessera.Session(path, targets="cpu"), _ort_session(path)
    for seed in range(3):
        x = np.random.default_rng(seed).standard_normal((1, 8, 8, 8)).astype(np.float32)
        got, want = s.run(None, {"features": x}), ref.run(None, {"features": x})
        for g, w in zip(got, want):
            assert g.shape == w.shape
            if w.dtype == np.int64:
                assert g.tolist() == w.tolist()
            else:
                assert np.allclose(g, w, atol=1e-5)
    assert any("stages" in w for w in s.plan()["warnings"])


def test_a_deployment_opens_as_the_command_line_applies_it(model, x, tmp_path):
    """Session.from_deployment and `tessera run DEPLOY.yaml` share core's one mapping."""
    deploy = tmp_path / "deploy.yaml"
    deploy.write_text(
        "schema_version: 1\n"
        f"model: {model}\n"
        "targets:\n"
        "  - plugin: cpu\n"
        "    threads: 1\n"
        "  - reference\n"
        "precision: fp32\n")
    s = tessera.Session.from_deployment(deploy)
    assert [n["plugin"] for n in s.plan()["nodes"]].count("cpu") > 0
    name = s.get_inputs()[0].name
    got = s.run(None, {name: x})
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out"
    subprocess.run([os.environ["TESSERA_TOOL"], "run", str(deploy), "--quiet", "--repeat", "1",
                    "--input", f"{name}={tmp_path / 'x.npy'}", "--output-dir", str(out)],
                   check=True, capture_output=True)
    for arg, value in zip(s.get_outputs(), got):
        assert np.array_equal(np.load(out / f"{arg.name}.npy"), value)
    want = _ort_session(model).run(None, {name: x})
    for g, w in zip(got, want):
        assert np.abs(g - w).max() <= 1e-3 * np.abs(w).max()
    with pytest.raises(tessera.Error, match="deploy_missing.yaml"):
        tessera.Session.from_deployment(tmp_path / "deploy_missing.yaml")


def test_trusted_keys_refuse_an_unsigned_package_and_run_a_signed_one(model, x, tmp_path):
    tool = os.environ["TESSERA_TOOL"]
    made = subprocess.run([tool, "keygen", "-o", str(tmp_path / "lab")], capture_output=True,
                          text=True)
    if made.returncode != 0 and "no libsodium" in made.stderr:
        pytest.skip("built without libsodium")
    assert made.returncode == 0, made.stderr
    public = str(tmp_path / "lab.pub")
    package = str(tmp_path / "signed.tsp")
    tessera.compile(model, package, targets=["cpu"])
    with pytest.raises(tessera.Error, match="refused: it is not signed"):
        tessera.Session(package, trusted_keys=[public])
    with pytest.raises(tessera.Error, match="trusted_keys=.*64 hex digits"):
        tessera.Session(package, trusted_keys=["ed25519:00"])
    subprocess.run([tool, "sign", "--key", str(tmp_path / "lab.key"), package], check=True,
                   capture_output=True)
    key_text = pathlib.Path(public).read_text().strip()
    signed = tessera.Session(package, trusted_keys=[key_text]).run({"data": x})
    unsigned_check = tessera.Session(model, targets=["cpu"]).run({"data": x})
    for k in unsigned_check:
        assert np.array_equal(signed[k], unsigned_check[k])
