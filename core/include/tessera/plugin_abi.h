/* The Tessera plugin boundary: plain C, versioned, append-only.
 *
 * A plugin is a shared library named libtessera-plugin-<name>.so that exports exactly one entry
 * symbol, TESSERA_PLUGIN_ENTRY_NAME. Core calls it with its own ABI version; the plugin returns a
 * pointer to a static function table (or NULL if it refuses to load).
 *
 * Instances (ABI 2): the table is stateless. create() makes a plugin instance (one per deployment
 * target, session or tuner worker) from the target's options, and every slot that probes,
 * answers or compiles takes that instance; destroy() ends it after the regions compiled through
 * it are released. A plugin keeps no mutable state outside its instances, so two instances (two
 * targets of one plugin with different selectors or options, two sessions) never see each
 * other's devices, options or caches. Devices are named by ids the plugin chooses: the same
 * device has the same id in every probe, instance and process on one machine.
 *
 * Versioning: every boundary struct starts with `struct_size` (and the table with the ABI major and
 * minor it was built against), except the small element structs that travel only in arrays
 * (tsr_knob, tsr_knob_space, tsr_schedule_desc, tsr_target_option, tsr_io), whose size travels
 * with their array. Structs and the table only grow by appending fields. Core refuses a plugin
 * whose major differs from its own; a plugin of an older minor loads, and core does not touch
 * slots beyond the plugin's `struct_size`. A reader of one struct reads a field only when the
 * struct_size its writer set covers it (TSR_HAS_FIELD); a field it does not cover reads as its
 * default.
 *
 * Arrays of structs (ABI 2.3): every array of boundary structs travels with its element size, its
 * stride: element i starts i * stride bytes after element 0. So any struct can grow in a minor,
 * and a peer built before (or after) it still finds every element.
 *   - Who sets the stride: whoever lays the array out. Core lays out what it hands a plugin
 *     (region values, nodes, attributes, node configs and their knobs, target options, tsr_io
 *     arrays) at each struct's size in the plugin's declared minor (never above its own), so a
 *     plugin of 2.2 or before gets exactly the 2.2 layout. A plugin lays out what it hands core
 *     (describe_node's schedules, knob spaces and default configs) at its own sizeof.
 *   - Where it travels: in the struct holding the array's pointer (tsr_region.value_size,
 *     node_size, attribute_size, io_size; tsr_compile_options.node_config_size, knob_size;
 *     tsr_node_tuning.schedule_size, knob_space_size, knob_size; tsr_host_api.target_option_size).
 *     An array a plugin fills in core's memory (probe_devices' `out`, query_subgraph's `answers`)
 *     carries it in its elements' struct_size: core sets every element's struct_size to the bytes
 *     it allocated per element, and every other field to its default, before the call; the plugin
 *     writes element i at i * out[0].struct_size bytes, only the fields that end within that
 *     stride, and leaves struct_size as it found it.
 *   - How it is read: a reader steps by the stride and reads only the fields that end within it;
 *     the rest read as their defaults (0 or NULL unless a field says otherwise). Nothing is read
 *     or written past the stride of an element.
 *   - A stride of 0, or a stride field beyond its struct's struct_size (a peer of ABI 2.2 or
 *     before), means the element's ABI 2.2 size. No element struct has grown since 2.2, so that is
 *     its sizeof in this header; a minor that grows one keeps its 2.2 definition beside it. A
 *     stride above TSR_MAX_STRIDE is malformed.
 *   - A field appended to a struct starts at or after the struct's previous sizeof (add explicit
 *     padding where the compiler would put it in the old tail padding), so a stride says exactly
 *     which fields its writer knew.
 *
 * Ownership: nothing allocated on one side is freed on the other. Strings and arrays handed to a
 * plugin are owned by core and valid only for the duration of the call unless a slot says
 * otherwise. Strings in the table are static; strings in device infos are the instance's and stay
 * valid until destroy() of the instance that returned them. Opaque handles (compiled regions) are
 * released through the plugin's own release slot. No C++ exceptions cross the boundary: every
 * fallible slot returns a tsr_status and writes a message into a caller-provided buffer.
 */
