"""The capi scripts' one requirement: onnxruntime (skip with 77 outside CI, fail in CI)."""
import os
import sys


def import_onnxruntime():
    try:
        import onnxruntime
        return onnxruntime
    except ImportError:
        in_ci = os.environ.get("CI") == "true"
        print("CI requires onnxruntime (CI=true), absent here" if in_ci else "needs onnxruntime")
        sys.exit(1 if in_ci else 77)
