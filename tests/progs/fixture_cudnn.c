/*
 * fixture_cudnn.c: a database of known cuDNN calls, plans and the kernels they launched, built
 * through the real pipeline (the cuDNN collector's own events, replayed CUPTI external
 * correlation and kernel records), so that tests can hold the report's cuDNN section to exact
 * numbers without a GPU. Usage: fixture_cudnn OUTPUT.db [ROUNDS]
 *
 * ROUNDS: after those calls, that many more convolutions of plan 1 in no_grad, 20 us apart from
 * 400 us on, each with its kernel; every seventh kernel reaches the writer before its call, every
 * 97th call fails; their host times vary; halfway, a new shape 888 is searched and its plan 6
 * built, linked to kernels of their own, and calls of shapes 999 and 998 are stored out of their
 * start order and at one start. More than 4,096 make the writer's fold of that kind two rows
 * (collectors/cudnn_fold.c).
 *
 * Phases: 4 no_grad, 7 inference_mode, 1 grad. Plans: 1 conv fp16 (shape 111), 2 batch-norm
 * training fp32, 3 attention bf16, 4 a second conv candidate of shape 111 (never run), 5 conv
 * fp16 of a new shape 555 built late. Times below are ns after t0.
 */
#include "collectors/registry.h"
#include "collectors/cudnn_internal.h"
#include "collectors/replay.h"
#include "profiler/thread.h"
#include "profiler/lifecycle.h"
#include "profiler/phase.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t base;
static struct ip_replay_buf buf;

static void call(enum ip_cudnn_fn fn, int op, int dtype, int phase, uint32_t plan, uint64_t start,
                 uint64_t dur, int status, uint64_t ext, uint64_t shape)
{
    struct ip_ev_cudnn_call e;
    memset(&e, 0, sizeof e);
    e.h.aux = fn;
    e.start = base + start;
    e.end = base + start + dur;
    e.handle = 0x4a4d;
    e.stream = 7;
    e.flags = IP_CUDNN_CALL_HAS_STREAM;
    e.ext_id = ext;
    e.shape = shape;
    e.plan = plan;
    e.status = status;
    e.op_kind = (uint8_t)op;
    e.dtype = (uint8_t)(dtype + 1);
    e.phase = (uint8_t)phase;
    ip_cudnn_emit_call(&e);
}

/* A kernel launched inside the cuDNN call `ext`, as the cuDNN wrapper leaves it for the launch
 * callback (ip_self.cudnn_call) while the real call runs. */
