/* A C application on Tessera's C API: loads a package (.tsp) or an ONNX model, fills every float
 * input with sin(0.01 i) (the same pattern tests/capi/c_example_test.py gives ONNX Runtime), runs
 * it, and prints per output its name, shape, sum and first values, then the latency of a few runs.
 * Linked against libtessera-runtime; an ONNX model needs libtessera installed beside it.
 * Usage: tessera-c-example [--replan] MODEL.tsp|MODEL.onnx [TARGETS] [RUNS]
 * --replan: a package compiled for another device is planned again here instead of refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tessera/tessera_c.h"

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char** argv) {
  tessera_session_options options;
  tessera_session_options_init(&options);
  if (argc > 1 && strcmp(argv[1], "--replan") == 0) {
    options.replan_package = 1;
    --argc;
    ++argv;
  }
  if (argc < 2) {
    fprintf(stderr, "usage: tessera-c-example [--replan] MODEL.tsp|MODEL.onnx [TARGETS] [RUNS]\n");
    return 2;
  }
  options.targets = argc > 2 ? argv[2] : "cpu";
  const int runs = argc > 3 ? atoi(argv[3]) : 5;
  tessera_session* session = NULL;
  const double t0 = now_ms();
  if (tessera_session_create(argv[1], &options, &session) != TESSERA_OK) {
    fprintf(stderr, "error: %s\n", tessera_last_error());
    return 1;
  }
  printf("tessera %s: session ready in %.1f ms\n", tessera_version(), now_ms() - t0);

  const int32_t n = tessera_session_input_count(session);
  const char** names = calloc((size_t)n, sizeof(*names));
  tessera_tensor_view* views = calloc((size_t)n, sizeof(*views));
  float** buffers = calloc((size_t)n, sizeof(*buffers));
  int status = 0;
  for (int32_t i = 0; i < n && status == 0; ++i) {
    tessera_dtype dtype;
    int32_t rank;
    const int64_t* shape;
    tessera_session_input(session, i, &names[i], &dtype, &rank, &shape);
    size_t count = 1;
    for (int32_t d = 0; d < rank; ++d) count *= (size_t)(shape[d] < 0 ? 1 : shape[d]);
    if (dtype != TESSERA_DTYPE_FLOAT32) {
      fprintf(stderr, "error: input '%s' is not float32 (this example fills float inputs only)\n",
              names[i]);
      status = 1;
      break;
    }
    buffers[i] = malloc(count * sizeof(float));
    for (size_t k = 0; k < count; ++k) buffers[i][k] = (float)sin(0.01 * (double)k);
    views[i].dtype = dtype;
    views[i].rank = rank;
    views[i].shape = shape; /* open dimensions (-1) are refused by the run: give a fixed model */
    views[i].data = buffers[i];
  }
  tessera_outputs* outputs = NULL;
  if (status == 0 && tessera_session_run(session, n, names, views, &outputs) != TESSERA_OK) {
    fprintf(stderr, "error: %s\n", tessera_last_error());
    status = 1;
  }
  for (int32_t i = 0; status == 0 && i < tessera_outputs_count(outputs); ++i) {
    const char* name;
    tessera_tensor_view v;
    tessera_outputs_get(outputs, i, &name, &v);
    size_t count = 1;
    printf("output %s [", name);
    for (int32_t d = 0; d < v.rank; ++d) {
      printf(d ? ", %lld" : "%lld", (long long)v.shape[d]);
      count *= (size_t)v.shape[d];
    }
    double sum = 0;
    const float* data = v.data;
    for (size_t k = 0; k < count; ++k) sum += data[k];
    printf("] sum %.6g first", sum);
    for (size_t k = 0; k < count && k < 5; ++k) printf(" %.6g", data[k]);
    printf("\n");
  }
  tessera_outputs_release(outputs);
  if (status == 0 && runs > 0) {
    const double t1 = now_ms();
    for (int r = 0; r < runs && status == 0; ++r) {
      if (tessera_session_run(session, n, names, views, &outputs) != TESSERA_OK) {
        fprintf(stderr, "error: %s\n", tessera_last_error());
        status = 1;
      }
      tessera_outputs_release(outputs);
    }
    if (status == 0) printf("mean latency %.3f ms over %d runs\n", (now_ms() - t1) / runs, runs);
  }
  for (int32_t i = 0; i < n; ++i) free(buffers[i]);
  free(buffers);
  free(views);
  free(names);
  tessera_session_release(session);
  return status;
}
