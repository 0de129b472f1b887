/*
 * torch_internal.h: what the libtorch collector's files share: its ring events and the writer
 * side's entry points, with torch_symbols.h (what it interposes) and torch_state.h (what was
 * found, the thread's state).
 *
 *   torch.c         app side: the hooks (setters, allocator reports, TorchScript calls)
 *   torch_state.c   app side: finding libtorch, its getters, the thread's state, the poller
 *   torch_cpumem.c  app side: the CPU allocator's New and Delete, with a table of our own
 *   torch_iterations.c  app side: iterations (hooked calls, record_function and TorchScript
 *                   scopes through RecordFunction callbacks) and their event
 *   torch_python.c  app side: the Python bridge (module calls as iterations), its builtins
 *   torch_pyfast.c  app side: the Python module hooks' common path in C
 *   torch_pyapi.c   CPython's C API, looked up in the process (torch_pyapi.h)
 *   torch_ingest.c  writer side: rows, the run metadata (torch_api, collector status)
 */
#ifndef INFPROF_TORCH_INTERNAL_H
#define INFPROF_TORCH_INTERNAL_H

#include "torch_state.h"
#include "torch_symbols.h"
#include "../profiler/events.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct ip_store;

enum {
    IP_EV_TORCH_MEMORY = 1,
    IP_EV_TORCH_ITERATION = 2,
    IP_EV_TORCH_OP = 3,
    IP_EV_TORCH_SETTING = 4,
    IP_EV_TORCH_INPUT_WAIT = 5,
    IP_EV_TORCH_GC = 6,
    IP_EV_TORCH_OP_WINDOW = 7,
    IP_EV_TORCH_MEMORY_FOLD = 8
};

/* One allocator report (c10::reportMemoryUsageToProfiler). aux: phase of the calling thread. */
struct ip_ev_torch_memory {
    struct ip_ev h;
    uint64_t ts;
    uint64_t ptr;
    int64_t bytes;     /* > 0 allocation, < 0 free */
    int64_t allocated; /* the allocator's totals after the event */
    int64_t reserved;
    int8_t device_type, device_index; /* c10::Device */
    uint8_t cpu_total_known;          /* a shared block's (CPU, allocated 0): reserved holds the
                                         CPU allocator's total then (torch_cpumem.c's table) */
    uint8_t pad;
    uint32_t op; /* the thread's innermost PyTorch operator (opname.h), 0 none */
};

/* One iteration seen by the torch collector (torch_iterations.c). aux: its id. */
#define IP_ITER_LABEL_MAX 256 /* an iteration's event is about 300 bytes: a few per forward */
struct ip_ev_torch_iteration {
    struct ip_ev h;
    uint64_t start, end;
    uint64_t nvtx;   /* innermost NVTX push/pop range of the thread at the call, 0 none */
    int64_t batch;   /* from the scope's name ('batch=N'), 0 unknown */
    uint32_t source; /* the iterations table's: 1 TorchScript, 3 record_function, 4 AOTInductor,
                        5 Python module call */
    uint32_t len;    /* bytes of label */
    char label[IP_ITER_LABEL_MAX]; /* the record_function scope's name (cut), "" none */
};

/* ---- app side ---- */

/* A hooked call that may be an iteration (torch_iterations.c): begun before the real call, ended
 * when it returns or an exception unwinds through it (returned says which). */
struct ip_torch_call {
    uint64_t start, nvtx;
    uint32_t iter;    /* its iteration id (outermost calls) */
    uint8_t depth;    /* 0 not counted, 1 nested, 2 outermost */
    uint8_t returned; /* the real call returned (not unwound by an exception) */
    uint8_t source;   /* the iterations table's: 1 TorchScript, 4 AOTInductor */
};
struct ip_torch_call ip_torch_call_begin(uint32_t seen, uint8_t source);
void ip_torch_call_end(struct ip_torch_call *c);
/* At a safe point once libtorch is found: register the RecordFunction callbacks, once. */
void ip_torch_scope_arm(void);
/* Marks (record_function scopes named like INFPROF_ITERATION_RANGE) given up: a thread had too
 * many open at once (meta torch_marks_dropped). */
uint64_t ip_torch_marks_dropped(void);
/* torch.c: CPU tensor memory is to be recorded (decided once); a CPU allocator report made by
 * torch_cpumem.c (recorded, then, with forward, passed on to c10's reportMemoryUsageToProfiler:
 * torch.profiler's). */
int ip_torch_cpu_memory_wanted(void);
void ip_torch_cpu_report(void *ptr, int64_t bytes, int64_t allocated, int forward);
/* torch_cpumem.c: the CPU blocks left out for want of room in its table. */
void ip_torch_cpumem_untracked(int64_t *blocks, int64_t *bytes);
/* An iteration begins on the calling thread now (its phase's NVTX range moved first): its id, with
 * its start and the thread's innermost NVTX range. */
uint32_t ip_torch_iter_open(uint64_t *start, uint64_t *nvtx);
/* Its event, once ended (batch 0 unknown, label NULL none). */
void ip_torch_iter_emit(uint32_t iter, uint64_t start, uint64_t end, uint64_t nvtx, int64_t batch,
                        uint32_t source, const char *label);