static void kernel(uint32_t corr, uint64_t ext, uint64_t start, uint64_t dur)
{
    ip_self.cudnn_call = ext;
    ip_replay_launch(corr);
    ip_self.cudnn_call = 0;
    CUpti_ActivityKernel10 *k = ip_replay_add(&buf, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (!k) { /* full: handed over, and a new one */
        ip_replay_complete(&buf, 0);
        while (!ip_replay_buffer(&buf)) ip_replay_sync();
        k = ip_replay_add(&buf, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        if (!k) abort();
    }
    k->start = base + start;
    k->end = base + start + dur;
    k->name = "cudnn_fixture_kernel";
    k->correlationId = corr;
    k->streamId = 7;
}

static void plan(uint32_t id, int kind, int dtype, uint16_t mask, uint8_t nops, uint64_t shape)
{
    struct ip_cudnn_class c = {(uint8_t)kind, (uint8_t)(dtype + 1), nops, IP_CUDNN_SRC_BUILD, mask};
    ip_cudnn_emit_plan(id, ip_cudnn_class_pack(c), shape, base);
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: fixture_cudnn OUTPUT.db [ROUNDS]\n");
        return 2;
    }
    int rounds = argc == 3 ? atoi(argv[2]) : 0;
    struct ip_start_opts opts = {argv[1], 0, ip_collectors, IP_COLLECTOR_COUNT};
    if (ip_lifecycle_start(&opts) != 0 || ip_replay_begin() != 0 || !ip_replay_buffer(&buf))
        return 1;
    base = ip_t0();
    /* The phases the calls are stamped with, so that the database names them. */
    ip_phase_set(IP_GRAD, 0, 0);
    ip_phase_set(IP_INFERENCE_MODE, 0, 0);
    ip_phase_set(IP_NO_GRAD, 0, 0);
    const uint16_t conv = 1u << IP_CUDNN_NODE_CONV_FWD | 1u << IP_CUDNN_NODE_POINTWISE;
    plan(1, IP_CUDNN_OP_CONV_FWD, CUDNN_DATA_HALF, conv, 2, 111);
    plan(2, IP_CUDNN_OP_BN_TRAINING, CUDNN_DATA_FLOAT, 1u << IP_CUDNN_NODE_BN_TRAINING, 1, 222);
    plan(3, IP_CUDNN_OP_ATTENTION, CUDNN_DATA_BFLOAT16, 1u << IP_CUDNN_NODE_SDPA_FWD, 1, 333);
    plan(4, IP_CUDNN_OP_CONV_FWD, CUDNN_DATA_HALF, conv, 2, 111);
    plan(5, IP_CUDNN_OP_CONV_FWD, CUDNN_DATA_HALF, conv, 2, 555);

    const int F32 = CUDNN_DATA_FLOAT, F16 = CUDNN_DATA_HALF, BF16 = CUDNN_DATA_BFLOAT16;
    call(IP_CUDNN_FN_CREATE, 0, -1, 0, 0, 100, 800, 0, 0, 0);
    call(IP_CUDNN_FN_BACKEND_FINALIZE, IP_CUDNN_OP_CONV_FWD, F16, 4, 1, 1000, 30000, 0, 0, 111);
    call(IP_CUDNN_FN_BACKEND_FINALIZE, IP_CUDNN_OP_CONV_FWD, F16, 4, 4, 40000, 20000, 0, 0, 111);
    call(IP_CUDNN_FN_FIND_CONV_FWD_ALGO, IP_CUDNN_OP_CONV_FWD, F16, 4, 0, 70000, 50000, 0, 0, 666);
    /* no_grad: the conv plan four times (the last fails), batch-norm training twice. */
    call(IP_CUDNN_FN_BACKEND_EXECUTE, IP_CUDNN_OP_CONV_FWD, F16, 4, 1, 130000, 1000, 0, 1, 111);
    kernel(101, 1, 130500, 5000);
    call(IP_CUDNN_FN_BACKEND_EXECUTE, IP_CUDNN_OP_CONV_FWD, F16, 4, 1, 140000, 2000, 0, 2, 111);
    kernel(102, 2, 140500, 5000);
    kernel(103, 2, 146000, 1000);
    call(IP_CUDNN_FN_BACKEND_EXECUTE, IP_CUDNN_OP_CONV_FWD, F16, 4, 1, 150000, 3000, 0, 3, 111);
    kernel(104, 3, 150500, 5000);
    call(IP_CUDNN_FN_BACKEND_EXECUTE, IP_CUDNN_OP_CONV_FWD, F16, 4, 1, 160000, 10000, 2000, 4, 111);
    call(IP_CUDNN_FN_BACKEND_EXECUTE, IP_CUDNN_OP_BN_TRAINING, F32, 4, 2, 180000, 4000, 0, 5, 222);
    kernel(105, 5, 180500, 700);
    call(IP_CUDNN_FN_BACKEND_EXECUTE, IP_CUDNN_OP_BN_TRAINING, F32, 4, 2, 190000, 4000, 0, 6, 222);
    kernel(106, 6, 190500, 300);
    call(IP_CUDNN_FN_CONV_FWD, IP_CUDNN_OP_CONV_FWD, F16, 4, 0, 200000, 2500, 0, 0, 666);
    /* inference_mode: the legacy training call of a model left in train() mode. */
    call(IP_CUDNN_FN_BN_FWD_TRAINING, IP_CUDNN_OP_BN_TRAINING, F32, 7, 0, 210000, 6000, 0, 0, 777);
    /* grad: batch-norm training is expected there; attention. */
    call(IP_CUDNN_FN_BACKEND_EXECUTE, IP_CUDNN_OP_BN_TRAINING, F32, 1, 2, 220000, 4000, 0, 7, 222);
    kernel(107, 7, 220500, 500);
    call(IP_CUDNN_FN_BACKEND_EXECUTE, IP_CUDNN_OP_ATTENTION, BF16, 1, 3, 230000, 8000, 0, 8, 333);
    kernel(108, 8, 230500, 9000);
    /* After warm-up: shape 666 searched again after use; a new shape 555 built and run. */
    call(IP_CUDNN_FN_FIND_CONV_FWD_ALGO, IP_CUDNN_OP_CONV_FWD, F16, 4, 0, 240000, 40000, 0, 0, 666);
    call(IP_CUDNN_FN_BACKEND_FINALIZE, IP_CUDNN_OP_CONV_FWD, F16, 4, 5, 290000, 25000, 0, 0, 555);
    call(IP_CUDNN_FN_BACKEND_EXECUTE, IP_CUDNN_OP_CONV_FWD, F16, 4, 5, 320000, 1500, 0, 9, 555);
    kernel(109, 9, 320500, 2000);
    for (int i = 0; i < rounds; i++) {
        uint64_t t = 400000 + (uint64_t)i * 20000, ext = 10 + (uint64_t)i;
        uint32_t corr = 110 + (uint32_t)i;
        int early = i % 7 == 3;
        if (early) { /* the kernel's buffer ingested before the call's event is written */
            ip_replay_complete(&buf, 0);
            if (ip_replay_sync() != 0 || !ip_replay_buffer(&buf)) return 1;
            kernel(corr, ext, t + 500, 3000 + (uint64_t)(i % 11) * 100);
            ip_replay_complete(&buf, 0);
            if (ip_replay_sync() != 0 || !ip_replay_buffer(&buf)) return 1;
        }
        call(IP_CUDNN_FN_BACKEND_EXECUTE, IP_CUDNN_OP_CONV_FWD, F16, 4, 1, t,
             1000 + (uint64_t)((i * 37) % 101) * 50, i % 97 == 5 ? 2000 : 0, ext, 111);
        if (!early) kernel(corr, ext, t + 500, 3000 + (uint64_t)(i % 11) * 100);
        if (i == rounds / 2) { /* a new shape after warm-up: searched, its plan built */
            call(IP_CUDNN_FN_FIND_CONV_FWD_ALGO, IP_CUDNN_OP_CONV_FWD, F16, 4, 0, t + 5000, 6000, 0,
                 100000, 888);
            kernel(90000, 100000, t + 5500, 4000);
            kernel(90001, 100000, t + 9600, 1000);
            call(IP_CUDNN_FN_BACKEND_FINALIZE, IP_CUDNN_OP_CONV_FWD, F16, 4, 6, t + 12000, 3000, 0,
                 0, 888);
            /* Calls stored out of start order, as threads' rings reach the writer: shape 999 is
             * run (13 us), searched (14 us), run again (15 us), stored last first: searched
             * after use. Shape 998 searched and run at one start, the search stored first: a
             * tie goes by that order, so not after use. */
            call(IP_CUDNN_FN_CONV_FWD, IP_CUDNN_OP_CONV_FWD, F16, 4, 0, t + 15000, 500, 0, 0, 999);
            call(IP_CUDNN_FN_FIND_CONV_FWD_ALGO, IP_CUDNN_OP_CONV_FWD, F16, 4, 0, t + 14000, 500, 0,
                 0, 999);
            call(IP_CUDNN_FN_CONV_FWD, IP_CUDNN_OP_CONV_FWD, F16, 4, 0, t + 13000, 500, 0, 0, 999);
            call(IP_CUDNN_FN_FIND_CONV_FWD_ALGO, IP_CUDNN_OP_CONV_FWD, F16, 4, 0, t + 16000, 500, 0,
                 0, 998);
            call(IP_CUDNN_FN_CONV_FWD, IP_CUDNN_OP_CONV_FWD, F16, 4, 0, t + 16000, 500, 0, 0, 998);
        }
    }
    ip_replay_complete(&buf, 0);
    ip_lifecycle_finish("exit", 0);
    return 0;
}