#ifndef TESSERA_PLUGIN_ABI_H_
#define TESSERA_PLUGIN_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TESSERA_PLUGIN_ABI_MAJOR 2
#define TESSERA_PLUGIN_ABI_MINOR 3
#define TESSERA_PLUGIN_ENTRY_NAME "tessera_plugin_entry"
#define TESSERA_MAX_RANK 8
/* The largest element size an array may declare (see "Arrays of structs" above). */
#define TSR_MAX_STRIDE 65536u

/* Whether the struct at `ptr` (of type `type`, its struct_size set by its writer) holds `field`. */
#define TSR_HAS_FIELD(ptr, type, field) \
  ((ptr)->struct_size >= offsetof(type, field) + sizeof(((const type*)0)->field))

typedef enum tsr_status {
  TSR_OK = 0,
  TSR_ERROR = 1,              /* generic failure; message says what */
  TSR_UNSUPPORTED = 2,        /* the plugin cannot handle this node/region/option */
  TSR_OUT_OF_MEMORY = 3,      /* host or device allocation failed */
  TSR_COMPILE_FAILED = 4,     /* kernel build failed; core falls back to the next plugin */
  TSR_DEVICE_LOST = 5,        /* driver error at run time */
  TSR_INVALID_ARGUMENT = 6
} tsr_status;

/* Caller-provided message buffer; the callee writes a NUL-terminated message (truncated to fit). */
typedef struct tsr_message {
  char* text;
  size_t capacity;
} tsr_message;

/* Element types; values equal ONNX TensorProto.DataType. */
typedef enum tsr_dtype {
  TSR_DTYPE_UNDEFINED = 0,
  TSR_DTYPE_FLOAT32 = 1,
  TSR_DTYPE_UINT8 = 2,
  TSR_DTYPE_INT8 = 3,
  TSR_DTYPE_INT32 = 6,
  TSR_DTYPE_INT64 = 7,
  TSR_DTYPE_BOOL = 9,
  TSR_DTYPE_FLOAT16 = 10
} tsr_dtype;

/* A dense row-major tensor description. `data` is non-NULL only for constants (weights, folded
 * values); it is owned by core and stays valid until the compiled region that saw it is released
 * (a plugin may keep pointing at it instead of copying). */
typedef struct tsr_tensor {
  uint32_t struct_size;
  const char* name;
  int32_t dtype; /* tsr_dtype */
  int32_t rank;
  int64_t dims[TESSERA_MAX_RANK];
  const void* data;
} tsr_tensor;

typedef enum tsr_attr_kind {
  TSR_ATTR_INT = 1,     /* i */
  TSR_ATTR_FLOAT = 2,   /* f */
  TSR_ATTR_STRING = 3,  /* s */
  TSR_ATTR_INTS = 4,    /* ints[count] */
  TSR_ATTR_FLOATS = 5,  /* floats[count] */
  TSR_ATTR_STRINGS = 6, /* strings[count] */
  TSR_ATTR_TENSOR = 7   /* tensor (with data) */
} tsr_attr_kind;

typedef struct tsr_attribute {
  uint32_t struct_size;
  const char* name;
  int32_t kind; /* tsr_attr_kind */
  int64_t i;
  float f;
  const char* s;
  int64_t count;
  const int64_t* ints;
  const float* floats;
  const char* const* strings;
  const tsr_tensor* tensor;
} tsr_attribute;

/* One node of a region. Inputs and outputs are indices into the region's value table;
 * -1 marks an omitted optional input or output. */
typedef struct tsr_node {
  uint32_t struct_size;
  const char* name;
  const char* op_type;
  int32_t num_inputs;
  const int32_t* inputs;
  int32_t num_outputs;
  const int32_t* outputs;
  int32_t num_attributes;
  const tsr_attribute* attributes;
} tsr_node;

