// libpg-query's own WebAssembly (PostgreSQL's parser), translated to C by wabt's wasm2c at build time and
// compiled into a Node-API addon: the same code as the .wasm, run without V8 decoding and compiling it at
// every start. What Emscripten's JavaScript glue gave the module (its imports) is given here: the heap's
// growth, setjmp/longjmp (PostgreSQL's PG_TRY) as Emscripten's invoke_* wrappers, and the few system calls.
// The addon answers the calls libpg-query's index.cjs makes of its Emscripten module.
#define NAPI_VERSION 8
#include <node_api.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libpg-query.h"
#include "wasm-rt-impl.h"

struct Z_a_instance_t {
  Z_libpgZ2Dquery_instance_t *pg;
};

static Z_libpgZ2Dquery_instance_t pg_instance;
static struct Z_a_instance_t glue = {&pg_instance};
static int instantiated;

// The innermost invoke_* frame a longjmp returns to (Emscripten's try/catch around the call).
static jmp_buf *sjlj_target;

#define MEM (pg_instance.w2c_z)

static wasm_rt_funcref_t table_entry(u32 index) {
  wasm_rt_funcref_table_t *table = &pg_instance.w2c_D;
  if (index >= table->size || table->data[index].func == NULL) wasm_rt_trap(WASM_RT_TRAP_CALL_INDIRECT);
  return table->data[index];
}

