/* The C API of libtessera: load an ONNX model or a compiled package into a session over the target
 * plugins, run it on host tensors, read the outputs. For applications in C and for bindings
 * (Python's ctypes: tools/python/tessera_c.py); C++ applications may use tessera/session.hpp
 * directly.
 *
 * Errors: every function that can fail returns TESSERA_OK or TESSERA_FAILED and leaves the
 * message (naming the file, node or input, as the C++ API does) in tessera_last_error(), which is
 * per thread and valid until that thread's next call into this API. Nothing here aborts the
 * process on bad input.
 *
 * Ownership: objects returned through an out pointer belong to the caller, who releases them with
 * the matching *_release function (NULL is accepted). Strings and arrays returned by accessors
 * live as long as the object they came from. Input data is read during tessera_session_run only.
 *
 * Threads: a session may be run from several threads at once (see Session in session.hpp);
 * a tessera_outputs object is not shared between threads without the caller's own locking. */
#ifndef TESSERA_TESSERA_C_H_
#define TESSERA_TESSERA_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The API's version, kept as the plugin ABI keeps its own: a new major breaks callers built
 * against an older header (they must be rebuilt); a new minor only appends (functions, enum
 * values, fields at the end of structs that carry struct_size), so a caller built against minor
 * m runs on any library of the same major and minor >= m. Compare tessera_c_api_version() with
 * the header's values at start-up to refuse a library that is too old.
 *   1.0  sessions over ONNX models and packages, runtime-owned outputs
 *   1.1  tessera_c_api_version, options.replan_package, tessera_session_run_into (caller-owned
 *        outputs)
 *   1.2  options.trusted_keys (signed packages and packs) */
#define TESSERA_C_API_VERSION 1
#define TESSERA_C_API_VERSION_MAJOR 1
#define TESSERA_C_API_VERSION_MINOR 2

typedef enum tessera_status { TESSERA_OK = 0, TESSERA_FAILED = 1 } tessera_status;

/* The element types, numbered as ONNX numbers them. */
typedef enum tessera_dtype {
  TESSERA_DTYPE_FLOAT32 = 1,
  TESSERA_DTYPE_UINT8 = 2,
  TESSERA_DTYPE_INT8 = 3,
  TESSERA_DTYPE_INT32 = 6,
  TESSERA_DTYPE_INT64 = 7,
  TESSERA_DTYPE_BOOL = 9,
  TESSERA_DTYPE_FLOAT16 = 10
} tessera_dtype;

/* Session settings. Set struct_size to sizeof(tessera_session_options) (later versions append
 * fields; an older caller's smaller struct keeps the defaults for them); zero or NULL fields mean
 * the default. tessera_session_options_init fills the defaults. */
typedef struct tessera_session_options {
  size_t struct_size;
  /* Comma-separated targets in priority order, as `tessera run --targets` takes them
   * ("cpu,reference", "mali:any[layout=nchw]"); NULL or "" = every usable plugin. */
  const char* targets;
  int32_t threads;        /* 0 = each plugin's default */
  const char* precision;  /* "fp32" (NULL), "fp16" or "fp16-acc32" */
  int32_t allow_fallback; /* nonzero: a named target that cannot run is skipped (else an error) */
  /* An extra plugin directory, or NULL. It must be an absolute path to an existing directory:
   * tessera_session_create fails naming it otherwise. */
  const char* plugin_dir;
  int32_t no_packs;       /* nonzero: the schedules' heuristics only, no tuned packs */
  /* Nonzero: a package compiled for another device, driver or plugin version is planned again
   * for the devices here (with a warning) instead of refused. Since C API 1.1 (appended field). */
  int32_t replan_package;
  /* Comma-separated public keys ("ed25519:<64 hex digits>", or absolute paths of .pub files
   * written by `tessera keygen`), or NULL. Given, a package, and every tuned pack the session
   * reads, must be signed by one of them (`tessera sign`): tessera_session_create fails with the
   * reason for a package no trusted key signed. Since C API 1.2 (appended field). */
  const char* trusted_keys;
} tessera_session_options;