/* Memory layouts a plugin may prefer for activations. Core converts only at region boundaries. */
typedef enum tsr_layout {
  TSR_LAYOUT_ANY = 0,
  TSR_LAYOUT_NCHW = 1,
  TSR_LAYOUT_NHWC = 2,
  TSR_LAYOUT_NCHW4C = 3,   /* channels blocked by 4 (OpenCL float4 / texture texel) */
  TSR_LAYOUT_NCHW8C = 4,   /* channels blocked by 8 (SIMD registers) */
  TSR_LAYOUT_IMAGE2D = 5   /* OpenCL image2d texels of 4 channels */
} tsr_layout;

/* A connected set of nodes to compile as one executable unit. Region inputs/outputs are the
 * values crossing the region boundary, in the order buffers will be passed to execute(). */
typedef struct tsr_region {
  uint32_t struct_size;
  int64_t opset;
  int32_t num_values;
  const tsr_tensor* values; /* every value the nodes touch; constants carry data */
  int32_t num_nodes;
  const tsr_node* nodes;    /* topologically ordered */
  int32_t num_inputs;
  const int32_t* inputs;    /* value indices */
  int32_t num_outputs;
  const int32_t* outputs;   /* value indices */
  /* ABI 2.3: element sizes of the arrays this region hands over ("Arrays of structs"). */
  uint32_t value_size;      /* values[] */
  uint32_t node_size;       /* nodes[] */
  uint32_t attribute_size;  /* every node's attributes[] */
  uint32_t io_size;         /* the tsr_io arrays execute_region_io passes to a region compiled
                               from this one (a plugin keeps it with the compiled region) */
} tsr_region;

typedef struct tsr_device_info {
  uint32_t struct_size;
  const char* id;             /* stable, plugin-chosen, unique within the plugin: 1-63 characters
                                 of [A-Za-z0-9._-], e.g. "host", "cl0.1"; the same device keeps its
                                 id across probes, instances and processes on one machine */
  const char* vendor;         /* "ARM", "Qualcomm", "NVIDIA Corporation", "The pocl project" */
  const char* name;           /* device name as the driver reports it */
  const char* driver_version;
  const char* kind;           /* "cpu", "gpu", "npu" */
  int32_t compute_units;
  int64_t memory_bytes;       /* 0 if unknown */
  const char* features;       /* space-separated: "fp16 image2d neon avx2 ..." */
  int32_t score;              /* 0 = unusable here; higher = preferred */
  const char* unusable_reason; /* set when score == 0 */
} tsr_device_info;

/* Per-node capability answer. */
typedef struct tsr_support {
  uint32_t struct_size;
  int32_t supported;          /* 1 = yes, 0 = no (reason says why) */
  int32_t preferred_layout;   /* tsr_layout */
  double cost_us;             /* estimated time of the node on this device, microseconds */
  char reason[256];           /* why not (or a note on how); NUL-terminated */
  /* ABI 2.2, query_subgraph only (core sets -1 before asking): the region node whose kernel also
   * computes this node (an activation in a convolution's epilogue), so the node adds no launch
   * and no pass over memory of its own; -1 when it runs on its own. */
  int32_t fused_into;
} tsr_support;

/* ---- Tuning -------------------------------------------------------------------------
 * A schedule is one way a plugin can compute a node (e.g. "conv2d.direct", "conv2d.1x1"); its
 * knob space is a list of knobs, each with the integer values it may take. A config is a schedule
 * name plus one value per knob. Core chooses configs (from a tuned pack or the tuner) and passes
 * them to compile_region; a plugin applies a config it can use and otherwise falls back to its
 * own heuristic (and says so through its profile/notes, never by failing the compile). */

typedef struct tsr_knob {
  const char* name;
  int64_t value;
} tsr_knob;

typedef struct tsr_knob_space {
  const char* name;          /* e.g. "wg_x", "outputs_per_item", "vector_width" */
  int32_t num_values;
  const int64_t* values;     /* candidate values, in the order a grid search visits them */
} tsr_knob_space;

