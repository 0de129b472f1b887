/*
 * stub_cupti.c: a stand-in libcupti.so.13 for the tests, exporting the entry points infprof
 * loads (same names, version node libcupti.so.13) and behaving like CUPTI where infprof depends
 * on it: one subscriber, activity kinds enabled one by one, buffers requested through the
 * client's callback and handed back full (on the thread that filled them, under the stub's lock,
 * as CUPTI does) or at cuptiActivityFlushAll (from a worker thread while the caller waits), a
 * dropped count for records that found no buffer, records read with cuptiActivityGetNextRecord
 * over the layout of collectors/cupti_layout.h.
 *
 * A program drives it as CUDA would: stubcupti_launch() and stubcupti_memcpy() run the callbacks
 * and write the API and work records of launches and copies on the calling thread.
 *
 * STUB_CUPTI (comma-separated) picks the trouble:
 *   multi        cuptiSubscribe_v2 fails with MULTIPLE_SUBSCRIBERS, naming the holder
 *   anonymous    (with multi) the holder gives no name, as compute-sanitizer does
 *   subscribe_fail  cuptiSubscribe_v2 fails with NOT_INITIALIZED (what no driver looks like)
 *   enable_fail  CONCURRENT_KERNEL cannot be enabled (NOT_COMPATIBLE)
 *   memory2_fail MEMORY2 cannot be enabled
 *   register_fail  cuptiActivityRegisterCallbacks fails
 *   no_timestamp   cuptiActivityRegisterTimestampCallback fails: records carry the stub's clock
 *   hold         full buffers are kept until cuptiActivityFlushAll (so a small pool runs dry)
 *   api_late     API records go to buffers of their own, kept until cuptiActivityFlushAll: the
 *                work they issued arrives first (CUPTI fills API and work records apart)
 *   bad_record   one record CUPTI cannot read, after the 100th record
 *   dropped=N    CUPTI reports N dropped records at the first query
 * STUB_CUPTI_LOG: a file that gets one line per notable call (subscribe, enable, flush, ...).
 */
#include "collectors/cupti_layout.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT   __attribute__((visibility("default")))
#define HELD_MAX 256

static struct {
    int init;
    int multi, anonymous, subscribe_fail, enable_fail, memory2_fail, register_fail, no_timestamp,
        hold, bad_record;
    _Atomic size_t dropped_once;
    CUpti_CallbackFunc callback;
    void *userdata;
    int subscribed;
    uint8_t cb_on[2][1024];
    uint8_t api_on[2][1024]; /* API records enabled call by call */
    int api_late;
    uint8_t *acur; /* api_late: the buffer API records go to */
    size_t acur_size, acur_used;
    int kind_on[CUPTI_ACTIVITY_KIND_COUNT];
    CUpti_BuffersCallbackRequestFunc request;
    CUpti_BuffersCallbackCompleteFunc complete;
    CUpti_TimestampCallbackFunc timestamp;
    pthread_mutex_t lock;
    uint8_t *cur;
    size_t cur_size, cur_used;
    struct {
        uint8_t *b;
        size_t size, used;
    } held[HELD_MAX];
    int nheld;
    _Atomic size_t dropped; /* records that found no buffer */
    uint64_t records;
    int bad_written;
    uint8_t *bad_buffer; /* the buffer holding the unreadable record */
    size_t after_bad;    /* records written after it in that buffer */
    _Atomic uint32_t corr;
} st = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void note(const char *fmt, ...)
{
    const char *path = getenv("STUB_CUPTI_LOG");
    if (!path) return;
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    ssize_t w = write(fd, line, (size_t)n);
    (void)w;
    close(fd);
}

static void configure(void)
{
    if (st.init) return;
    st.init = 1;
    const char *m = getenv("STUB_CUPTI");
    if (!m) return;
    st.multi = strstr(m, "multi") != NULL;
    st.anonymous = strstr(m, "anonymous") != NULL;
    st.subscribe_fail = strstr(m, "subscribe_fail") != NULL;
    st.enable_fail = strstr(m, "enable_fail") != NULL;
    st.memory2_fail = strstr(m, "memory2_fail") != NULL;
    st.register_fail = strstr(m, "register_fail") != NULL;
    st.no_timestamp = strstr(m, "no_timestamp") != NULL;
    st.hold = strstr(m, "hold") != NULL;
    st.api_late = strstr(m, "api_late") != NULL;
    st.bad_record = strstr(m, "bad_record") != NULL;
    const char *d = strstr(m, "dropped=");
    if (d) atomic_store(&st.dropped_once, (size_t)strtoull(d + 8, NULL, 10));
}

