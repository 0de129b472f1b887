/*
 * window.c: the recording windows' controls and table (docs/windows.md; the gate itself is the
 * core's, profiler/window.c). On the writer thread, at every wake and at least every 100 ms: the
 * delay and duration (INFPROF_WINDOW_DELAY_MS, _DURATION_MS), a request from `infprof window PID
 * start|stop` (a file INFPROF_WINDOW_DIR/infprof-window-PID, answered in ...-PID.ack), and the
 * signal a person chose (INFPROF_WINDOW_SIGNAL: the handler only asks). In the program's own
 * threads: cudaProfilerStart/Stop and cuProfilerStart/Stop, interposed, open and close windows
 * when INFPROF_CAPTURE_RANGE=cudaProfilerApi (and always pass on to the real ones); the NVTX
 * capture range is the NVTX collector's (nvtx.c). The windows go to table windows.
 *
 * A file, not a signal, carries `infprof window`: it reaches only a process of ours that asked
 * for it, never a program that handles the signal for something else, and it is answered.
 */
#include "window_config.h"
#include "registry.h"
#include "../profiler/clock.h"
#include "../profiler/lifecycle.h"
#include "../profiler/process.h"
#include "../profiler/store.h"
#include "../profiler/window.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define IP_EXPORT    __attribute__((visibility("default")))
#define POLL_NS      100000000ull /* the request file, looked for */
#define WINDOW_BATCH 64

static struct {
    int capture_profiler; /* INFPROF_CAPTURE_RANGE=cudaProfilerApi */
    uint64_t delay_at, duration;
    int delayed;
    uint64_t close_at; /* the duration's end of the open window, 0 none */
    char req[256], ack[256];
    int written; /* windows written complete */
    int sig;     /* the signal ours, 0 none */
    struct sqlite3_stmt *row;
    char status[200];
} ws;

static _Atomic int sig_asked;

extern const char ip_schema_window[]; /* collectors/window.sql, embedded at build time */

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&sig_asked, 1);
}

static void window_start(void)
{
    const char *cap = ip_cfg_group_str(&ip_window_cfg, IP_WINDOW_CFG_CAPTURE);
    int64_t delay = ip_cfg_group_int(&ip_window_cfg, IP_WINDOW_CFG_DELAY_MS);
    ws.duration = (uint64_t)ip_cfg_group_int(&ip_window_cfg, IP_WINDOW_CFG_DURATION_MS) * 1000000;
    ws.capture_profiler = !strcmp(cap, "cudaProfilerApi");
    int closed = ip_cfg_group_int(&ip_window_cfg, IP_WINDOW_CFG_START) == 1 || delay > 0 || cap[0];
    ws.delay_at = delay > 0 ? ip_t0() + (uint64_t)delay * 1000000 : 0;
    int pid = (int)getpid();
    const char *dir = ip_cfg_group_str(&ip_window_cfg, IP_WINDOW_CFG_DIR);
    if (ip_cfg_group_int(&ip_window_cfg, IP_WINDOW_CFG_CONTROL)) {
        snprintf(ws.req, sizeof ws.req, "%s/infprof-window-%d", dir, pid);
        snprintf(ws.ack, sizeof ws.ack, "%s/infprof-window-%d.ack", dir, pid);
    }
    int sig = (int)ip_cfg_group_int(&ip_window_cfg, IP_WINDOW_CFG_SIGNAL);
    char sigmsg[120] = "";
    if (sig > 0 && sig < NSIG && sig != SIGKILL && sig != SIGSTOP) {
        /* The real sigaction (ours, preload.c's, keeps the program's view); a handler of the
         * lifecycle's own (a flush at a fatal signal) is no program's: it is handed over. */
        int (*real)(int, const struct sigaction *, struct sigaction *) =
            (int (*)(int, const struct sigaction *, struct sigaction *))dlsym(RTLD_NEXT,
                                                                              "sigaction");
        struct sigaction old, sa;
        if (real && real(sig, NULL, &old) == 0 &&
            (ip_lifecycle_signal_is_ours(sig) ||
             (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL))) {
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_signal;
            sa.sa_flags = SA_RESTART;
            sigemptyset(&sa.sa_mask);
            if (real(sig, &sa, NULL) == 0) {
                ws.sig = sig;
                ip_lifecycle_signal_released(sig);
            }
        }
        snprintf(sigmsg, sizeof sigmsg,
                 ws.sig ? "; signal %d opens and closes"
                        : "; signal %d refused: the program already handles it",
                 sig);
    }
    ip_window_use(closed);
    snprintf(ws.status, sizeof ws.status, "%s%s%s%s%s", closed ? "closed at start" : "open",
             delay > 0 ? ", opens after the delay" : "", cap[0] ? ", capture range " : "", cap,
             sigmsg);
    ip_collector_status(IP_COLLECTOR_WINDOW, "on", "%s%s", ws.status,
                        ws.req[0] ? "; infprof window PID start|stop" : "");
}

static void opened(uint32_t n)
{
    if (n && ws.duration) ws.close_at = ip_clock_now() + ws.duration;
}

