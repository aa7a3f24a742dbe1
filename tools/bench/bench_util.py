"""Pieces the benchmark scripts share: ONNX Runtime's CPU session set up as ../shared/PEERS.md
asks (a fixed intra-op thread count, one inter-op thread, sequential execution), the median of
timed calls, and the JSON line a command prints last."""
import json
import statistics
import subprocess
import time


def ort_cpu_session(model, threads=0):
    """An ONNX Runtime CPU session of `model`; threads 0 leaves the intra-op count to ORT."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])


def timed_ms(call, repeat, warmup=0):
    """Milliseconds of each of `repeat` calls of `call` after `warmup` untimed ones, sorted."""
    for _ in range(warmup):
        call()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        call()
        times.append((time.perf_counter() - t) * 1e3)
    return sorted(times)


def median_ms(call, repeat, warmup=0):
    return statistics.median(timed_ms(call, repeat, warmup))


def torch_cuda_ms(torch, model, x, repeat, warmup):
    """Median ms of eager `model(x)` on the GPU, each call synchronised before the clock stops."""
    def call():
        model(x)
        torch.cuda.synchronize()
    with torch.no_grad():
        return median_ms(call, repeat, warmup)


def run_json(cmd):
    """The last line `cmd` prints, parsed as JSON; RuntimeError with its stderr if it fails."""
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])
