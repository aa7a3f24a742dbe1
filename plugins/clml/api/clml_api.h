/* Tessera's own declarations of Qualcomm's CLML interface (the OpenCL extension cl_qcom_ml_ops),
 * written from the documented API: the types, constants and descriptors the clml plugin uses,
 * and the interface tables of majors 2 and 3 (whose slot order is the ABI).
 *
 * Built with TESSERA_CLML_SDK_INCLUDE (the folder holding CL/cl_qcom_ml_ops.h of Qualcomm's
 * Adreno OpenCL ML SDK), this header includes the SDK's header instead, so the plugin compiles
 * against the vendor's own declarations; the names below are spelled as the SDK spells them.
 *
 * Layout facts the declarations rely on (LP64): every enum is a 4-byte int; cl_bitfield is 8
 * bytes, so the convolution descriptor has 4 bytes of padding before `flags`; each interface
 * table starts with the major and minor version and then one function pointer per slot. Majors
 * are not supersets of each other: major 2 and major 3 put the same function in different slots,
 * which is why each has its own struct. Training slots the plugin never calls are `void*`. */
#ifndef TESSERA_CLML_API_H
#define TESSERA_CLML_API_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stdint.h>

#ifdef TESSERA_CLML_USE_SDK
#include <CL/cl_qcom_ml_ops.h>
#else