/* The stub's own clock stands for CUPTI's default (CLOCK_REALTIME): far from CLOCK_MONOTONIC. */
static uint64_t now(void)
{
    if (st.timestamp) return st.timestamp();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + 1000000000000000ull;
}

/* ---- the CUPTI entry points infprof uses -------------------------------------------------- */

EXPORT CUptiResult cuptiGetVersion(uint32_t *version)
{
    *version = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
    static char text[64];
    snprintf(text, sizeof text, "stub CUPTI error %d", (int)result);
    *str = text;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber,
                                     CUpti_CallbackFunc callback, void *userdata,
                                     CUpti_SubscriberParams *params)
{
    configure();
    note("subscribe %s", params && params->subscriberName ? params->subscriberName : "-");
    if (st.multi) {
        if (params && params->oldSubscriberName && params->oldSubscriberSize)
            snprintf(params->oldSubscriberName, params->oldSubscriberSize, "%s",
                     st.anonymous ? "<not provided>" : "CUPTI for Nsight Systems (stub)");
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    if (st.subscribe_fail) return CUPTI_ERROR_NOT_INITIALIZED;
    st.callback = callback;
    st.userdata = userdata;
    st.subscribed = 1;
    *subscriber = (CUpti_SubscriberHandle)&st;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                  void *userdata)
{
    return cuptiSubscribe_v2(subscriber, callback, userdata, NULL);
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    (void)subscriber;
    note("unsubscribe");
    st.subscribed = 0;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                       CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    (void)subscriber;
    if ((domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) ||
        cbid >= 1024)
        return CUPTI_ERROR_INVALID_PARAMETER;
    st.cb_on[domain == CUPTI_CB_DOMAIN_DRIVER_API][cbid] = enable != 0;
    note("callback %d %u %u", domain == CUPTI_CB_DOMAIN_DRIVER_API, cbid, enable);
    return CUPTI_SUCCESS;
}

static CUptiResult enable_api(int driver, CUpti_CallbackId cbid, uint8_t enable)
{
    if (cbid >= 1024) return CUPTI_ERROR_INVALID_PARAMETER;
    st.api_on[driver][cbid] = enable != 0;
    note("enable_api %d %u %u", driver, cbid, enable);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
    return enable_api(0, cbid, enable);
}

EXPORT CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
    return enable_api(1, cbid, enable);
}

EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
    (void)type;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    configure();
    note("enable %d", (int)kind);
    if ((st.enable_fail && kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ||
        (st.memory2_fail && kind == CUPTI_ACTIVITY_KIND_MEMORY2))
        return CUPTI_ERROR_NOT_COMPATIBLE;
    if ((int)kind <= 0 || kind >= CUPTI_ACTIVITY_KIND_COUNT) return CUPTI_ERROR_INVALID_KIND;
    st.kind_on[kind] = 1;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    note("disable %d", (int)kind);
    if ((int)kind > 0 && kind < CUPTI_ACTIVITY_KIND_COUNT) st.kind_on[kind] = 0;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                  CUpti_BuffersCallbackCompleteFunc complete)
{
    configure();
    note("register_callbacks");
    if (st.register_fail) return CUPTI_ERROR_INVALID_PARAMETER;
    st.request = request;
    st.complete = complete;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
    configure();
    note("timestamp_callback %s", st.no_timestamp ? "refused" : "accepted");
    if (st.no_timestamp) return CUPTI_ERROR_NOT_SUPPORTED;
    st.timestamp = fn;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
    *timestamp = now();
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityFlushPeriod(uint32_t ms)
{
    note("flush_period %u", ms);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid,
                                              CUpti_Activity **record)
{
    return ip_cupti_layout_next(buffer, valid, record);
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream,
                                                     size_t *dropped)
{
    (void)ctx, (void)stream;
    if (!dropped) return CUPTI_ERROR_INVALID_PARAMETER;
    /* No lock: clients call this from their completion callback, which runs under ours. */
    *dropped = atomic_exchange(&st.dropped, 0) + atomic_exchange(&st.dropped_once, 0);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                          uint64_t id)
{
    (void)kind, (void)id;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                         uint64_t *id)
{
    (void)kind;
    if (id) *id = 0;
    return CUPTI_SUCCESS;
}

/* ---- buffers ------------------------------------------------------------------------------ */

static void deliver(uint8_t *b, size_t size, size_t used)
{
    if (b == st.bad_buffer) {
        note("lost_after_bad_record %zu", st.after_bad);
        st.bad_buffer = NULL;
    }
    st.complete(NULL, 0, b, size, used);
}

/* Hand the current buffer back (or keep it, in hold mode). Under st.lock. */
static void retire_current(void)
{
    if (!st.cur) return;
    if (st.hold && st.nheld < HELD_MAX) {
        st.held[st.nheld].b = st.cur;
        st.held[st.nheld].size = st.cur_size;
        st.held[st.nheld].used = st.cur_used;
        st.nheld++;
    } else {
        deliver(st.cur, st.cur_size, st.cur_used);
    }
    st.cur = NULL;
}

/* Room for a record of `kind`, or NULL (counted as dropped). Under st.lock. */
static void *room(CUpti_ActivityKind kind)
{
    size_t n = ip_cupti_record_size(kind);
    if (st.cur && st.cur_used + n > st.cur_size) retire_current();
    if (!st.cur && st.request) {
        size_t max_records = 0;
        st.request(&st.cur, &st.cur_size, &max_records);
        st.cur_used = 0;
        if (st.cur && st.cur_size < n) st.cur = NULL;
    }
    if (!st.cur) {
        atomic_fetch_add(&st.dropped, 1);
        return NULL;
    }
    if (st.bad_record && !st.bad_written && st.records == 100 &&
        st.cur_used + ip_cupti_record_size(CUPTI_ACTIVITY_KIND_INVALID) + n <= st.cur_size) {
        CUpti_Activity *bad = (CUpti_Activity *)(st.cur + st.cur_used);
        memset(bad, 0, sizeof *bad); /* kind INVALID: what CUPTI says of an incomplete record */
        st.cur_used += ip_cupti_record_size(CUPTI_ACTIVITY_KIND_INVALID);
        st.bad_written = 1;
        st.bad_buffer = st.cur;
    }
    if (st.bad_buffer && st.bad_buffer == st.cur) st.after_bad++;
    void *r = st.cur + st.cur_used;
    memset(r, 0, n);
    ((CUpti_Activity *)r)->kind = kind;
    st.cur_used += n;
    st.records++;
    return r;
}

static void *flush_worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&st.lock);
    for (int i = 0; i < st.nheld; i++) deliver(st.held[i].b, st.held[i].size, st.held[i].used);
    st.nheld = 0;
    if (st.cur) deliver(st.cur, st.cur_size, st.cur_used);
    st.cur = NULL;
    if (st.acur) deliver(st.acur, st.acur_size, st.acur_used);
    st.acur = NULL;
    pthread_mutex_unlock(&st.lock);
    return NULL;
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    note("flush_all %u", flag);
    if (!st.complete) return CUPTI_ERROR_INVALID_OPERATION;
    /* Delivered from another thread while the caller waits: a client holding a lock of its own
     * across this call that its completion callback needs would deadlock here. */
    pthread_t t;
    if (pthread_create(&t, NULL, flush_worker, NULL) != 0) return CUPTI_ERROR_UNKNOWN;
    pthread_join(t, NULL);
    return CUPTI_SUCCESS;
}

/* ---- what a CUDA program makes CUPTI do --------------------------------------------------- */

static void run_callback(int driver, uint32_t cbid, uint32_t corr, CUpti_ApiCallbackSite site,
                         const char *name)
{
    if (!st.subscribed || !st.callback || !st.cb_on[driver][cbid]) return;
    CUpti_CallbackData data;
    memset(&data, 0, sizeof data);
    data.callbackSite = site;
    data.functionName = name;
    data.correlationId = corr;
    st.callback(st.userdata, driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
                cbid, &data);
}

