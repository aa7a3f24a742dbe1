// The schedules of the kernels in plugins/opencl/kernels that several shared ops and helpers
// launch (strided copies, pads, row reductions and norms, softmax, matrix products).
// Each is described here once for every OpenCL plugin; a schedule one op alone launches is
// described in that op's file instead.
#include "tessera_opencl/lowering.hpp"

namespace tessera::opencl {
namespace {

const Knob kWgY = {"wg_y", {1, 2, 4, 8}, false};

const Schedule kStridedCopy{"copy.strided", "strided.cl", "strided_copy_f32", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kStridedCopy);
const Schedule kStridedStore{"copy.strided_store", "strided.cl", "strided_store_f32",
                             {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kStridedStore);
const Schedule kPad{"pad.strided", "pad.cl", "pad_f32", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kPad);
const Schedule kReduceRows{"reduce.rows", "reduce.cl", "reduce_rows_f32", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kReduceRows);
const Schedule kSoftmax{"softmax.rows", "softmax.cl", "softmax_rows_f32", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kSoftmax);
const Schedule kLayerNormRows{"layer_norm.rows", "layer_norm.cl", "layer_norm_rows_f32",
                              {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kLayerNormRows);
// threads_per_row work-items share a row (a power of two), rows_per_group rows a group.
const Schedule kLayerNormGroup{"layer_norm.group",
                               "layer_norm.cl",
                               "layer_norm_group_f32",
                               {{"threads_per_row", {8, 16, 32, 64, 128, 256}, false},
                                {"rows_per_group", {1, 2, 4, 8}, false}}};
TESSERA_OPENCL_SCHEDULE(kLayerNormGroup);
// rows_per_item x cols_per_item: the output tile of a work-item.
const Schedule kMatMulBatched{"matmul.batched",
                              "matmul.cl",
                              "gemm_batched_f32",
                              {wg_x_knob(),
                               kWgY,
                               {"rows_per_item", {1, 2, 4, 8}, true, "MM_ROWS"},
                               {"cols_per_item", {1, 2, 4, 8}, true, "MM_COLS"}}};
TESSERA_OPENCL_SCHEDULE(kMatMulBatched);
// The reduction split k_split ways in the work-group (local dimension 2); wg_x 0: 64 / k_split
// work-items along N.
const Schedule kGemmSplit{"gemm.split",
                          "matmul.cl",
                          "gemm_split_f32",
                          {wg_x_knob(), {"k_split", {1, 2, 4, 8, 16, 32}, false}}};
TESSERA_OPENCL_SCHEDULE(kGemmSplit);
// A (group_side * per_item)^2 tile per work-group through __local memory, k_tile deep.
const Schedule kMatMulTiled{"matmul.tiled",
                            "matmul.cl",
                            "gemm_tiled_f32",
                            {{"group_side", {4, 8, 16}, true, "MT_WG"},
                             {"per_item", {1, 2, 4}, true, "MT_R"},
                             {"k_tile", {8, 16, 32}, true, "MT_K"}}};
TESSERA_OPENCL_SCHEDULE(kMatMulTiled);

}  // namespace
}  // namespace tessera::opencl