/* A request from `infprof window`: a small regular file of ours, read, answered, removed. */
static void request(void)
{
    struct stat st;
    if (!ws.req[0] || lstat(ws.req, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) return;
    char buf[16] = "";
    /* Through stdio: its fclose is libc's own, not our close interposer (preload.c). */
    int fd = open(ws.req, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0) syscall(SYS_close, fd); /* (fdopen out of memory) */
        return;
    }
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    unlink(ws.req);
    buf[n] = 0;
    char answer[96];
    uint32_t w = 0;
    if (!strncmp(buf, "start", 5)) {
        w = ip_window_open(IP_WIN_REQUEST);
        opened(w);
        snprintf(answer, sizeof answer, w ? "opened window %u\n" : "already open\n", w);
    } else if (!strncmp(buf, "stop", 4)) {
        w = ip_window_close(IP_WIN_REQUEST);
        if (w) ws.close_at = 0;
        snprintf(answer, sizeof answer, w ? "closed window %u\n" : "already closed\n", w);
    } else {
        snprintf(answer, sizeof answer, "unknown request\n");
    }
    /* Written whole under another name, then renamed: `infprof window` polls for the answer and
     * once read it empty between our create and our write ("process N: answered", no "closed
     * window 1", under ctest -j2). */
    char tmp[sizeof ws.ack + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", ws.ack);
    unlink(ws.ack); /* a stale answer nobody read */
    unlink(tmp);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return;
    if (!(f = fdopen(fd, "w"))) {
        syscall(SYS_close, fd);
        unlink(tmp);
        return;
    }
    int ok = fputs(answer, f) >= 0;
    if (fclose(f) != 0 || !ok || rename(tmp, ws.ack) != 0) unlink(tmp);
}

static uint64_t window_tick(uint64_t now, int final)
{
    if (final || !ip_window_used()) return 0;
    if (ws.delay_at && !ws.delayed && now >= ws.delay_at)
        ws.delayed = 1, opened(ip_window_open(IP_WIN_DELAY));
    if (ws.close_at && now >= ws.close_at) ws.close_at = 0, ip_window_close(IP_WIN_DURATION);
    if (atomic_exchange(&sig_asked, 0)) {
        if (atomic_load(&ip_window_closed))
            opened(ip_window_open(IP_WIN_SIGNAL));
        else if (ip_window_close(IP_WIN_SIGNAL))
            ws.close_at = 0;
    }
    request();
    uint64_t next = now + POLL_NS;
    if (ws.delay_at && !ws.delayed && ws.delay_at < next) next = ws.delay_at;
    if (ws.close_at && ws.close_at < next) next = ws.close_at;
    return next;
}

/* ---- writer side: table windows ----------------------------------------------------------- */

static struct ip_window list[IP_WINDOW_MAX];

static void write_rows(struct ip_store *s, int final)
{
    if (!ip_window_used()) return;
    int n = ip_window_list(list, IP_WINDOW_MAX);
    if (n <= ws.written && !final) return;
    sqlite3_stmt *st = ws.row; /* the store's (ip_store_prepare): it finalizes it */
    if (!st) return;
    uint64_t now = ip_clock_now();
    for (int i = ws.written; i < n; i++) {
        const struct ip_window *w = &list[i];
        int open = !w->end;
        sqlite3_reset(st);
        sqlite3_bind_int(st, 1, i + 1);
        sqlite3_bind_int64(st, 2, ip_store_rel(s, w->start));
        if (open && !final)
            sqlite3_bind_null(st, 3);
        else
            sqlite3_bind_int64(st, 3, ip_store_rel(s, open ? now : w->end));
        sqlite3_bind_int(st, 4, w->opened_by);
        if (open && !final)
            sqlite3_bind_null(st, 5);
        else
            sqlite3_bind_int(st, 5, open ? IP_WIN_END : w->closed_by);
        sqlite3_bind_int64(st, 6, open ? 0 : w->open_at_close);
        ip_store_step(s, st);
        if (!open) ws.written = i + 1;
    }
}

static void window_prepare(struct ip_store *s)
{
    ws.row = ip_store_prepare(s, "INSERT OR REPLACE INTO windows VALUES (?,?,?,?,?,?)");
}

static void window_flush(struct ip_store *s, int final)
{
    write_rows(s, final);
}

static void window_finish(struct ip_store *s)
{
    write_rows(s, 1);
    if (ip_window_used()) {
        ip_store_meta_int(s, "windows_overflow", (int64_t)ip_window_overflow());
        ip_store_meta_text(s, "window.state", atomic_load(&ip_window_closed) ? "closed" : "open");
    }
    if (ws.req[0]) unlink(ws.ack); /* an answer nobody read: ours */
}

static void window_atfork_child(void)
{
    ws.req[0] = ws.ack[0] = 0; /* the requests name the parent */
    ws.written = 0;
}

const struct ip_collector ip_collector_window = {
    .name = "window",
    .title = "Windows",
    .settings = &ip_window_cfg,
    .schema = ip_schema_window,
    .start = window_start,
    .tick = window_tick,
    .prepare = window_prepare,
    .flush = window_flush,
    .finish = window_finish,
    .atfork_child = window_atfork_child,
};

/* ---- cudaProfilerStart/Stop: the program's own windows ------------------------------------ */

typedef int (*profiler_fn)(void);

static int profiler_call(const char *name, int start)
{
    profiler_fn next = (profiler_fn)dlsym(RTLD_NEXT, name);
    int rc = next ? next() : 0;
    if (ws.capture_profiler) {
        if (start)
            ip_window_open(IP_WIN_PROFILER);
        else
            ip_window_close(IP_WIN_PROFILER);
    }
    return rc;
}

IP_EXPORT int cudaProfilerStart(void);
int cudaProfilerStart(void)
{
    return profiler_call("cudaProfilerStart", 1);
}

IP_EXPORT int cudaProfilerStop(void);
int cudaProfilerStop(void)
{
    return profiler_call("cudaProfilerStop", 0);
}

IP_EXPORT int cuProfilerStart(void);
int cuProfilerStart(void)
{
    return profiler_call("cuProfilerStart", 1);
}

IP_EXPORT int cuProfilerStop(void);
int cuProfilerStop(void)
{
    return profiler_call("cuProfilerStop", 0);
}
