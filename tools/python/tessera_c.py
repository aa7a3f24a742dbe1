"""Python bindings of libtessera over its C API (core/include/tessera/tessera_c.h), with ctypes:
no compiled extension, so the same file works with any Python 3 and numpy.

    import tessera_c
    s = tessera_c.Session("model.onnx", targets="cpu", threads=2)
    outputs = s.run({"input": x})          # {name: numpy array}, in the model's output order

The library is found at $TESSERA_LIBRARY (a path to libtessera.so), else next to this file's
install (../../lib), else the build tree (../../build/core), else by the loader's search path.
Errors raise tessera_c.Error with the library's message (naming the file, node or input).
"""
import ctypes
import os

import numpy as np

_DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 6: np.int32, 7: np.int64, 9: np.bool_,
           10: np.float16}
_CODES = {np.dtype(v): k for k, v in _DTYPES.items()}


class Error(RuntimeError):
    pass


class _Options(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("targets", ctypes.c_char_p),
                ("threads", ctypes.c_int32), ("precision", ctypes.c_char_p),
                ("allow_fallback", ctypes.c_int32), ("plugin_dir", ctypes.c_char_p),
                ("no_packs", ctypes.c_int32), ("replan_package", ctypes.c_int32)]


class _View(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("data", ctypes.c_void_p)]


def _library():
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.environ.get("TESSERA_LIBRARY", ""),
                  os.path.join(here, "..", "..", "lib", "libtessera.so"),
                  os.path.join(here, "..", "..", "build", "core", "libtessera.so"), "libtessera.so"]
    for path in candidates:
        if path and (os.path.exists(path) or path == "libtessera.so"):
            try:
                lib = ctypes.CDLL(path)
                break
            except OSError:
                continue
    else:
        raise Error("libtessera.so not found: set TESSERA_LIBRARY to its path")
    lib.tessera_last_error.restype = ctypes.c_char_p
    lib.tessera_version.restype = ctypes.c_char_p
    lib.tessera_session_create.argtypes = [ctypes.c_char_p, ctypes.POINTER(_Options),
                                           ctypes.POINTER(ctypes.c_void_p)]
    lib.tessera_session_release.argtypes = [ctypes.c_void_p]
    lib.tessera_session_input_count.argtypes = [ctypes.c_void_p]
    lib.tessera_session_output_count.argtypes = [ctypes.c_void_p]
    port = [ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_char_p),
            ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int32),
            ctypes.POINTER(ctypes.POINTER(ctypes.c_int64))]
    lib.tessera_session_input.argtypes = port
    lib.tessera_session_output.argtypes = port
    lib.tessera_session_run.argtypes = [ctypes.c_void_p, ctypes.c_int32,
                                        ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(_View),
                                        ctypes.POINTER(ctypes.c_void_p)]
    lib.tessera_outputs_count.argtypes = [ctypes.c_void_p]
    lib.tessera_outputs_get.argtypes = [ctypes.c_void_p, ctypes.c_int32,
                                        ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(_View)]
    lib.tessera_outputs_release.argtypes = [ctypes.c_void_p]
    return lib


_lib = None


def _api():
    global _lib
    if _lib is None:
        _lib = _library()
    return _lib


def version():
    return _api().tessera_version().decode()


def _check(status):
    if status != 0:
        raise Error(_api().tessera_last_error().decode(errors="replace"))


class Session:
    """A model placed on the targets and compiled; run() may be called from several threads."""

    def __init__(self, model, targets="cpu", threads=0, precision=None, allow_fallback=False,
                 plugin_dir=None, no_packs=False, replan_package=False):
        lib = _api()
        o = _Options(ctypes.sizeof(_Options), targets.encode() if targets else None, threads,
                     precision.encode() if precision else None, int(allow_fallback),
                     plugin_dir.encode() if plugin_dir else None, int(no_packs),
                     int(replan_package))
        handle = ctypes.c_void_p()
        _check(lib.tessera_session_create(os.fsencode(model), ctypes.byref(o),
                                          ctypes.byref(handle)))
        self._handle = handle
        self.inputs = [self._port(lib.tessera_session_input, i)
                       for i in range(lib.tessera_session_input_count(handle))]
        self.outputs = [self._port(lib.tessera_session_output, i)
                        for i in range(lib.tessera_session_output_count(handle))]

    def _port(self, fn, i):
        name, dtype, rank = ctypes.c_char_p(), ctypes.c_int(), ctypes.c_int32()
        shape = ctypes.POINTER(ctypes.c_int64)()
        _check(fn(self._handle, i, ctypes.byref(name), ctypes.byref(dtype), ctypes.byref(rank),
                  ctypes.byref(shape)))
        return name.value.decode(), _DTYPES[dtype.value], [shape[d] for d in range(rank.value)]

    def run(self, feeds):
        lib = _api()
        arrays = {k: np.ascontiguousarray(v) for k, v in feeds.items()}
        names = (ctypes.c_char_p * len(arrays))(*[k.encode() for k in arrays])
        views = (_View * len(arrays))()
        shapes = []
        for i, a in enumerate(arrays.values()):
            if a.dtype not in _CODES:
                raise Error(f"input '{list(arrays)[i]}': dtype {a.dtype} is not one Tessera holds")
            shapes.append((ctypes.c_int64 * a.ndim)(*a.shape))
            views[i] = _View(_CODES[a.dtype], a.ndim, shapes[-1], a.ctypes.data)
        out = ctypes.c_void_p()
        _check(lib.tessera_session_run(self._handle, len(arrays), names, views, ctypes.byref(out)))
        try:
            result = {}
            for i in range(lib.tessera_outputs_count(out)):
                name, view = ctypes.c_char_p(), _View()
                _check(lib.tessera_outputs_get(out, i, ctypes.byref(name), ctypes.byref(view)))
                shape = [view.shape[d] for d in range(view.rank)]
                dtype = np.dtype(_DTYPES[view.dtype])
                count = int(np.prod(shape)) if shape else 1
                buf = (ctypes.c_char * (count * dtype.itemsize)).from_address(view.data)
                result[name.value.decode()] = np.frombuffer(buf, dtype=dtype).reshape(shape).copy()
            return result
        finally:
            lib.tessera_outputs_release(out)

    def __del__(self):
        if getattr(self, "_handle", None) and _lib is not None:
            _lib.tessera_session_release(self._handle)
            self._handle = None
