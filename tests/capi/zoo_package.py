"""A zoo network as ONNX and as a package compiled for `cpu`, for the tests of the C examples."""
import os
import subprocess


def zoo_package(tessera, directory, net="squeezenet_v1.1"):
    """Writes NET.onnx (`tessera zoo`) and NET.tsp (`tessera compile --targets cpu`) into
    directory; returns their paths."""
    model = os.path.join(directory, net + ".onnx")
    package = os.path.join(directory, net + ".tsp")
    subprocess.run([tessera, "zoo", net, "-o", model], check=True, capture_output=True)
    subprocess.run([tessera, "compile", model, "--targets", "cpu", "-o", package], check=True,
                   capture_output=True)
    return model, package