#ifdef __cplusplus
extern "C" {
#endif

#define CL_QCOM_ML_OPS_H_MAJOR_VERSION 3
#define CL_QCOM_ML_OPS_H_MINOR_VERSION 0
#define CL_ML_TENSOR_MAX_DIMS_QCOM 5
#define CL_ML_TENSOR_MAX_SPATIAL_DIMS_QCOM 3

#define CL_ML_OP_PROPERTY_LIST_END_QCOM 0
#define CL_ML_OP_REQUIRE_TUNING_CACHE_HIT_QCOM 1
#define CL_ML_BATCH_NORM_OP_EPSILON_QCOM 4
#define CL_ML_PAD_OP_CONSTANT_VALUE_QCOM 5
#define CL_ML_TENSOR_PROPERTY_LIST_END_QCOM 0

#define CL_ML_OP_NOT_ACCELERATED_QCOM (-1102)
#define CL_ML_INVALID_TENSOR_LAYOUT_QCOM (-1103)

typedef struct _cl_ml_tensor_qcom* cl_ml_tensor_qcom;
typedef struct _cl_ml_op_qcom* cl_ml_op_qcom;
typedef struct _cl_ml_tuning_cache_qcom* cl_ml_tuningcache_qcom;
typedef struct _cl_ml_tensor_mem_desc_set_qcom* cl_ml_tensor_mem_desc_set_qcom;

typedef intptr_t cl_ml_op_properties_qcom;
typedef intptr_t cl_ml_tensor_properties_qcom;

typedef enum {
  CL_TENSOR_LAYOUT_OPTIMAL_QCOM = 0,
  CL_TENSOR_LAYOUT_NCHW_QCOM = 1,
  CL_TENSOR_LAYOUT_NHWC_QCOM = 2
} cl_ml_tensor_layout_qcom;

typedef enum {
  CL_TENSOR_DIMENSIONS_4D_QCOM = 0,
  CL_TENSOR_DIMENSIONS_5D_QCOM = 1,
  CL_TENSOR_UNUSED_QCOM = 2
} cl_ml_tensor_dimensions_qcom;

typedef enum {
  CL_GEMM_TRANSFORM_NONE_QCOM = 0,
  CL_GEMM_TRANSFORM_TRANSPOSE_QCOM = 1
} cl_gemm_transform_qcom;

typedef enum {
  CL_FC_WEIGHT_TRANSFORM_NONE_QCOM = 0,
  CL_FC_WEIGHT_TRANSFORM_TRANSPOSE_QCOM = 1
} cl_fc_weight_transform_qcom;

typedef enum {
  CL_ARITHMETIC_MODE_FP16_QCOM = 0,
  CL_ARITHMETIC_MODE_FP16_ACC32_QCOM = 1,
  CL_ARITHMETIC_MODE_FP32_QCOM = 2,
  CL_ARITHMETIC_MODE_INT32_QCOM = 3
} cl_arithmetic_mode_qcom;

typedef enum {
  CL_CONVOLUTION_MODE_CONVOLUTION_QCOM = 0,
  CL_CONVOLUTION_MODE_TRANSPOSE_QCOM = 1,
  CL_CONVOLUTION_MODE_DEPTHWISE_QCOM = 2
} cl_convolution_mode_qcom;

typedef enum { CL_BATCHNORM_MODE_SPATIAL_QCOM = 0 } cl_batchnorm_mode_qcom;

/* The SDK spells these without the _QCOM suffix. */
typedef enum {
  CL_ACTIVATION_RELU = 0,
  CL_ACTIVATION_TANH = 1,
  CL_ACTIVATION_SIGMOID = 2,
  CL_ACTIVATION_RELU6 = 3,
  CL_ACTIVATION_ELU = 4,
  CL_ACTIVATION_PRELU = 5,
  CL_ACTIVATION_LEAKY_RELU = 6
} cl_activation_function_qcom;

typedef enum { CL_DO_NOT_PROPAGATE_NAN_QCOM = 0, CL_PROPAGATE_NAN_QCOM = 1 } cl_nan_mode_qcom;

typedef enum {
  CL_POOLING_MODE_MAX_QCOM = 0,
  CL_POOLING_MODE_AVERAGE_INCLUDE_PADDING_QCOM = 1,
  CL_POOLING_MODE_AVERAGE_EXCLUDE_PADDING_QCOM = 2,
  CL_POOLING_MODE_GLOBAL_MAX_QCOM = 3,
  CL_POOLING_MODE_GLOBAL_AVERAGE_QCOM = 4
} cl_pooling_mode_qcom;

typedef enum {
  CL_TENSOR_OP_ADD_QCOM = 0,
  CL_TENSOR_OP_SUB_QCOM = 1,
  CL_TENSOR_OP_MUL_QCOM = 2,
  CL_TENSOR_OP_MIN_QCOM = 3,
  CL_TENSOR_OP_MAX_QCOM = 4,
  CL_TENSOR_OP_DIV_QCOM = 5
} cl_binary_op_qcom;

typedef enum { CL_SOFTMAX_ALGORITHM_ACCURATE_QCOM = 1 } cl_softmax_algorithm_qcom;

typedef enum {
  CL_SOFTMAX_MODE_INSTANCE_QCOM = 0,
  CL_SOFTMAX_MODE_CHANNEL_QCOM = 1,
  CL_SOFTMAX_MODE_SPATIAL_QCOM = 2
} cl_softmax_mode_qcom;

typedef enum {
  CL_PAD_MODE_CONSTANT_QCOM = 0,
  CL_PAD_MODE_REFLECT_QCOM = 1,
  CL_PAD_MODE_SYMMETRIC_QCOM = 2,
  CL_PAD_MODE_EDGE_QCOM = 3
} cl_pad_mode_qcom;

typedef enum { CL_CLIP_BY_VALUE_QCOM = 0, CL_CLIP_BY_NORM_QCOM = 1 } cl_clip_mode_qcom;

typedef struct _cl_ml_tensor_desc_qcom {
  cl_channel_type data_type; /* CL_FLOAT or CL_HALF_FLOAT */
  cl_ml_tensor_layout_qcom layout;
  cl_uint n, c, h, w;
  cl_uint d;
  cl_ml_tensor_dimensions_qcom num_dimensions;
  cl_int stride[CL_ML_TENSOR_MAX_DIMS_QCOM]; /* 0: packed */
} cl_ml_tensor_desc_qcom;

typedef struct _cl_ml_value_qcom {
  union {
    cl_float fp32;
    cl_half fp16;
    cl_int intg32;
  } u;
  cl_channel_type type;
} cl_ml_value_qcom;

typedef struct _cl_ml_tensor_memory_desc {
  cl_ml_tensor_qcom tensor;
  cl_mem memory;
} cl_ml_tensor_memory_desc_qcom;

typedef struct _cl_ml_op_convolution_desc_qcom {
  cl_convolution_mode_qcom mode;
  cl_uint group_count;
  cl_uint num_dimensions; /* spatial dims + 2: 4 for 2-D */
  cl_uint input_padding_before[CL_ML_TENSOR_MAX_SPATIAL_DIMS_QCOM]; /* [0] H, [1] W */
  cl_uint input_padding_after[CL_ML_TENSOR_MAX_SPATIAL_DIMS_QCOM];
  cl_uint filter_stride[CL_ML_TENSOR_MAX_SPATIAL_DIMS_QCOM];
  cl_uint dilation[CL_ML_TENSOR_MAX_SPATIAL_DIMS_QCOM];
  cl_bitfield flags;
  cl_arithmetic_mode_qcom arithmetic_mode;
} cl_ml_op_convolution_desc_qcom;

typedef struct _cl_ml_op_activation_desc_qcom {
  cl_activation_function_qcom function;
  cl_nan_mode_qcom nan_propagation;
  cl_arithmetic_mode_qcom arithmetic_mode;
} cl_ml_op_activation_desc_qcom;

typedef struct _cl_ml_op_batchnorm_desc_qcom {
  cl_batchnorm_mode_qcom mode;
  cl_arithmetic_mode_qcom arithmetic_mode;
} cl_ml_op_batchnorm_desc_qcom;

typedef struct _cl_ml_op_pooling_desc_qcom {
  cl_pooling_mode_qcom mode;
  cl_uint num_dimensions;
  cl_uint input_padding_before[CL_ML_TENSOR_MAX_SPATIAL_DIMS_QCOM];
  cl_uint input_padding_after[CL_ML_TENSOR_MAX_SPATIAL_DIMS_QCOM];
  cl_uint stride[CL_ML_TENSOR_MAX_SPATIAL_DIMS_QCOM];
  cl_uint window_size[CL_ML_TENSOR_MAX_SPATIAL_DIMS_QCOM];
  cl_nan_mode_qcom nan_propagation;
  cl_arithmetic_mode_qcom arithmetic_mode;
} cl_ml_op_pooling_desc_qcom;

typedef struct _cl_ml_op_fully_connected_desc_qcom {
  cl_uint first_flatten_axis;
  cl_fc_weight_transform_qcom weight_transform;
  cl_arithmetic_mode_qcom arithmetic_mode;
} cl_ml_op_fully_connected_desc_qcom;

typedef struct _cl_ml_op_gemm_desc_qcom {
  cl_uint m, n, k;
  cl_gemm_transform_qcom trans_a;
  cl_gemm_transform_qcom trans_b;
  cl_ml_value_qcom alpha;
  cl_ml_value_qcom beta;
  cl_arithmetic_mode_qcom arithmetic_mode;
} cl_ml_op_gemm_desc_qcom;

/* C = (alpha * A) <op> (beta * B) + gamma * C */
typedef struct _cl_ml_op_binary_desc_qcom {
  cl_binary_op_qcom binary_op;
  cl_ml_value_qcom alpha;
  cl_ml_value_qcom beta;
  cl_ml_value_qcom gamma;
  cl_arithmetic_mode_qcom arithmetic_mode;
} cl_ml_op_binary_desc_qcom;

typedef struct _cl_ml_op_softmax_desc_qcom {
  cl_softmax_algorithm_qcom algo;
  cl_softmax_mode_qcom mode;
  cl_arithmetic_mode_qcom arithmetic_mode;
} cl_ml_op_softmax_desc_qcom;

typedef struct _cl_ml_op_concat_desc_qcom {
  cl_uint axis;
  cl_uint num_input_tensors;
  cl_arithmetic_mode_qcom arithmetic_mode;
} cl_ml_op_concat_desc_qcom;

typedef struct _cl_ml_op_resize_bilinear_desc_qcom {
  cl_bool align_corners;
  cl_bool half_pixel_centers;
  cl_arithmetic_mode_qcom arithmetic_mode;
} cl_ml_op_resize_bilinear_desc_qcom;

/* paddings: (before, after) per NCHW dim, in dim order; paddings_shape {4, 2} for rank 4. */
typedef struct _cl_ml_op_pad_desc_qcom {
  cl_pad_mode_qcom pad_mode;
  cl_uint paddings_shape[2];
  cl_uint paddings[8];
  cl_arithmetic_mode_qcom arithmetic_mode;
} cl_ml_op_pad_desc_qcom;

typedef struct _cl_ml_op_clip_desc_qcom {
  cl_clip_mode_qcom clip_mode;
  cl_ml_value_qcom clip_value_max;
  cl_ml_value_qcom clip_value_min;
  cl_arithmetic_mode_qcom arithmetic_mode;
} cl_ml_op_clip_desc_qcom;

/* ---- function types of the slots the plugin calls (all return cl_int, plain C convention) ---- */

#define TSR_CLML_OP_TAIL cl_ml_op_qcom *op, cl_ml_tuningcache_qcom tuning_cache
typedef const cl_ml_op_properties_qcom* tsr_clml_props;

typedef cl_int (*tsr_clml_create_gemm)(cl_context, tsr_clml_props, const cl_ml_op_gemm_desc_qcom*,
                                       cl_ml_tensor_qcom a, cl_ml_tensor_qcom b,
                                       cl_ml_tensor_qcom c, TSR_CLML_OP_TAIL);
typedef cl_int (*tsr_clml_create_fully_connected)(cl_context, tsr_clml_props,
                                                  const cl_ml_op_fully_connected_desc_qcom*,
                                                  cl_ml_tensor_qcom input, cl_ml_tensor_qcom weight,
                                                  cl_ml_tensor_qcom bias, cl_ml_tensor_qcom output,
                                                  TSR_CLML_OP_TAIL);
typedef cl_int (*tsr_clml_create_convolution)(cl_context, tsr_clml_props,
                                              const cl_ml_op_convolution_desc_qcom*,
                                              cl_ml_tensor_qcom input, cl_ml_tensor_qcom weight,
                                              cl_ml_tensor_qcom bias, cl_ml_tensor_qcom output,
                                              TSR_CLML_OP_TAIL);
typedef cl_int (*tsr_clml_create_batchnorm)(cl_context, tsr_clml_props,
                                            const cl_ml_op_batchnorm_desc_qcom*,
                                            cl_ml_tensor_qcom input, cl_ml_tensor_qcom mean,
                                            cl_ml_tensor_qcom variance, cl_ml_tensor_qcom scale,
                                            cl_ml_tensor_qcom bias, cl_ml_tensor_qcom output,
                                            TSR_CLML_OP_TAIL);
typedef cl_int (*tsr_clml_create_activation)(cl_context, tsr_clml_props,
                                             const cl_ml_op_activation_desc_qcom*,
                                             cl_ml_tensor_qcom input, cl_ml_tensor_qcom param,
                                             cl_ml_tensor_qcom output, TSR_CLML_OP_TAIL);
typedef cl_int (*tsr_clml_create_pooling)(cl_context, tsr_clml_props,
                                          const cl_ml_op_pooling_desc_qcom*,
                                          cl_ml_tensor_qcom input, cl_ml_tensor_qcom mask,
                                          cl_ml_tensor_qcom output, TSR_CLML_OP_TAIL);
typedef cl_int (*tsr_clml_create_conv_activation)(cl_context, tsr_clml_props,
                                                  const cl_ml_op_convolution_desc_qcom*,
                                                  const cl_ml_op_activation_desc_qcom*,
                                                  cl_ml_tensor_qcom input, cl_ml_tensor_qcom weight,
                                                  cl_ml_tensor_qcom bias, cl_ml_tensor_qcom param,
                                                  cl_ml_tensor_qcom output, TSR_CLML_OP_TAIL);
typedef cl_int (*tsr_clml_create_binary)(cl_context, tsr_clml_props,
                                         const cl_ml_op_binary_desc_qcom*, cl_ml_tensor_qcom a,
                                         cl_ml_tensor_qcom b, cl_ml_tensor_qcom c,
                                         TSR_CLML_OP_TAIL);
typedef cl_int (*tsr_clml_create_softmax)(cl_context, tsr_clml_props,
                                          const cl_ml_op_softmax_desc_qcom*,
                                          cl_ml_tensor_qcom input, cl_ml_tensor_qcom output,
                                          TSR_CLML_OP_TAIL);
typedef cl_int (*tsr_clml_create_concat)(cl_context, tsr_clml_props,
                                         const cl_ml_op_concat_desc_qcom*,
                                         cl_ml_tensor_qcom* inputs, cl_ml_tensor_qcom output,
                                         TSR_CLML_OP_TAIL);
typedef cl_int (*tsr_clml_create_reshape)(cl_context, tsr_clml_props, cl_ml_tensor_qcom input,
                                          cl_ml_tensor_qcom output, TSR_CLML_OP_TAIL);
typedef cl_int (*tsr_clml_create_resize_bilinear)(cl_context, tsr_clml_props,
                                                  const cl_ml_op_resize_bilinear_desc_qcom*,
                                                  cl_ml_tensor_qcom input, cl_ml_tensor_qcom output,
                                                  TSR_CLML_OP_TAIL);
typedef cl_int (*tsr_clml_create_pad)(cl_context, tsr_clml_props, const cl_ml_op_pad_desc_qcom*,
                                      cl_ml_tensor_qcom input, cl_ml_tensor_qcom output,
                                      TSR_CLML_OP_TAIL);
typedef cl_int (*tsr_clml_create_clip)(cl_context, tsr_clml_props, const cl_ml_op_clip_desc_qcom*,
                                       cl_ml_tensor_qcom input, cl_ml_tensor_qcom output,
                                       TSR_CLML_OP_TAIL);
typedef cl_int (*tsr_clml_create_tensor)(cl_context, const cl_ml_tensor_properties_qcom*,
                                         const cl_ml_tensor_desc_qcom*, cl_ml_tensor_qcom*);
typedef cl_int (*tsr_clml_tensor_memory_size)(cl_context, cl_ml_tensor_qcom, cl_uint*);
typedef cl_int (*tsr_clml_release_op)(cl_ml_op_qcom);
typedef cl_int (*tsr_clml_release_tensor)(cl_ml_tensor_qcom);
typedef cl_int (*tsr_clml_enqueue_op)(cl_command_queue, cl_ml_op_qcom,
                                      cl_ml_tensor_mem_desc_set_qcom, cl_uint, const cl_event*,
                                      cl_event*);
typedef cl_int (*tsr_clml_read_tensor)(cl_command_queue, cl_ml_tensor_qcom, cl_mem, void* host,
                                       cl_ml_tensor_layout_qcom host_layout, cl_uint,
                                       const cl_event*, cl_event*);
typedef cl_int (*tsr_clml_write_tensor)(cl_command_queue, void* host,
                                        cl_ml_tensor_layout_qcom host_layout, cl_ml_tensor_qcom,
                                        cl_mem, cl_uint, const cl_event*, cl_event*);
typedef cl_int (*tsr_clml_copy_tensor)(cl_command_queue, cl_ml_tensor_qcom src, cl_mem src_mem,
                                       cl_ml_tensor_qcom dst, cl_mem dst_mem, cl_uint,
                                       const cl_event*, cl_event*);
typedef cl_int (*tsr_clml_create_tuning_cache)(cl_ml_tuningcache_qcom*);
typedef cl_int (*tsr_clml_tune_op)(cl_command_queue, cl_ml_op_qcom, cl_ml_tensor_mem_desc_set_qcom,
                                   cl_ml_tuningcache_qcom, cl_ulong* tuned_time);
typedef cl_int (*tsr_clml_save_tuning_cache)(cl_ml_tuningcache_qcom, size_t, unsigned char*,
                                             size_t*);
typedef cl_int (*tsr_clml_load_tuning_cache)(cl_ml_tuningcache_qcom, size_t, unsigned char*);
typedef cl_int (*tsr_clml_release_tuning_cache)(cl_ml_tuningcache_qcom);
typedef cl_int (*tsr_clml_create_desc_set)(cl_ml_tensor_mem_desc_set_qcom*);
typedef cl_int (*tsr_clml_release_desc_set)(cl_ml_tensor_mem_desc_set_qcom);
typedef cl_int (*tsr_clml_update_desc_set)(cl_ml_tensor_mem_desc_set_qcom, uint32_t,
                                           cl_ml_tensor_memory_desc_qcom*);

/* Interface major 2 (60 slots). */
typedef struct _CLMLInterfaceV2QCOM {
  cl_int majorVersion;
  cl_int minorVersion;
  tsr_clml_create_gemm clCreateMLOpGemmQCOM;                                         /* 0 */
  void* clCreateMLOpTransposeQCOM;                                                   /* 1 */
  tsr_clml_create_fully_connected clCreateMLOpFullyConnectedQCOM;                    /* 2 */
  tsr_clml_create_convolution clCreateMLOpConvolutionForwardQCOM;                    /* 3 */
  void* training_4_5[2];                                                             /* 4-5 */
  tsr_clml_create_batchnorm clCreateMLOpBatchNormForwardQCOM;                        /* 6 */
  void* training_7_8[2];                                                             /* 7-8 */
  tsr_clml_create_activation clCreateMLOpActivationForwardQCOM;                      /* 9 */
  void* training_10_11[2];                                                           /* 10-11 */
  tsr_clml_create_pooling clCreateMLOpPoolingForwardQCOM;                            /* 12 */
  void* training_13;                                                                 /* 13 */
  tsr_clml_create_conv_activation clCreateMLOpFusedConvolutionActivationForwardQCOM; /* 14 */
  void* clCreateMLOpFusedConvolutionBatchNormForwardQCOM;                            /* 15 */
  void* clCreateMLOpFusedConvolutionBatchNormActivationForwardQCOM;                  /* 16 */
  tsr_clml_create_binary clCreateMLOpBinaryQCOM;                                     /* 17 */
  tsr_clml_create_softmax clCreateMLOpSoftmaxQCOM;                                   /* 18 */
  void* training_19_20[2];                                                           /* 19-20 */
  void* clCreateMLOpFillQCOM;                                                        /* 21 */
  tsr_clml_create_concat clCreateMLOpConcatQCOM;                                     /* 22 */
  void* clCreateMLOpPermuteQCOM;                                                     /* 23 */
  tsr_clml_create_reshape clCreateMLOpReshapeQCOM;                                   /* 24 */
  void* clCreateMLOpDepthToSpaceQCOM;                                                /* 25 */
  void* clCreateMLOpFusedDepthToSpaceActivationQCOM;                                 /* 26 */
  tsr_clml_create_resize_bilinear clCreateMLOpResizeBilinearQCOM;                    /* 27 */
  tsr_clml_create_pad clCreateMLOpPadQCOM;                                           /* 28 */
  tsr_clml_create_tensor clCreateMLTensorQCOM;                                       /* 29 */
  tsr_clml_tensor_memory_size clGetMLTensorMemorySizeQCOM;                           /* 30 */
  tsr_clml_release_op clReleaseMLOpQCOM;                                             /* 31 */
  tsr_clml_release_tensor clReleaseMLTensorQCOM;                                     /* 32 */
  tsr_clml_enqueue_op clEnqueueMLOpQCOM;                                             /* 33 */
  void* clEnqueueMLOpImmutableQCOM;                                                  /* 34 */
  void* clEnqueueRecordingMLOpQCOM;                                                  /* 35 */
  tsr_clml_read_tensor clEnqueueReadMLTensorDataQCOM;                                /* 36 */
  tsr_clml_write_tensor clEnqueueWriteMLTensorDataQCOM;                              /* 37 */
  tsr_clml_copy_tensor clEnqueueCopyMLTensorDataQCOM;                                /* 38 */
  tsr_clml_create_tuning_cache clCreateMLTuningCacheQCOM;                            /* 39 */
  tsr_clml_tune_op clTuneMLOpQCOM;                                                   /* 40 */
  tsr_clml_save_tuning_cache clSaveMLTuningCacheQCOM;                                /* 41 */
  tsr_clml_load_tuning_cache clLoadMLTuningCacheQCOM;                                /* 42 */
  tsr_clml_release_tuning_cache clReleaseMLTuningCacheQCOM;                          /* 43 */
  tsr_clml_create_desc_set clCreateMLTensorMemoryDescriptorSetQCOM;                  /* 44 */
  tsr_clml_release_desc_set clReleaseMLTensorMemoryDescriptorSetQCOM;                /* 45 */
  tsr_clml_update_desc_set clUpdateMLTensorMemoryDescriptorSetQCOM;                  /* 46 */
  tsr_clml_create_clip clCreateMLOpClipQCOM;                                         /* 47 */
  void* v2_tail_48_59[12];                                                           /* 48-59 */
} CLMLInterfaceV2QCOM;

/* Interface major 3 (75 slots): training slots inserted before the ones above, Copy added. */
typedef struct _CLMLInterfaceV3QCOM {
  cl_int majorVersion;
  cl_int minorVersion;
  tsr_clml_create_gemm clCreateMLOpGemmQCOM;                                         /* 0 */
  void* clCreateMLOpTransposeQCOM;                                                   /* 1 */
  tsr_clml_create_fully_connected clCreateMLOpFullyConnectedQCOM;                    /* 2 */
  tsr_clml_create_convolution clCreateMLOpConvolutionForwardQCOM;                    /* 3 */
  void* training_4_5[2];                                                             /* 4-5 */
  tsr_clml_create_batchnorm clCreateMLOpBatchNormForwardQCOM;                        /* 6 */
  void* training_7_12[6];                                                            /* 7-12 */
  tsr_clml_create_activation clCreateMLOpActivationForwardQCOM;                      /* 13 */
  void* training_14_15[2];                                                           /* 14-15 */
  tsr_clml_create_pooling clCreateMLOpPoolingForwardQCOM;                            /* 16 */
  void* training_17;                                                                 /* 17 */
  tsr_clml_create_conv_activation clCreateMLOpFusedConvolutionActivationForwardQCOM; /* 18 */
  void* clCreateMLOpFusedConvolutionBatchNormForwardQCOM;                            /* 19 */
  void* clCreateMLOpFusedConvolutionBatchNormActivationForwardQCOM;                  /* 20 */
  tsr_clml_create_binary clCreateMLOpBinaryQCOM;                                     /* 21 */
  tsr_clml_create_softmax clCreateMLOpSoftmaxQCOM;                                   /* 22 */
  void* training_23_24[2];                                                           /* 23-24 */
  void* clCreateMLOpFillQCOM;                                                        /* 25 */
  tsr_clml_create_concat clCreateMLOpConcatQCOM;                                     /* 26 */
  void* clCreateMLOpPermuteQCOM;                                                     /* 27 */
  tsr_clml_create_reshape clCreateMLOpReshapeQCOM;                                   /* 28 */
  void* clCreateMLOpDepthToSpaceQCOM;                                                /* 29 */
  void* clCreateMLOpFusedDepthToSpaceActivationQCOM;                                 /* 30 */
  tsr_clml_create_resize_bilinear clCreateMLOpResizeBilinearQCOM;                    /* 31 */
  tsr_clml_create_pad clCreateMLOpPadQCOM;                                           /* 32 */
  void* clCreateMLOpPadBackwardQCOM;                                                 /* 33 */
  tsr_clml_create_reshape clCreateMLOpCopyQCOM;                                      /* 34 */
  tsr_clml_create_tensor clCreateMLTensorQCOM;                                       /* 35 */
  tsr_clml_tensor_memory_size clGetMLTensorMemorySizeQCOM;                           /* 36 */
  tsr_clml_release_op clReleaseMLOpQCOM;                                             /* 37 */
  tsr_clml_release_tensor clReleaseMLTensorQCOM;                                     /* 38 */
  tsr_clml_enqueue_op clEnqueueMLOpQCOM;                                             /* 39 */
  void* clEnqueueMLOpImmutableQCOM;                                                  /* 40 */
  void* clEnqueueRecordingMLOpQCOM;                                                  /* 41 */
  tsr_clml_read_tensor clEnqueueReadMLTensorDataQCOM;                                /* 42 */
  tsr_clml_write_tensor clEnqueueWriteMLTensorDataQCOM;                              /* 43 */
  tsr_clml_copy_tensor clEnqueueCopyMLTensorDataQCOM;                                /* 44 */
  tsr_clml_create_tuning_cache clCreateMLTuningCacheQCOM;                            /* 45 */
  tsr_clml_tune_op clTuneMLOpQCOM;                                                   /* 46 */
  tsr_clml_save_tuning_cache clSaveMLTuningCacheQCOM;                                /* 47 */
  tsr_clml_load_tuning_cache clLoadMLTuningCacheQCOM;                                /* 48 */
  tsr_clml_release_tuning_cache clReleaseMLTuningCacheQCOM;                          /* 49 */
  tsr_clml_create_desc_set clCreateMLTensorMemoryDescriptorSetQCOM;                  /* 50 */
  tsr_clml_release_desc_set clReleaseMLTensorMemoryDescriptorSetQCOM;                /* 51 */
  tsr_clml_update_desc_set clUpdateMLTensorMemoryDescriptorSetQCOM;                  /* 52 */
  tsr_clml_create_clip clCreateMLOpClipQCOM;                                         /* 53 */
  void* v3_tail_54_74[21];                                                           /* 54-74 */
} CLMLInterfaceV3QCOM;

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_CLML_USE_SDK */

#ifdef __cplusplus
extern "C" {
#endif
/* The two exported entry points of a CLML driver. */
typedef cl_int (*tsr_clml_query_versions)(cl_int* majors, cl_int* minors, cl_uint num_versions,
                                          cl_uint* num_versions_ret);
/* `interface_out` is a pointer to the table pointer the driver fills in. */
typedef cl_int (*tsr_clml_get_interface)(void* interface_out, cl_int major, cl_int minor);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_CLML_API_H */
