/* Classifies an image with a compiled package (or an ONNX model) through Tessera's C API.
 *
 * Decodes the image (PNG, JPEG, BMP, ... through stb_image), resizes its shorter side to 8/7 of
 * the model's input size and crops the centre (bilinear, pixel centres aligned, as torchvision's
 * Resize + CenterCrop), normalises with ImageNet's mean and standard deviation into NCHW floats,
 * runs the model and prints the five most likely classes with their softmax probabilities, and
 * their names when a labels file (one name per line, class 0 first) is given.
 *
 * Usage: tessera-classify [--replan] MODEL.tsp|MODEL.onnx IMAGE [LABELS.txt] [TARGETS]
 * A package runs where it was compiled for; --replan plans it again for the devices here when
 * they differ (a package compiled on a workstation for its cpu, run on a board), instead of
 * refusing it. TARGETS (default: the package's, or every usable plugin for ONNX) is for ONNX
 * models. Linked against libtessera-runtime, an ONNX model needs libtessera installed beside it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stb/stb_image.h>

#include "tessera/tessera_c.h"

static const double kMean[3] = {0.485, 0.456, 0.406};
static const double kStd[3] = {0.229, 0.224, 0.225};

/* `rgb` (h x w x 3 bytes) to a 3 x side x side float tensor: shorter side scaled to
 * round(side * 8 / 7), centre crop, bilinear with half-pixel centres, normalised. */
static void preprocess(const unsigned char* rgb, int w, int h, int side, float* out) {
  const double scale = (double)lround(side * 8.0 / 7.0) / (double)(w < h ? w : h);
  const int rw = (int)lround(w * scale), rh = (int)lround(h * scale);
  const int left = (rw - side) / 2, top = (rh - side) / 2;
  for (int y = 0; y < side; ++y) {
    double sy = (y + top + 0.5) / scale - 0.5;
    if (sy < 0) sy = 0;
    const int y0 = (int)sy < h - 1 ? (int)sy : h - 1;
    const int y1 = y0 + 1 < h ? y0 + 1 : h - 1;
    const double fy = sy - y0 > 1 ? 1 : sy - y0;
    for (int x = 0; x < side; ++x) {
      double sx = (x + left + 0.5) / scale - 0.5;
      if (sx < 0) sx = 0;
      const int x0 = (int)sx < w - 1 ? (int)sx : w - 1;
      const int x1 = x0 + 1 < w ? x0 + 1 : w - 1;
      const double fx = sx - x0 > 1 ? 1 : sx - x0;
      for (int c = 0; c < 3; ++c) {
        const double a = rgb[(y0 * w + x0) * 3 + c], b = rgb[(y0 * w + x1) * 3 + c];
        const double d = rgb[(y1 * w + x0) * 3 + c], e = rgb[(y1 * w + x1) * 3 + c];
        const double v = (a * (1 - fx) + b * fx) * (1 - fy) + (d * (1 - fx) + e * fx) * fy;
        out[(c * side + y) * side + x] = (float)((v / 255.0 - kMean[c]) / kStd[c]);
      }
    }
  }
}

/* The name of class k from the labels file, or "" (names are read once, up to 1000). */
static const char* label(const char* path, int k) {
  static char names[1000][96];
  static int count = -1;
  if (count < 0) {
    count = 0;
    FILE* f = path ? fopen(path, "r") : NULL;
    while (f && count < 1000 && fgets(names[count], sizeof names[count], f)) {
      names[count][strcspn(names[count], "\r\n")] = '\0';
      ++count;
    }
    if (f) fclose(f);
  }
  return k < count ? names[k] : "";
}

int main(int argc, char** argv) {
  tessera_session_options options;
  tessera_session_options_init(&options);
  if (argc > 1 && strcmp(argv[1], "--replan") == 0) {
    options.replan_package = 1;
    --argc;
    ++argv;
  }
  if (argc < 3) {
    fprintf(stderr,
            "usage: tessera-classify [--replan] MODEL.tsp|MODEL.onnx IMAGE [LABELS.txt] "
            "[TARGETS]\n");
    return 2;
  }
  const char* labels = argc > 3 && argv[3][0] ? argv[3] : NULL;
  options.targets = argc > 4 ? argv[4] : NULL;
  tessera_session* session = NULL;
  if (tessera_session_create(argv[1], &options, &session) != TESSERA_OK) {
    fprintf(stderr, "error: %s\n", tessera_last_error());
    return 1;
  }
  const char* input = NULL;
  tessera_dtype dtype;
  int32_t rank = 0;
  const int64_t* shape = NULL;
  if (tessera_session_input_count(session) != 1 ||
      tessera_session_input(session, 0, &input, &dtype, &rank, &shape) != TESSERA_OK ||
      dtype != TESSERA_DTYPE_FLOAT32 || rank != 4 || shape[1] != 3 || shape[2] != shape[3] ||
      shape[2] <= 0) {
    fprintf(stderr, "error: %s: expected one float input of shape [1, 3, S, S]\n", argv[1]);
    tessera_session_release(session);
    return 1;
  }
  int w = 0, h = 0, channels = 0;
  unsigned char* rgb = stbi_load(argv[2], &w, &h, &channels, 3);
  if (rgb == NULL) {
    fprintf(stderr, "error: %s: %s\n", argv[2], stbi_failure_reason());
    tessera_session_release(session);
    return 1;
  }
  const int side = (int)shape[2];
  float* pixels = malloc(sizeof(float) * 3 * (size_t)side * (size_t)side);
  preprocess(rgb, w, h, side, pixels);
  stbi_image_free(rgb);

  const int64_t dims[4] = {1, 3, side, side};
  const tessera_tensor_view view = {TESSERA_DTYPE_FLOAT32, 4, dims, pixels};
  tessera_outputs* outputs = NULL;
  int status = 0;
  if (tessera_session_run(session, 1, &input, &view, &outputs) != TESSERA_OK) {
    fprintf(stderr, "error: %s\n", tessera_last_error());
    status = 1;
  } else {
    const char* name = NULL;
    tessera_tensor_view scores;
    tessera_outputs_get(outputs, 0, &name, &scores);
    int64_t n = 1;
    for (int32_t d = 0; d < scores.rank; ++d) n *= scores.shape[d];
    const float* logits = scores.data;
    float top = logits[0];
    for (int64_t i = 1; i < n; ++i) top = logits[i] > top ? logits[i] : top;
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += exp(logits[i] - top);
    printf("%s (%dx%d) -> %s:\n", argv[2], w, h, name);
    int used[5] = {-1, -1, -1, -1, -1};
    for (int rank_k = 0; rank_k < 5 && rank_k < n; ++rank_k) {
      int best = -1;
      for (int64_t i = 0; i < n; ++i) {
        int taken = 0;
        for (int j = 0; j < rank_k; ++j) taken |= used[j] == i;
        if (!taken && (best < 0 || logits[i] > logits[best])) best = (int)i;
      }
      used[rank_k] = best;
      printf("  #%d class %4d p %.6f %s\n", rank_k + 1, best, exp(logits[best] - top) / sum,
             label(labels, best));
    }
    tessera_outputs_release(outputs);
  }
  free(pixels);
  tessera_session_release(session);
  return status;
}