typedef struct tsr_schedule_desc {
  const char* name;                /* unique within the plugin, e.g. "conv2d.direct" */
  int32_t num_knobs;
  const tsr_knob_space* knobs;
  const tsr_knob* default_config;  /* num_knobs entries: the heuristic's choice for this node */
} tsr_schedule_desc;

/* What can be tuned for one node. All pointers are the instance's and stay valid until the next
 * describe_node call on the same instance and thread, or until destroy(). */
typedef struct tsr_node_tuning {
  uint32_t struct_size;
  const char* workload_key;   /* canonical: op, shapes, attributes, dtype, layout; equal keys
                                 mean interchangeable configs */
  double flops;               /* floating-point operations of the node (for GFLOPS reports) */
  int32_t num_schedules;      /* 0 = nothing to tune */
  const tsr_schedule_desc* schedules;
  int32_t default_schedule;   /* index of the heuristic's schedule */
  /* ABI 2.3: element sizes of the plugin's arrays ("Arrays of structs"); core zeroes them before
   * the call, and a plugin of 2.3 or later sets them. Written only where core's struct_size holds
   * them (a core of 2.2 or before reads the 2.2 layout). reserved0 keeps them past the end of
   * a 2.2 struct's tail padding. */
  int32_t reserved0;
  uint32_t schedule_size;     /* schedules[] */
  uint32_t knob_space_size;   /* every schedule's knobs[] */
  uint32_t knob_size;         /* every schedule's default_config[] */
} tsr_node_tuning;

/* A config core asks a plugin to use for one node of a region. */
typedef struct tsr_node_config {
  uint32_t struct_size;
  int32_t node;               /* index into region->nodes */
  const char* schedule;
  int32_t num_knobs;
  const tsr_knob* knobs;
} tsr_node_config;

/* One plugin-specific option of a target, as the user wrote it (both strings owned by core). */
typedef struct tsr_target_option {
  const char* name;
  const char* value;
} tsr_target_option;

/* Options for one compile call. */
typedef struct tsr_compile_options {
  uint32_t struct_size;
  int32_t num_threads;        /* 0 = plugin default */
  const char* precision;      /* "fp32", "fp16", "fp16-acc32"; NULL = fp32 */
  const char* cache_dir;      /* absolute dir for compiled-kernel caches; NULL = none */
  const char* pack_path;      /* informational: the pack core selected configs from; NULL = none.
                                 Plugins read configs from node_configs, not from this file. */
  /* Configs chosen by core for some nodes (from a pack or the tuner); nodes without one
   * use the plugin's heuristic. A config the plugin cannot apply (unknown schedule or knob, value
   * breaking a device limit) is ignored for that node alone. Owned by core, valid for the call. */
  int32_t num_node_configs;
  const tsr_node_config* node_configs;
  const char* dump_dir; /* absolute dir; NULL = none. A plugin that builds kernel programs
                           writes each program's source there as <kernel or program name>.cl
                           (plus a header comment naming the node(s) and build options) */
  /* Read only when struct_size covers it (a core built before it sends a shorter struct: treat
   * as 1). 1: core reads last_profile after runs, so time each node. 0: it never does; a plugin
   * should then skip what timing costs per launch (events, timestamps, waits). */
  int32_t profile;
  int32_t reserved0; /* 0; keeps the 2.3 fields past the end of a 2.2 struct's tail padding */
  /* ABI 2.3: element sizes of node_configs[] and of every config's knobs[] ("Arrays of
   * structs"). */
  uint32_t node_config_size;
  uint32_t knob_size;
} tsr_compile_options;

typedef struct tsr_region_handle_s* tsr_region_handle;
typedef struct tsr_instance_s* tsr_instance;
typedef struct tsr_buffer_s* tsr_buffer;