/* A DataLoader's __next__ scope is open on the calling thread (it makes a batch). */
int ip_torch_in_input_wait(void);
/* One wait for data: a DataLoader's __next__ scope (torch_iterations.c). aux: phase. */
struct ip_ev_torch_input_wait {
    struct ip_ev h;
    uint64_t start, end;
};

/* ---- torch_python.c: the Python bridge (docs/python.md) ---- */

/* One pause of Python's garbage collector of IP_GC_MIN_NS or longer (gc.callbacks, from our
 * hooks). aux: phase. */
#define IP_GC_MIN_NS 20000
struct ip_ev_torch_gc {
    struct ip_ev h;
    uint64_t start, end;
    int32_t generation;
    uint32_t pad;
};
/* Pauses shorter than IP_GC_MIN_NS: how many, their total ns (the run metadata). */
void ip_torch_gc_counts(uint64_t *short_n, uint64_t *short_ns);

/* Collector init: in a Python interpreter, our sitecustomize's directory on PYTHONPATH. */
void ip_torch_python_init(void);
/* The thread enters (on 1) or leaves (0) torch.jit.trace: its calls are set-up, never iterations
 * (torch_iterations.c; the Python bridge says when). */
void ip_torch_setup(int on);
int ip_torch_in_setup(void);
/* Writer side: what became of the module hooks, for the run metadata ("" not Python). */
const char *ip_torch_python_status(void);
/* Module calls not timed (begun before their thread was watched), iterations still open. */
void ip_torch_python_counts(uint64_t *unseen, int64_t *open);
/* Other threads watched late: how many times another Python thread did torch work while the one
 * watched thread's forward was open (the hooks disarmed: its module calls unseen), and for how
 * long in all before the hooks watched every thread. */
void ip_torch_python_late(uint64_t *n, uint64_t *ns);

/* The thread whose outermost module call is open while the hooks watch one thread (0: none, or
 * every thread is watched). Another thread's torch work meanwhile (an allocator report: torch.c)
 * is told with ip_torch_py_other; the watched thread's forward, as it ends, then has the hooks
 * watch every thread (docs/python.md, "Threads"). */
extern _Atomic uint32_t ip_torch_py_solo;
void ip_torch_py_other(void);
/* A forked child: the parent's watched thread is not one of its threads. */
void ip_torch_python_atfork_child(void);
static inline void ip_torch_py_watch(void)
{
    uint32_t o = atomic_load_explicit(&ip_torch_py_solo, memory_order_relaxed);
    if (__builtin_expect(o != 0 && o != ip_self.tid, 0)) ip_torch_py_other();
}

/* ---- torch_ops.c: operator calls (INFPROF_OPERATORS) ---- */

/* RecordFunction callbacks (torch_iterations.c: user and TorchScript scopes; torch_ops.c:
 * operators): at::addGlobalCallback, RecordFunction::name, at::RecordScope's values, and a C
 * struct laid out as at::RecordFunctionCallback (torch_iterations.c says why this layout). */
#define SYM_ADD_GLOBAL "_ZN2at17addGlobalCallbackENS_22RecordFunctionCallbackE"
#define SYM_NAME       "_ZNK2at14RecordFunction4nameEv"
#define SYM_ADD_TL     "_ZN2at22addThreadLocalCallbackENS_22RecordFunctionCallbackE"
#define SYM_REMOVE     "_ZN2at14removeCallbackEm"
enum { RF_SCOPE_FUNCTION = 0, RF_SCOPE_TORCHSCRIPT = 2, RF_SCOPE_USER = 7, RF_NUM_SCOPES = 10 };
struct rf_callback {
    void **(*start)(void **ret, const void *rf);
    void (*end)(const void *rf, void *ctx);
    double sampling_prob;
    bool scopes[RF_NUM_SCOPES];
    bool needs_inputs, needs_outputs, needs_ids;
};
_Static_assert(sizeof(struct rf_callback) == 40, "at::RecordFunctionCallback is 40 bytes");

#define IP_OP_STACK    64 /* open operators kept per thread; deeper ones are counted only */
#define IP_OP_NAME_MAX 64 /* bytes of the name carried, its terminator included */

/* One operator call, at its end. aux: phase of the thread. */
struct ip_ev_torch_op {
    struct ip_ev h;
    uint64_t start, end;
    uint64_t self;  /* end - start less its children's time on this thread */
    uint32_t iter;  /* outermost open iteration of the thread, 0 none */
    uint16_t depth; /* operators open around it on this thread */
    uint16_t len;   /* bytes of name used */
    char name[IP_OP_NAME_MAX];
};
/* ---- torch_memfold.c: allocator reports folded per forward iteration ----------------------- */

/* One thread's allocator reports on one device in one phase, inside one outermost iteration that
 * is a forward call (torch_memfold.c). aux: the phase. Totals as the reports gave them. */
