"""Tessera from Python: run a compiled package (or an ONNX model) on the target plugins.

    import tessera
    tessera.compile("mobilenet_v2.onnx", "mobilenet_v2.tsp", targets=["cpu"])
    s = tessera.Session("mobilenet_v2.tsp")              # runs where it was compiled for
    probs = s.run({"input": x})["output"]               # numpy in, numpy out (no output copy)
    s.plan()["nodes"][0], s.bench({"input": x})["median_ms"]

Session(model, targets=None, precision=None, threads=0, allow_fallback=False, replan=False);
errors raise tessera.Error (a RuntimeError) naming the file, node or input.
"""
from ._tessera import Error, Session, compile, version

__all__ = ["Error", "Session", "compile", "version"]
__version__ = version()