/* api_late: room for an API record in a buffer of its own; a full one is kept for the flush. */
static void *room_api(void)
{
    size_t n = ip_cupti_record_size(CUPTI_ACTIVITY_KIND_RUNTIME);
    if (st.acur && st.acur_used + n > st.acur_size && st.nheld < HELD_MAX) {
        st.held[st.nheld].b = st.acur;
        st.held[st.nheld].size = st.acur_size;
        st.held[st.nheld].used = st.acur_used;
        st.nheld++;
        st.acur = NULL;
    }
    if (!st.acur && st.request) {
        size_t max_records = 0;
        st.request(&st.acur, &st.acur_size, &max_records);
        st.acur_used = 0;
        if (st.acur && st.acur_size < n) st.acur = NULL;
    }
    if (!st.acur || st.acur_used + n > st.acur_size) {
        atomic_fetch_add(&st.dropped, 1);
        return NULL;
    }
    void *r = st.acur + st.acur_used;
    memset(r, 0, n);
    ((CUpti_Activity *)r)->kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    st.acur_used += n;
    st.records++;
    return r;
}

static void api_record(uint32_t cbid, uint32_t corr, uint64_t start, uint64_t end)
{
    if (!st.kind_on[CUPTI_ACTIVITY_KIND_RUNTIME] && !st.api_on[0][cbid]) return;
    CUpti_ActivityAPI *a = st.api_late ? room_api() : room(CUPTI_ACTIVITY_KIND_RUNTIME);
    if (!a) return;
    a->cbid = cbid;
    a->start = start;
    a->end = end;
    a->processId = (uint32_t)getpid();
    a->threadId = (uint32_t)gettid();
    a->correlationId = corr;
}

/* n launches of kernel `name` (a string that outlives the run, as CUPTI's names do), each
 * taking dur_ns on the GPU. Returns the number issued. */
EXPORT int stubcupti_launch(const char *name, int n, uint64_t dur_ns)
{
    const uint32_t cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    for (int i = 0; i < n; i++) {
        uint32_t corr = atomic_fetch_add(&st.corr, 1) + 1;
        uint64_t t0 = now();
        run_callback(0, cbid, corr, CUPTI_API_ENTER, "cudaLaunchKernel");
        uint64_t t1 = now();
        pthread_mutex_lock(&st.lock);
        api_record(cbid, corr, t0, t1);
        if (st.kind_on[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]) {
            CUpti_ActivityKernel10 *k = room(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
            if (k) {
                k->name = name;
                k->start = t1 + 2000;
                k->end = t1 + 2000 + dur_ns;
                k->correlationId = corr;
                k->streamId = 7;
                k->gridX = k->gridY = k->gridZ = 1;
                k->blockX = 64, k->blockY = k->blockZ = 1;
            }
        }
        pthread_mutex_unlock(&st.lock);
        run_callback(0, cbid, corr, CUPTI_API_EXIT, "cudaLaunchKernel");
    }
    return n;
}

/* n pinned host-to-device copies of `bytes` each. */
EXPORT int stubcupti_memcpy(uint64_t bytes, int n)
{
    const uint32_t cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;
    for (int i = 0; i < n; i++) {
        uint32_t corr = atomic_fetch_add(&st.corr, 1) + 1;
        uint64_t t0 = now();
        run_callback(0, cbid, corr, CUPTI_API_ENTER, "cudaMemcpyAsync");
        uint64_t t1 = now();
        pthread_mutex_lock(&st.lock);
        api_record(cbid, corr, t0, t1);
        if (st.kind_on[CUPTI_ACTIVITY_KIND_MEMCPY]) {
            CUpti_ActivityMemcpy6 *m = room(CUPTI_ACTIVITY_KIND_MEMCPY);
            if (m) {
                m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
                m->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
                m->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
                m->flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
                m->bytes = bytes;
                m->start = t1 + 1000;
                m->end = t1 + 1000 + bytes / 16;
                m->streamId = 7;
                m->correlationId = corr;
                m->copyCount = 1;
            }
        }
        pthread_mutex_unlock(&st.lock);
        run_callback(0, cbid, corr, CUPTI_API_EXIT, "cudaMemcpyAsync");
    }
    return n;
}
