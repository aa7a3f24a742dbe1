// Packing of GEMM operands into micro-kernel panels (kernels.hpp: PackedMatrix).
#include <tbb/parallel_for.h>

#include <algorithm>

#include "kernels/kernels.hpp"

namespace tessera::cpu {
namespace {

// One panel of A with MR rows known at compile time: k outer, rows inner, so the panel is
// written in order and the MR source rows are read as MR sequential streams. Rows-outer order
// (each row scattered at a stride of MR floats) with a zero fill of the whole buffer first made
// packing cost twice the GEMM for attention's P V (256 x 256 by 256 x 16 per head).
template <int MR>
void pack_panel(const float* const* rows, int64_t count, int64_t k, float* dst) {
  if (count == MR) {
    for (int64_t q = 0; q < k; ++q, dst += MR) {
      for (int r = 0; r < MR; ++r) dst[r] = rows[r][q];
    }
    return;
  }
  for (int64_t q = 0; q < k; ++q, dst += MR) {
    int r = 0;
    for (; r < count; ++r) dst[r] = rows[r][q];
    for (; r < MR; ++r) dst[r] = 0.0f;
  }
}

// Sets out's shape and panel width and sizes its data for `panels` panels of panel x depth
// floats plus `slack`; returns the panel count.
int64_t start_packing(PackedMatrix* out, int64_t rows, int64_t cols, int64_t panel,
                      int64_t panels, int64_t depth, int64_t slack) {
  out->rows = rows;
  out->cols = cols;
  out->panel = panel;
  out->data.resize(static_cast<size_t>(panels * panel * depth + slack));
  return panels;
}

}  // namespace

void pack_a(const float* a, int64_t m, int64_t k, int64_t row_stride, int64_t col_stride,
            PackedMatrix* out, int64_t mr) {
  // The column tail (simd.cpp) loads whole vectors of a panel's rows: 8 floats from the last k
  // step of a 6- or 12-row panel read up to 4 floats past it.
  constexpr int64_t kSlack = 16;
  const int64_t panels = start_packing(out, m, k, mr, (m + mr - 1) / mr, k, kSlack);
  std::fill(out->data.end() - kSlack, out->data.end(), 0.0f);
  for (int64_t p = 0; p < panels; ++p) {
    float* dst = out->data.data() + p * mr * k;
    const int64_t count = std::min(mr, m - p * mr);
    if (col_stride == 1 && (mr == 6 || mr == 8 || mr == 12)) {
      const float* rows[12];
      for (int64_t r = 0; r < count; ++r) rows[r] = a + (p * mr + r) * row_stride;
      if (mr == 6) pack_panel<6>(rows, count, k, dst);
      if (mr == 8) pack_panel<8>(rows, count, k, dst);
      if (mr == 12) pack_panel<12>(rows, count, k, dst);
      continue;
    }
    for (int64_t q = 0; q < k; ++q) {
      for (int64_t r = 0; r < mr; ++r) {
        dst[q * mr + r] = r < count ? a[(p * mr + r) * row_stride + q * col_stride] : 0.0f;
      }
    }
  }
}

void pack_b(const float* b, int64_t k, int64_t n, int64_t row_stride, int64_t col_stride,
            PackedMatrix* out, int64_t nr) {
  const int64_t panels = start_packing(out, k, n, nr, (n + nr - 1) / nr, k, 0);
  tbb::parallel_for(int64_t{0}, panels, [&](int64_t p) {
    float* dst = out->data.data() + p * nr * k;
    const int64_t j0 = p * nr, width = std::min(nr, n - j0);
    for (int64_t q = 0; q < k; ++q) {
      const float* src = b + q * row_stride + j0 * col_stride;
      float* row = dst + q * nr;
      if (col_stride == 1) {
        std::copy(src, src + width, row);
      } else {
        for (int64_t j = 0; j < width; ++j) row[j] = src[j * col_stride];
      }
      std::fill(row + width, row + nr, 0.0f);
    }
  });
}

}  // namespace tessera::cpu