/* A tensor the caller owns, in row-major order. */
typedef struct tessera_tensor_view {
  tessera_dtype dtype;
  int32_t rank;
  const int64_t* shape; /* rank entries */
  const void* data;     /* the elements, densely packed */
} tessera_tensor_view;

typedef struct tessera_session tessera_session;
typedef struct tessera_outputs tessera_outputs;

/* Threads: unless a function's comment says otherwise, it may be called from any thread, and
 * from several at once on different objects. */

/* "0.1.0": the engine's version. */
const char* tessera_version(void);
/* The library's C API version: (major << 16) | minor. */
uint32_t tessera_c_api_version(void);
/* The message of this thread's last failure ("" if none). */
const char* tessera_last_error(void);

void tessera_session_options_init(tessera_session_options* options);

/* Imports the ONNX model at model_path, places it on the targets and compiles it; or loads the
 * package (.tsp, `tessera compile`) at model_path and runs it where it was compiled for (its
 * targets and precision unless options set them; a package for another device, driver or plugin
 * version fails with the reason). */
tessera_status tessera_session_create(const char* model_path,
                                      const tessera_session_options* options,
                                      tessera_session** session);
/* Not while another thread uses the session. */
void tessera_session_release(tessera_session* session);

/* The model's inputs and outputs. A dimension the model leaves open (an input's symbolic or
 * unknown size) is -1 in *shape; a run takes any size there. An output's shape is the one
 * inferred when the session was created; each run's outputs carry the shapes of that run. */
int32_t tessera_session_input_count(const tessera_session* session);
int32_t tessera_session_output_count(const tessera_session* session);
tessera_status tessera_session_input(const tessera_session* session, int32_t index,
                                     const char** name, tessera_dtype* dtype, int32_t* rank,
                                     const int64_t** shape);
tessera_status tessera_session_output(const tessera_session* session, int32_t index,
                                      const char** name, tessera_dtype* dtype, int32_t* rank,
                                      const int64_t** shape);

/* Runs the model on the named inputs (every input of the model, each once). The outputs come back
 * in the model's order, owned by the runtime until tessera_outputs_release. The input data is
 * read in place during the call (not copied). Several threads may run one session at once. */
tessera_status tessera_session_run(tessera_session* session, int32_t input_count,
                                   const char* const* input_names,
                                   const tessera_tensor_view* inputs, tessera_outputs** outputs);

/* A buffer the caller owns for one output: data holds capacity bytes. */
typedef struct tessera_output_buffer {
  void* data;
  size_t capacity;
} tessera_output_buffer;

/* As tessera_session_run, with the outputs written into the caller's buffers: output_count must
 * be the model's output count and outputs[i] is the model's i-th output (see
 * tessera_session_output for its dtype and shape). The shapes the run produced are written to
 * shapes[i] (rank entries each, as tessera_session_output reports the rank; NULL: not wanted).
 * A buffer smaller than its output fails the run naming it, with nothing written to any buffer.
 * Several threads may run one session at once, each with its own buffers. */
tessera_status tessera_session_run_into(tessera_session* session, int32_t input_count,
                                        const char* const* input_names,
                                        const tessera_tensor_view* inputs, int32_t output_count,
                                        const tessera_output_buffer* outputs,
                                        int64_t* const* shapes);

/* A tessera_outputs object is read from one thread at a time (the caller's own locking). */
int32_t tessera_outputs_count(const tessera_outputs* outputs);
/* The index-th output: its name and a view of its elements (valid until released). */
tessera_status tessera_outputs_get(const tessera_outputs* outputs, int32_t index, const char** name,
                                   tessera_tensor_view* view);
void tessera_outputs_release(tessera_outputs* outputs);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TESSERA_C_H_ */
