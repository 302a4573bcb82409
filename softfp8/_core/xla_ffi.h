/* softfp8's own declarations of the part of XLA's FFI C ABI its JAX handlers use
 * (xla_ffi.c; docs/frameworks.md, "JAX", "The FFI design").
 *
 * XLA calls a typed FFI handler (jax.ffi.register_ffi_target(..., api_version=1)) as
 * `error = handler(call_frame)` with plain C structs.  Their layouts are facts of the
 * ABI (XLA's xla/ffi/api/c_api.h, shipped in jaxlib as jax.ffi.include_dir()); they are
 * declared here under softfp8's own names so that softfp8 builds without jax installed.
 * tests/frameworks/test_jax.py compiles this header together with the installed jaxlib's
 * header and checks every size, offset and enumerator used here against it.
 *
 * Every struct that crosses the boundary starts with its size in bytes (struct_size):
 * the size up to and including the last field of the version that filled it, so a
 * newer XLA may pass larger structs (fields appended) and an older one smaller ones.
 * The handlers accept any size that covers the fields they read (SFX_*_SIZE below). */
#ifndef SOFTFP8_XLA_FFI_H
#define SOFTFP8_XLA_FFI_H
#include <stddef.h>
#include <stdint.h>

/* the FFI API version the handlers report in their metadata query: 0.1, accepted by
   jaxlib 0.10.2 (whose header is 0.3); XLA's minor versions only append fields, and the
   layouts declared here are checked against the installed jaxlib by the tests */
#define SFX_API_MAJOR 0
#define SFX_API_MINOR 1

/* the size of struct type `t` up to and including its field `f` */
#define SFX_SIZE_TO(t, f) (offsetof(t, f) + sizeof(((t *)0)->f))

typedef struct sfx_ext_base {           /* XLA_FFI_Extension_Base */
    size_t struct_size;
    int type;                           /* SFX_EXT_METADATA */
    struct sfx_ext_base *next;
} sfx_ext_base;
enum { SFX_EXT_METADATA = 1 };

typedef struct sfx_api_version {        /* XLA_FFI_Api_Version */
    size_t struct_size;
    sfx_ext_base *extension_start;
    int major_version;
    int minor_version;
} sfx_api_version;
#define SFX_API_VERSION_SIZE SFX_SIZE_TO(sfx_api_version, minor_version)

typedef struct sfx_error sfx_error;     /* XLA_FFI_Error: opaque, owned by XLA once returned */

enum {                                  /* XLA_FFI_Error_Code (absl status codes) */
    SFX_ERR_INVALID_ARGUMENT = 3,
    SFX_ERR_RESOURCE_EXHAUSTED = 8,
    SFX_ERR_UNIMPLEMENTED = 12,
    SFX_ERR_INTERNAL = 13
};

typedef struct sfx_error_create_args {  /* XLA_FFI_Error_Create_Args */
    size_t struct_size;
    sfx_ext_base *extension_start;
    const char *message;                /* copied by XLA */
    int errc;
} sfx_error_create_args;
#define SFX_ERROR_CREATE_ARGS_SIZE SFX_SIZE_TO(sfx_error_create_args, errc)

typedef sfx_error *sfx_error_create_fn(sfx_error_create_args *args);

typedef struct sfx_api {                /* XLA_FFI_Api: only its head is used */
    size_t struct_size;
    sfx_ext_base *extension_start;
    sfx_api_version api_version;
    const void *internal_api;
    sfx_error_create_fn *error_create;  /* the first function of the table */
    /* further function pointers follow; softfp8 calls none of them */
} sfx_api;

enum {                                  /* XLA_FFI_DataType (xla::PrimitiveType) */
    SFX_PRED = 1, SFX_S8 = 2, SFX_S16 = 3, SFX_S32 = 4, SFX_S64 = 5, SFX_U8 = 6, SFX_U16 = 7,
    SFX_U32 = 8, SFX_U64 = 9, SFX_F16 = 10, SFX_F32 = 11, SFX_F64 = 12, SFX_BF16 = 16,
    SFX_F8E5M2 = 19, SFX_F8E4M3FN = 20, SFX_F8E4M3B11FNUZ = 23, SFX_F8E5M2FNUZ = 24,
    SFX_F8E4M3FNUZ = 25, SFX_F8E4M3 = 28, SFX_F8E3M4 = 29, SFX_F8E8M0FNU = 33
};

typedef struct sfx_buffer {             /* XLA_FFI_Buffer */
    size_t struct_size;
    sfx_ext_base *extension_start;
    int dtype;
    void *data;
    int64_t rank;
    int64_t *dims;                      /* rank entries, row-major, dense */
} sfx_buffer;
#define SFX_BUFFER_SIZE SFX_SIZE_TO(sfx_buffer, dims)