struct ip_ev_torch_memory_fold {
    struct ip_ev h;
    uint64_t start, end;              /* its first and last reports */
    uint64_t lo_ts, hi_ts, after_ts;  /* the lowest total, the highest, the lowest after it */
    uint64_t rmax_ts;                 /* the highest reserved */
    int64_t lo, lo_res, hi, hi_res;   /* allocated, reserved at the lowest and the highest */
    int64_t after, after_res;         /* and at the lowest after the highest */
    int64_t rmax_alloc, rmax;         /* allocated and reserved at the highest reserved */
    int64_t last, last_res;           /* at its last report */
    int64_t first_before;             /* allocated before its first report */
    int64_t alloc_bytes, largest[3];  /* its allocations' bytes, the three largest */
    uint32_t reports, allocs;         /* reports folded; of them allocations (bytes > 0) */
    uint32_t iter, op;                /* its iteration; the operator at the highest (opname.h) */
    int8_t device_type, device_index; /* c10::Device */
    uint8_t pad[2];
    uint32_t tid; /* its thread, written by the finish on another's ring; 0: the ring's */
};

/* The calling thread's reports are being folded: torch.c's report hook asks, then adds. */
extern _Thread_local uint8_t ip_torch_memfold_on __attribute__((tls_model("initial-exec")));
/* Folds one report; 0 when it is not foldable (it becomes a row as before). */
int ip_torch_memfold_add(int64_t bytes, int64_t allocated, int64_t reserved, int8_t type,
                         int8_t index);
/* At start: its observers of the threads' phase changes and exits (torch_state.h) and of the
 * outermost iterations' edges (iteration.h): an iteration's reports are folded from its begin
 * (unless its operators are captured: INFPROF_OPERATORS=sampled keeps those whole) to its end,
 * which writes them. */
void ip_torch_memfold_arm(void);
/* The run finishes (on the finishing thread: its stop, _exit, a fatal signal outside our hooks):
 * every thread's open folds are written on the calling thread's ring. */
void ip_torch_memfold_finish_all(void);
void ip_torch_memfold_atfork_child(void);
/* Reports folded so far, and in how many folds (meta memory_folded_reports, memory_folds). */
void ip_torch_memfold_counts(uint64_t *reports, uint64_t *folds);
/* torch_ops.c: iteration `id` is the one whose operators this thread captures. */
int ip_torch_ops_captured(uint32_t id);

/* One sampled capture (INFPROF_OPERATORS=sampled): the outermost iteration `iter` had its
 * operators recorded from start to end, chosen at a mean gap of `every` iterations. aux: the
 * thread's phase at its end. */
struct ip_ev_torch_op_window {
    struct ip_ev h;
    uint64_t start, end;
    uint32_t iter, every;
};
/* At the safe point that registers the scope callbacks: the operator callback, if asked for. */
void ip_torch_ops_arm(void);
/* An outermost iteration's edge (torch_memfold.c passes iteration.h's on): the operators'
 * capture begins or ends with it, once sampling is armed. */
void ip_torch_ops_edge(uint32_t id, int begin);
void ip_torch_ops_atfork_child(void);
void ip_torch_ops_prepare(struct ip_store *s);
void ip_torch_ops_ingest(struct ip_store *s, uint32_t tid, const struct ip_ev_torch_op *e);
void ip_torch_ops_window_ingest(struct ip_store *s, uint32_t tid,
                                const struct ip_ev_torch_op_window *e);
void ip_torch_ops_finish(struct ip_store *s);

/* ---- torch_opsum.c: the operator calls' sums per (phase, name, iteration), for the report ---- */
void ip_torch_opsum_prepare(struct ip_store *s);
void ip_torch_opsum_add(int32_t phase, int64_t name, int64_t iter, int64_t self, int64_t dur);
void ip_torch_opsum_finish(struct ip_store *s);

/* ---- torch_settings.c: at::Context settings (cudnn.benchmark, TF32, matmul precision) ---- */

enum { IP_SETTING_BENCHMARK, IP_SETTING_TF32_CUDNN, IP_SETTING_MATMUL, IP_SETTING_COUNT };
/* A setting took a new value. aux: which (IP_SETTING_*). */
struct ip_ev_torch_setting {
    struct ip_ev h;
    uint64_t ts;
    int32_t value; /* ip_torch_setting_text's */
    uint32_t pad;
};
/* The setting's name ("cudnn.benchmark") and a value's text ("on"), for the writer. */
const char *ip_torch_setting_name(uint32_t which);
const char *ip_torch_setting_text(uint32_t which, int32_t value);

/* ---- torch_ingest.c (writer side) ---- */

void ip_torch_ingest_prepare(struct ip_store *s);
void ip_torch_ingest(struct ip_store *s, uint32_t tid, const struct ip_ev *ev);
void ip_torch_ingest_flush(struct ip_store *s, int final);
void ip_torch_ingest_finish(struct ip_store *s);

/* The Python bridge's begin and end of a module call (torch_python.c, exported for the Python
 * side), which the module hooks' common path calls too (torch_pyfast.c). */
int infprof_py_begin(void);
int infprof_py_end(const char *label, long long batch, int ok);

#endif
