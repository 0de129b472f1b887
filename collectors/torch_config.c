/*
 * torch_config.c: the settings of the libtorch collector (and its Python module hooks), with their
 * defaults and docs: read at start by the core (the collector's descriptor hands them over),
 * written to the run's metadata and listed by `infprof info`.
 */
#include "torch_config.h"

#include <stddef.h>

/* clang-format off */
static const struct ip_cfg_entry entries[IP_TORCH_CFG_COUNT] = {
    [IP_TORCH_CFG_ON] = {"INFPROF_TORCH", IP_CFG_BOOL, "1", 0, 1, NULL,
        "libtorch awareness: phases, tensor memory, iterations.", NULL},
    [IP_TORCH_CFG_CPU_MEMORY] = {"INFPROF_CPU_MEMORY", IP_CFG_BOOL, "1", 0, 1, NULL,
        "Also record CPU tensor memory: c10's profiled CPU allocator reports each block, its size"
        " kept in our own lock-free table (or libtorch's, a mutex and a hash insert a block,"
        " where ours cannot stand in).", NULL},
    [IP_TORCH_CFG_POLL] = {"INFPROF_POLL", IP_CFG_BOOL, "1", 0, 1, NULL,
        "Confirm the grad mode by polling libtorch's getters at each kernel launch and iteration.",
        NULL},
    [IP_TORCH_CFG_RECORD_FUNCTION] = {"INFPROF_RECORD_FUNCTION", IP_CFG_BOOL, "1", 0, 1, NULL,
        "Take libtorch's user scopes (torch.profiler.record_function, RECORD_USER_SCOPE) named"
        " like INFPROF_ITERATION_RANGE, and scripted modules' forward called from Python, as"
        " iterations: RecordFunction callbacks on those two scope kinds only.", NULL},
    [IP_TORCH_CFG_OPERATORS] = {"INFPROF_OPERATORS", IP_CFG_ENUM, "sampled", 0, 0, "0|1|sampled",
        "PyTorch operator calls (RecordFunction scope FUNCTION: name, thread, start, end, depth,"
        " self time), table torch_operators. 'sampled': every call of one outermost iteration in"
        " INFPROF_OPERATORS_EVERY (the others run at full speed, as torch.profiler's schedule),"
        " figures per iteration from those; '1': every call (about 0.25-0.6 us each: libtorch"
        " leaves its fast path); '0': none (docs/performance.md).", NULL},
    [IP_TORCH_CFG_OPERATORS_EVERY] = {"INFPROF_OPERATORS_EVERY", IP_CFG_INT, "4", 1, 1000000,
        NULL, "With INFPROF_OPERATORS=sampled, one outermost iteration in this many (on average,"
        " per phase; at random so as not to follow a loop's own period) has its operators"
        " recorded, the second of each phase always. 1: every iteration.", NULL},
    [IP_TORCH_CFG_OPERATORS_BUDGET] = {"INFPROF_OPERATORS_BUDGET", IP_CFG_MILLI, "0.25", 0,
        100000, NULL,
        "With INFPROF_OPERATORS=sampled, once a phase has had 8 captures: later ones are spaced"
        " so that what they add (captured iterations against the others, measured as the run"
        " goes) stays about this percent of the phase's time, a decimal (1 in"
        " INFPROF_OPERATORS_EVERY at most, 1 in 256 at least, further apart as"
        " INFPROF_OPERATORS_STRATUM doubles the gap). 0, or INFPROF_OPERATORS_EVERY set: the"
        " fixed rate.", NULL},
    [IP_TORCH_CFG_OPERATORS_STRATUM] = {"INFPROF_OPERATORS_STRATUM", IP_CFG_INT, "256", 0,
        1000000, NULL,
        "With the budget: captures come in strata of this many (8 at least), each at twice the"
        " gap of the one before (or the budget's need if more), so that a run's captures grow"
        " with the logarithm of its length; the report weighs each stratum by the iterations it"
        " stands for. 0: the budget's need capture by capture, every capture weighed alike.",
        NULL},
    [IP_TORCH_CFG_OPERATORS_SEED] = {"INFPROF_OPERATORS_SEED", IP_CFG_INT, "0", 0, 2147483647,
        NULL,
        "With INFPROF_OPERATORS=sampled: 0, the captured iterations drawn from the process and"
        " the moment (two runs capture different ones); N, from N alone (the same program's"
        " runs capture the same iterations, a forked child its parent's schedule).", NULL},
    [IP_TORCH_CFG_PYTHON] = {"INFPROF_PYTHON", IP_CFG_BOOL, "1", 0, 1, NULL,
        "In a Python process, the outermost nn.Module call is an iteration and a DataLoader's"
        " __next__ the wait for data: PyTorch's global module hooks, installed by our"
        " sitecustomize (PYTHONPATH, restored at once) when the program imports torch.", NULL},
    [IP_TORCH_CFG_PYTHON_FAST] = {"INFPROF_PYTHON_FAST", IP_CFG_BOOL, "1", 0, 1, NULL,
        "The module hooks' common path (a one-thread program's forward) in the library's C"
        " builtins, which call the Python hooks for any other case; 0: the Python hooks"
        " throughout (for comparison).", NULL},
    [IP_TORCH_CFG_MEMORY_FOLD] = {"INFPROF_MEMORY_FOLD", IP_CFG_BOOL, "1", 0, 1, NULL,
        "Fold the allocator's reports inside each outermost iteration (a Python module call, a"
        " TorchScript or AOTInductor call, an NVTX push/pop range or record_function scope that marks"
        " one) whose operators are not captured: per thread, device"
        " and phase, its lowest, highest and last totals (rows of tensor_memory) and its"
        " allocations' count, bytes and three largest (tensor_memory_folds). Every figure the"
        " report gives is the same; 0: one row per report.", NULL},
};
/* clang-format on */

static struct ip_cfg_value values[IP_TORCH_CFG_COUNT];

const struct ip_cfg_group ip_torch_cfg = {"torch", entries, values, IP_TORCH_CFG_COUNT};
