"""Tessera from Python: run a compiled package (or an ONNX model) on the target plugins, with
ONNX Runtime's InferenceSession calls.

    import tessera
    tessera.compile("mobilenet_v2.onnx", "mobilenet_v2.tsp", targets="cpu")
    s = tessera.Session("mobilenet_v2.tsp")              # runs where it was compiled for
    probs, = s.run(None, {"data": x})                   # ORT's form: a list, in output order
    probs = s.run({"data": x})["output"]                # or {output name: numpy array}
    s.get_inputs()[0].shape, s.plan()["nodes"][0], s.bench({"data": x})["median_ms"]

Session(model, targets=None, precision=None, threads=0, allow_fallback=False, replan=False,
input_shapes=None, trusted_keys=None): model is a path (str or os.PathLike); targets a string ("mali:any,cpu",
options in brackets: "mali:any[layout=nchw]") or a list of them; precision fp32, fp16 or
fp16-acc32; threads 0..1024 (0 = each plugin's default). A region that fails to compile where
it was planned (a precision its target does not run) is an error unless allow_fallback=True,
which moves it to the next target and warns (warnings.warn). trusted_keys: public keys
("ed25519:<hex>" or absolute .pub paths from `tessera keygen`); given, a package and every pack
must be signed by one of them (`tessera sign`), or the session is refused with the reason.
Errors raise tessera.Error (a RuntimeError) naming the file, node, input or keyword.

compile(model, output, targets=None, precision=None, overwrite=False, input_shapes=None,
allow_fallback=False) takes the same keywords and writes a package (.tsp).
"""
from ._tessera import Error, NodeArg, Session, compile, version

__all__ = ["Error", "NodeArg", "Session", "compile", "version"]
__version__ = version()