/* ABI 2.1: where a device keeps values between regions. Buffers of one `domain` are usable by
 * every instance, of any plugin, whose device names the same domain: core hands a buffer one
 * region wrote to the next region as it is, without the host. A domain names one address space
 * (e.g. "opencl:<context>": one OpenCL context, whose cl_mem objects a tsr_buffer of that domain
 * is). A buffer holds one value dense and row-major in the value's dtype, as host buffers do. */
typedef struct tsr_buffer_kind {
  uint32_t struct_size;
  const char* domain;    /* NULL or "": the device works on host memory only; the instance's */
  int64_t alignment;     /* bytes; informational */
  int32_t host_mappable; /* 1 when the host could map it (shared memory); informational */
} tsr_buffer_kind;

/* One region input or output in execute_region_io: exactly one of the two is set. */
typedef struct tsr_io {
  void* host;        /* core's host memory (read-only for inputs) */
  tsr_buffer buffer; /* a buffer of the device's domain, allocated through alloc_buffer */
} tsr_io;

/* What core tells a plugin about itself when it creates an instance. Owned by core, valid for the
 * create call. */
typedef struct tsr_host_api {
  uint32_t struct_size;
  uint32_t abi_major; /* the ABI core speaks */
  uint32_t abi_minor;
  /* ABI 2.3: element size of create's `options` array ("Arrays of structs"). */
  uint32_t target_option_size;
} tsr_host_api;