#define INVOKE(RET, ZERO, CALL_TYPE, ...)                                                          \
  wasm_rt_funcref_t entry = table_entry(index);                                                    \
  u32 sp = Z_libpgZ2DqueryZ_R(&pg_instance);                                                       \
  uint32_t depth = wasm_rt_call_stack_depth;                                                       \
  jmp_buf here;                                                                                    \
  jmp_buf *outer = sjlj_target;                                                                    \
  sjlj_target = &here;                                                                             \
  if (setjmp(here) == 0) {                                                                         \
    RET ((CALL_TYPE)entry.func)(entry.module_instance, ##__VA_ARGS__);                             \
    sjlj_target = outer;                                                                           \
    return RESULT;                                                                                 \
  }                                                                                                \
  sjlj_target = outer;                                                                             \
  wasm_rt_call_stack_depth = depth;                                                                \
  Z_libpgZ2DqueryZ_Q(&pg_instance, sp);                                                            \
  Z_libpgZ2DqueryZ_P(&pg_instance, 1, 0);                                                          \
  return ZERO;

#define RESULT
#define VOID_CALL
#define VOID_ZERO
// invoke_v.. (void)
void Z_aZ_e(struct Z_a_instance_t *e, u32 index) { INVOKE(VOID_CALL, VOID_ZERO, void (*)(void *)) }
void Z_aZ_f(struct Z_a_instance_t *e, u32 index, u32 a) { INVOKE(VOID_CALL, VOID_ZERO, void (*)(void *, u32), a) }
void Z_aZ_h(struct Z_a_instance_t *e, u32 index, u32 a, u32 b) {
  INVOKE(VOID_CALL, VOID_ZERO, void (*)(void *, u32, u32), a, b)
}
void Z_aZ_j(struct Z_a_instance_t *e, u32 index, u32 a, u32 b, u32 c) {
  INVOKE(VOID_CALL, VOID_ZERO, void (*)(void *, u32, u32, u32), a, b, c)
}
void Z_aZ_i(struct Z_a_instance_t *e, u32 index, u32 a, u32 b, u32 c, u32 d) {
  INVOKE(VOID_CALL, VOID_ZERO, void (*)(void *, u32, u32, u32, u32), a, b, c, d)
}
void Z_aZ_y(struct Z_a_instance_t *e, u32 index, u32 a, u32 b, u32 c, u32 d, u32 f) {
  INVOKE(VOID_CALL, VOID_ZERO, void (*)(void *, u32, u32, u32, u32, u32), a, b, c, d, f)
}
void Z_aZ_n(struct Z_a_instance_t *e, u32 index, u32 a, u32 b, u32 c, u32 d, u32 f, u32 g, u32 h, u32 i, u32 j,
            u32 k, u32 l, u32 m, u32 n) {
  INVOKE(VOID_CALL, VOID_ZERO,
         void (*)(void *, u32, u32, u32, u32, u32, u32, u32, u32, u32, u32, u32, u32, u32), a, b, c, d, f, g, h,
         i, j, k, l, m, n)
}
#undef RESULT
#define RESULT result
// invoke_i.. (i32 result)
u32 Z_aZ_g(struct Z_a_instance_t *e, u32 index) { u32 result; INVOKE(result =, 0, u32 (*)(void *)) }
u32 Z_aZ_b(struct Z_a_instance_t *e, u32 index, u32 a) { u32 result; INVOKE(result =, 0, u32 (*)(void *, u32), a) }
u32 Z_aZ_a(struct Z_a_instance_t *e, u32 index, u32 a, u32 b) {
  u32 result;
  INVOKE(result =, 0, u32 (*)(void *, u32, u32), a, b)
}
u32 Z_aZ_d(struct Z_a_instance_t *e, u32 index, u32 a, u32 b, u32 c) {
  u32 result;
  INVOKE(result =, 0, u32 (*)(void *, u32, u32, u32), a, b, c)
}
u32 Z_aZ_k(struct Z_a_instance_t *e, u32 index, u32 a, u32 b, u32 c, u32 d) {
  u32 result;
  INVOKE(result =, 0, u32 (*)(void *, u32, u32, u32, u32), a, b, c, d)
}
// invoke_ji (i64 result)
u64 Z_aZ_l(struct Z_a_instance_t *e, u32 index, u32 a) { u64 result; INVOKE(result =, 0, u64 (*)(void *, u32), a) }

// __emscripten_throw_longjmp: back to the innermost invoke_* frame.
void Z_aZ_p(struct Z_a_instance_t *e) {
  if (sjlj_target == NULL) wasm_rt_trap(WASM_RT_TRAP_UNREACHABLE);
  longjmp(*sjlj_target, 1);
}

// ___assert_fail, __abort_js, _exit, _proc_exit: the glue aborts the module; so does this.
void Z_aZ_c(struct Z_a_instance_t *e, u32 cond, u32 file, u32 line, u32 func) { wasm_rt_trap(WASM_RT_TRAP_UNREACHABLE); }
void Z_aZ_x(struct Z_a_instance_t *e) { wasm_rt_trap(WASM_RT_TRAP_UNREACHABLE); }
void Z_aZ_m(struct Z_a_instance_t *e, u32 code) { wasm_rt_trap(WASM_RT_TRAP_UNREACHABLE); }
void Z_aZ_v(struct Z_a_instance_t *e, u32 code) { wasm_rt_trap(WASM_RT_TRAP_UNREACHABLE); }
// __emscripten_runtime_keepalive_clear
void Z_aZ_w(struct Z_a_instance_t *e) {}
// __setitimer_js: PostgreSQL's timeouts, never armed by a parse.
u32 Z_aZ_o(struct Z_a_instance_t *e, u32 which, f64 timeout_ms) { return 0; }

// emscripten_resize_heap: grow to at least the requested size as the glue does (a fifth over, capped at 1 GiB).
u32 Z_aZ_q(struct Z_a_instance_t *e, u32 requested) {
  const u64 max = 1073741824ull;
  u64 old_size = MEM.size;
  if ((u64)requested > max) return 0;
  for (u64 cut_down = 1; cut_down <= 4; cut_down *= 2) {
    u64 over = old_size + old_size / 5 / cut_down;
    if (over > (u64)requested + 100663296ull) over = (u64)requested + 100663296ull;
    u64 target = over > requested ? over : requested;
    target = (target + 65535) / 65536 * 65536;
    if (target > max) target = max;
    if (target <= old_size) return 1;
    if (wasm_rt_grow_memory(&MEM, (u32)((target - old_size) / 65536)) != (u32)-1) return 1;
  }
  return 0;
}

// fd_close, fd_read, fd_seek: no file system (the glue's answer without one: EBADF).
u32 Z_aZ_u(struct Z_a_instance_t *e, u32 fd) { return 8; }
u32 Z_aZ_r(struct Z_a_instance_t *e, u32 fd, u32 iov, u32 iovcnt, u32 pnum) { return 8; }
u32 Z_aZ_s(struct Z_a_instance_t *e, u32 fd, u64 offset, u32 whence, u32 newoffset) { return 8; }

static u32 load_u32(u32 address) {
  if ((u64)address + 4 > MEM.size) wasm_rt_trap(WASM_RT_TRAP_OOB);
  u32 value;
  memcpy(&value, MEM.data + address, 4);
  return value;
}

// fd_write: standard output and error written through, as the glue prints them.
u32 Z_aZ_t(struct Z_a_instance_t *e, u32 fd, u32 iov, u32 iovcnt, u32 pnum) {
  u32 written = 0;
  for (u32 i = 0; i < iovcnt; i++) {
    u32 ptr = load_u32(iov + i * 8), len = load_u32(iov + i * 8 + 4);
    if ((u64)ptr + len > MEM.size) return 21;
    if (fd == 1 || fd == 2) {
      ssize_t ignored = write((int)fd, MEM.data + ptr, len);
      (void)ignored;
    }
    written += len;
  }
  if ((u64)pnum + 4 > MEM.size) return 21;
  memcpy(MEM.data + pnum, &written, 4);
  return 0;
}

// --- Node-API ---

static napi_value throw_trap(napi_env napi, wasm_rt_trap_t trap) {
  sjlj_target = NULL;
  const char *message = trap == WASM_RT_TRAP_EXHAUSTION ? "Maximum call stack size exceeded" : wasm_rt_strerror(trap);
  if (trap == WASM_RT_TRAP_EXHAUSTION) napi_throw_range_error(napi, NULL, message);
  else napi_throw_error(napi, NULL, message);
  return NULL;
}

static int u32_args(napi_env napi, napi_callback_info info, size_t want, u32 *out) {
  size_t argc = want;
  napi_value argv[4];
  napi_get_cb_info(napi, info, &argc, argv, NULL, NULL);
  for (size_t i = 0; i < want; i++) {
    if (i >= argc || napi_get_value_uint32(napi, argv[i], &out[i]) != napi_ok) {
      napi_throw_type_error(napi, NULL, "expected a number");
      return 0;
    }
  }
  return 1;
}

static napi_value number(napi_env napi, u32 value) {
  napi_value result;
  napi_create_uint32(napi, value, &result);
  return result;
}

// One export of the module taking one i32 and answering one (or none): malloc, free, the parser's entries.
typedef u32 (*export_u32)(Z_libpgZ2Dquery_instance_t *, u32);
typedef void (*export_void)(Z_libpgZ2Dquery_instance_t *, u32);

static napi_value call_export(napi_env napi, napi_callback_info info) {
  void *data;
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(napi, info, &argc, argv, NULL, &data);
  u32 arg;
  if (argc < 1 || napi_get_value_uint32(napi, argv[0], &arg) != napi_ok) {
    napi_throw_type_error(napi, NULL, "expected a number");
    return NULL;
  }
  intptr_t which = (intptr_t)data;
  u32 result = 0;
  wasm_rt_trap_t trap = wasm_rt_impl_try();
  if (trap != WASM_RT_TRAP_NONE) return throw_trap(napi, trap);
  switch (which) {
    case 0: result = Z_libpgZ2DqueryZ_C(&pg_instance, arg); break;  // malloc
    case 1: Z_libpgZ2DqueryZ_E(&pg_instance, arg); break;           // free
    case 2: result = Z_libpgZ2DqueryZ_F(&pg_instance, arg); break;  // wasm_parse_query_raw
    case 3: Z_libpgZ2DqueryZ_G(&pg_instance, arg); break;           // wasm_free_parse_result
    case 4: result = Z_libpgZ2DqueryZ_M(&pg_instance, arg); break;  // wasm_scan
    case 5: Z_libpgZ2DqueryZ_N(&pg_instance, arg); break;           // wasm_free_string
    case 6: result = Z_libpgZ2DqueryZ_I(&pg_instance, arg); break;  // wasm_fingerprint
    case 7: result = Z_libpgZ2DqueryZ_J(&pg_instance, arg); break;  // wasm_normalize_query
    case 8: result = Z_libpgZ2DqueryZ_H(&pg_instance, arg); break;  // wasm_parse_plpgsql
  }
  sjlj_target = NULL;
  return number(napi, result);
}

// getValue(pointer, 'i32')
static napi_value get_i32(napi_env napi, napi_callback_info info) {
  u32 address;
  if (!u32_args(napi, info, 1, &address)) return NULL;
  if ((u64)address + 4 > MEM.size) return throw_trap(napi, WASM_RT_TRAP_OOB);
  int32_t value;
  memcpy(&value, MEM.data + address, 4);
  napi_value result;
  napi_create_int32(napi, value, &result);
  return result;
}

// UTF8ToString(pointer): the NUL-terminated text at the pointer ("" for 0, as the glue).
static napi_value utf8_to_string(napi_env napi, napi_callback_info info) {
  u32 address;
  if (!u32_args(napi, info, 1, &address)) return NULL;
  napi_value result;
  if (address == 0 || address >= MEM.size) {
    napi_create_string_utf8(napi, "", 0, &result);
    return result;
  }
  const u8 *start = MEM.data + address;
  const u8 *end = memchr(start, 0, MEM.size - address);
  size_t length = end ? (size_t)(end - start) : MEM.size - address;
  napi_create_string_utf8(napi, (const char *)start, length, &result);
  return result;
}

// stringToUTF8(text, pointer, maxBytes): the text and a NUL, cut to maxBytes as the glue does.
static napi_value string_to_utf8(napi_env napi, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(napi, info, &argc, argv, NULL, NULL);
  u32 address, max_bytes;
  if (argc < 3 || napi_get_value_uint32(napi, argv[1], &address) != napi_ok ||
      napi_get_value_uint32(napi, argv[2], &max_bytes) != napi_ok) {
    napi_throw_type_error(napi, NULL, "expected a string, a pointer and a length");
    return NULL;
  }
  if (max_bytes == 0) return NULL;
  if ((u64)address + max_bytes > MEM.size) return throw_trap(napi, WASM_RT_TRAP_OOB);
  size_t copied = 0;
  if (napi_get_value_string_utf8(napi, argv[0], (char *)MEM.data + address, max_bytes, &copied) != napi_ok) {
    napi_throw_type_error(napi, NULL, "expected a string");
    return NULL;
  }
  return number(napi, (u32)copied);
}

static void property(napi_env napi, napi_value target, const char *name, napi_callback callback, intptr_t data) {
  napi_value function;
  napi_create_function(napi, name, NAPI_AUTO_LENGTH, callback, (void *)data, &function);
  napi_set_named_property(napi, target, name, function);
}

NAPI_MODULE_INIT() {
  if (!instantiated) {
    wasm_rt_trap_t trap = wasm_rt_impl_try();
    if (trap != WASM_RT_TRAP_NONE) {
      throw_trap(env, trap);
      return NULL;
    }
    wasm_rt_init();
    Z_libpgZ2Dquery_init_module();
    Z_libpgZ2Dquery_instantiate(&pg_instance, &glue);
    Z_libpgZ2DqueryZ_A(&pg_instance);  // the module's constructors (__wasm_call_ctors)
    instantiated = 1;
  }
  static const char *const names[] = {"_malloc", "_free", "_wasm_parse_query_raw", "_wasm_free_parse_result",
                                      "_wasm_scan", "_wasm_free_string", "_wasm_fingerprint",
                                      "_wasm_normalize_query", "_wasm_parse_plpgsql"};
  for (intptr_t i = 0; i < (intptr_t)(sizeof names / sizeof names[0]); i++) property(env, exports, names[i], call_export, i);
  property(env, exports, "getI32", get_i32, 0);
  property(env, exports, "UTF8ToString", utf8_to_string, 0);
  property(env, exports, "stringToUTF8", string_to_utf8, 0);
  return exports;
}