typedef struct sfx_list {               /* XLA_FFI_Args and XLA_FFI_Rets (one layout) */
    size_t struct_size;
    sfx_ext_base *extension_start;
    int64_t size;
    int *types;                         /* SFX_BUFFER for every entry softfp8 takes */
    void **items;                       /* sfx_buffer * for buffers */
} sfx_list;
#define SFX_LIST_SIZE SFX_SIZE_TO(sfx_list, items)
enum { SFX_BUFFER = 1 };                /* XLA_FFI_ArgType_BUFFER == XLA_FFI_RetType_BUFFER */

typedef struct sfx_bytespan {           /* XLA_FFI_ByteSpan */
    const char *ptr;
    size_t len;
} sfx_bytespan;

typedef struct sfx_scalar {             /* XLA_FFI_Scalar */
    int dtype;
    void *value;
} sfx_scalar;

typedef struct sfx_array {              /* XLA_FFI_Array */
    int dtype;
    size_t size;
    void *data;
} sfx_array;

enum { SFX_ATTR_ARRAY = 1, SFX_ATTR_SCALAR = 3 }; /* XLA_FFI_AttrType */

typedef struct sfx_attrs {              /* XLA_FFI_Attrs */
    size_t struct_size;
    sfx_ext_base *extension_start;
    int64_t size;
    int *types;
    sfx_bytespan **names;
    void **attrs;                       /* sfx_scalar * / sfx_array * by type */
} sfx_attrs;
#define SFX_ATTRS_SIZE SFX_SIZE_TO(sfx_attrs, attrs)

enum { SFX_STAGE_EXECUTE = 3 };         /* XLA_FFI_ExecutionStage */

typedef struct sfx_call_frame {         /* XLA_FFI_CallFrame */
    size_t struct_size;
    sfx_ext_base *extension_start;      /* the metadata query passes SFX_EXT_METADATA */
    const sfx_api *api;
    void *ctx;
    int stage;
    sfx_list args;
    sfx_list rets;
    sfx_attrs attrs;
    void *future;                       /* out, asynchronous handlers only (not counted
                                           in XLA's struct size) */
} sfx_call_frame;
#define SFX_CALL_FRAME_SIZE SFX_SIZE_TO(sfx_call_frame, attrs)

typedef struct sfx_metadata {           /* XLA_FFI_Metadata */
    size_t struct_size;
    sfx_api_version api_version;
    uint32_t traits;                    /* XLA_FFI_Handler_Traits */
} sfx_metadata;
#define SFX_METADATA_SIZE SFX_SIZE_TO(sfx_metadata, traits)

typedef struct sfx_metadata_ext {       /* XLA_FFI_Metadata_Extension */
    sfx_ext_base extension_base;
    sfx_metadata *metadata;
} sfx_metadata_ext;
#define SFX_METADATA_EXT_SIZE SFX_SIZE_TO(sfx_metadata_ext, metadata)

/* The handlers (xla_ffi.c): XLA_FFI_Handler functions, registered by softfp8.jax.
 *   convert:  (x, seed) -> (y, flags): quantise float32 -> codes (attr dir = 1) or
 *             dequantise codes -> float32 (dir = 0), attrs fmt (int32[8]: the format
 *             descriptor), env (int32[4]: rounding, saturate (-1: the format's default),
 *             tininess_before, sr_bits); seed uint32[..., 2] (lo, hi), one per batch.
 *   matmul:   (a, b) -> (c float32, flags): the exact dot product rounded once (a
 *             deterministic rounding mode), attrs fmt_a, fmt_b, env; a (..., m, k),
 *             b (..., k, p) with equal leading batch dims, flags one per batch; the optional
 *             attr model (int32[38]) a sequential accumulation model.
 *   scaled_mm: (a, b, scale_a, scale_b) -> (c float32, flags): softfp8.scaled_mm, the
 *             scales float32 grids (..., gr, gc) dividing their operands. */
#if defined(_WIN32)
#define SFX_EXPORT __declspec(dllexport)
#else
#define SFX_EXPORT __attribute__((visibility("default")))
#endif
/* exported from the extension module: softfp8.jax finds them by name (ctypes) */
SFX_EXPORT sfx_error *sfp8_xla_convert(sfx_call_frame *cf);
SFX_EXPORT sfx_error *sfp8_xla_matmul(sfx_call_frame *cf);
SFX_EXPORT sfx_error *sfp8_xla_scaled_mm(sfx_call_frame *cf);
SFX_EXPORT sfx_error *sfp8_xla_scaled_convert(sfx_call_frame *cf);
SFX_EXPORT sfx_error *sfp8_xla_delayed_update(sfx_call_frame *cf);
SFX_EXPORT sfx_error *sfp8_xla_unit_matmul(sfx_call_frame *cf);
SFX_EXPORT sfx_error *sfp8_xla_scale_product(sfx_call_frame *cf);
SFX_EXPORT sfx_error *sfp8_xla_block_quantize(sfx_call_frame *cf);
SFX_EXPORT sfx_error *sfp8_xla_block_values(sfx_call_frame *cf);
SFX_EXPORT sfx_error *sfp8_xla_tile_quantize(sfx_call_frame *cf);
#endif