/* The function table. Slots marked optional may be NULL. */
typedef struct tsr_plugin {
  uint32_t struct_size;       /* sizeof(tsr_plugin) as the plugin was compiled */
  uint32_t abi_major;         /* TESSERA_PLUGIN_ABI_MAJOR the plugin was built with */
  uint32_t abi_minor;         /* TESSERA_PLUGIN_ABI_MINOR the plugin was built with */
  const char* name;           /* short name used in --targets, e.g. "cpu"; plugin-owned */
  const char* version;        /* plugin version string; plugin-owned */
  const char* description;    /* one line; plugin-owned */

  /* Required. Makes an instance configured by a target's `options:` (name/value text pairs in
   * the order the user wrote them; none for a target without options). Every option must be
   * known and valid: otherwise answer TSR_INVALID_ARGUMENT with a message naming the option and
   * what is allowed (core turns it into an error for the user, never a silent fallback). On
   * success `*instance` is the plugin's until destroy(). `options` is laid out at
   * host->target_option_size bytes per element (2.3). */
  tsr_status (*create)(const tsr_host_api* host, const tsr_target_option* options,
                       int32_t num_options, tsr_instance* instance, tsr_message message);

  /* Required. Ends an instance; core calls it after every region compiled through the instance
   * is released. Frees everything the instance holds (device contexts, program pools, strings). */
  void (*destroy)(tsr_instance instance);

  /* Required. Probes the hardware. Writes up to `capacity` infos into `out` and their number into
   * `*count`. Strings in the infos are the instance's and live until destroy. `selector` is the
   * target's selector ("any", a device name fragment, a device id, or NULL for the default).
   * Lists every device, usable or not (score 0 with the reason). Element i of `out` is at
   * i * out[0].struct_size bytes (2.3; "Arrays of structs"). */
  tsr_status (*probe_devices)(tsr_instance instance, const char* selector, tsr_device_info* out,
                              int32_t capacity, int32_t* count, tsr_message message);

  /* Required. Can device `device` (an id from probe_devices) run `node` (index into
   * region->nodes; the region carries the value table with shapes and constants)? Fills
   * `*support`. Must not fail for unknown ops: answer supported = 0 with a reason. */
  tsr_status (*query_node)(tsr_instance instance, const char* device, const tsr_region* region,
                           int32_t node, tsr_support* support);

  /* Required. Compiles a region for `device`. On success `*handle` is plugin-owned until
   * release_region(). Constants' data pointers stay valid until then. A non-OK status makes core
   * fall back to the next plugin for this region. */
  tsr_status (*compile_region)(tsr_instance instance, const char* device, const tsr_region* region,
                               const tsr_compile_options* options, tsr_region_handle* handle,
                               tsr_message message);

  /* Required. Runs a compiled region. `inputs[i]` / `outputs[i]` are host buffers (dense,
   * row-major, region value dtype/shape) for region->inputs[i] / region->outputs[i], owned by core
   * and valid for the call. Must be safe to call from one thread at a time per handle. */
  tsr_status (*execute_region)(tsr_region_handle handle, const void* const* inputs,
                               void* const* outputs, tsr_message message);

  /* Required. Frees a compiled region. */
  void (*release_region)(tsr_region_handle handle);

  /* Optional (NULL = no profiling). Per-node times of the last execute_region on `handle`, in
   * microseconds, in region node order; writes min(capacity, num_nodes) entries to `times_us`. */
  tsr_status (*last_profile)(tsr_region_handle handle, double* times_us, int32_t capacity,
                             int32_t* count);

  /* Optional (NULL = nothing tunable). Describes the schedules and knob spaces for `node` of
   * `region` on `device` and its canonical workload key; fills `*tuning` (see tsr_node_tuning for
   * how long its pointers live). Answers num_schedules = 0 for nodes it does not tune. */
  tsr_status (*describe_node)(tsr_instance instance, const char* device, const tsr_region* region,
                              int32_t node, tsr_node_tuning* tuning, tsr_message message);

  /* ---- ABI 2.1: device-resident values (all four or none) ---- */

  /* Optional. The buffer kind of `device`: the domain its regions' inputs and outputs can live
   * in. Strings are the instance's until destroy. */
  tsr_status (*buffer_kind)(tsr_instance instance, const char* device, tsr_buffer_kind* kind);

  /* Optional. A buffer of `bytes` bytes in the device's domain; the instance's until free_buffer.
   * Core frees every buffer before it destroys the instance that allocated it. */
  tsr_status (*alloc_buffer)(tsr_instance instance, const char* device, uint64_t bytes,
                             tsr_buffer* buffer, tsr_message message);
  void (*free_buffer)(tsr_instance instance, tsr_buffer buffer);

  /* Optional. execute_region with each input and output either host memory or a buffer of the
   * device's domain (possibly allocated by another plugin's instance of that domain). A buffer
   * output is complete when the call returns; inputs are read-only; no buffer is both an input
   * and an output of one call. The arrays are laid out at the io_size of the region the handle
   * was compiled from (2.3). */
  tsr_status (*execute_region_io)(tsr_region_handle handle, const tsr_io* inputs,
                                  const tsr_io* outputs, tsr_message message);

  /* ---- ABI 2.2 ---- */

  /* Optional (NULL = core asks query_node node by node). Capability over a candidate subgraph:
   * `region` holds the nodes core offers (in topological order; every value they touch, with
   * shapes and constants); fill answers[i] (core's array of region->num_nodes, each with its
   * struct_size set to the array's stride and fused_into = -1; element i is at
   * i * answers[0].struct_size bytes, 2.3) for region node i as query_node would, with costs that
   * count what the plugin does across nodes: set fused_into where it would compute a node inside
   * another node's kernel. A node the plugin does not take answers supported = 0 with the
   * reason, the rest of the subgraph is still answered. */
  tsr_status (*query_subgraph)(tsr_instance instance, const char* device, const tsr_region* region,
                               tsr_support* answers, tsr_message message);
} tsr_plugin;

/* The entry symbol's type. Returns NULL to refuse (e.g. its own check of host_abi_major failed);
 * the returned table is static and plugin-owned. Core may call it more than once (with an older
 * major too, to name the version of a plugin it refuses); it must have no side effects. */
typedef const tsr_plugin* (*tsr_plugin_entry_fn)(uint32_t host_abi_major, uint32_t host_abi_minor);

#if defined(_WIN32)
#define TESSERA_PLUGIN_EXPORT __declspec(dllexport)
#else
#define TESSERA_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PLUGIN_ABI_H_ */
