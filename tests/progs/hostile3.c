/*
 * hostile3.c: programs that met a resource limit, started with descriptors closed, ended their
 * main thread early, died fast or forked while busy, and harmed or lost data under the library
 * (tests/core/test_hostile3.py). Usage: hostile3 MODE [ARGS]; each mode prints what the program
 * itself would see, so that a run with the library can be compared with one without.
 *   write FILE KIB        write KIB KiB to FILE in 1 KiB writes; print how many were written
 *   fill FILE KIB N       the same, then N NVTX ranges, then the same again to FILE.2
 *   hello                 print "hello" (a program that needs nothing: for stack and fd limits)
 *   alloc                 malloc 1 MiB blocks (touched) until one fails; print how many
 *   files                 open /dev/null until it fails; print how many
 *   thread                start one thread and join it; print "thread ok" or the error
 *   stdin                 print the first descriptor open() gives; exit 1 if fd 0 is not
 *                         readable (as `cat <&-` does)
 *   redirect US           for US microseconds: close(0), open /dev/null, check it became fd 0;
 *                         print how many times it did not
 *   pexit                 main calls pthread_exit while a thread runs for 100 ms and prints
 *   busyexit MS           4 threads push and pop NVTX ranges flat out; main exits after MS ms
 *   quickexit N           N NVTX ranges, then quick_exit(3) (at_quick_exit prints "bye")
 *   forkbusy N            a thread records NVTX flat out; main forks N children that _exit at
 *                         once; print whether the slowest fork() took under 250 ms
 *   sigset                handler set by sigset(), saved and restored with sigaction, then
 *                         SIGTERM raised: prints "handled" and exits 0 if the handler ran
 *   bsd                   the same with bsd_signal() and sysv_signal()
 *   mallocloop            threads malloc and free flat out until killed
 *   twoexit N             1,000 NVTX ranges, then N threads call exit(6) at the same moment
 *                         (workers that fail together)
 *   termcount HOW         a SIGTERM handler set by HOW (sigaction, siginfo: with SA_SIGINFO,
 *                         signal, reset: one that sets the default again, nest: one that
 *                         raises it again the first time) counts its calls;
 *                         "ready", then after the first call 300 ms more (a server draining),
 *                         then "handled N" and exit 0
 *   forkwrap N            a thread sets SIGTERM's handler over and over while main forks N
 *                         children that each set SIGINT's and exit; "hung H" counts the children
 *                         not gone within 2 s (each then killed)
 *   readback              SIGTERM's handler set with sigaction (flags, a mask), read back, then
 *                         replaced by signal() and by SA_SIGINFO: each read back as set; then
 *                         raised: "readback ok" where the last handler ran once, else the first
 *                         difference
 */
#include <errno.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int write_file(const char *path, int kib)
{
    signal(SIGXFSZ, SIG_DFL);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return perror("open"), 1;
    char block[1024];
    memset(block, 'x', sizeof block);
    int n = 0;
    while (n < kib && write(fd, block, sizeof block) == (ssize_t)sizeof block) n++;
    close(fd);
    printf("wrote %d KiB\n", n);
    return n == kib ? 0 : 1;
}

static void ranges(const char *name, int n)
{
    for (int i = 0; i < n; i++) {
        nvtxRangePushA(name);
        nvtxRangePop();
    }
}

/* Two range names of 1500 bytes, two-byte characters, that differ only in their last one. */
static int long_names(void)
{
    char name[1504];
    for (char end = 'A'; end <= 'B'; end++) {
        for (int i = 0; i < 749; i++) memcpy(name + 2 * i, "\xc3\xa9", 2); /* U+00E9 */
        name[1498] = end;
        name[1499] = 0;
        ranges(name, 3);
    }
    return 0;
}

static int fill(const char *path, int kib, int n)
{
    int rc = write_file(path, kib);
    ranges("after fill", n);
    char second[4096];
    snprintf(second, sizeof second, "%s.2", path);
    return rc | write_file(second, kib);
}

static int alloc(void)
{
    int n = 0;
    for (;;) {
        char *p = malloc(1 << 20);
        if (!p) break;
        memset(p, 1, 1 << 20);
        n++;
    }
    printf("allocated %d MiB\n", n / 8 * 8); /* to 8 MiB: the loader's own use varies */
    return 0;
}

static int files(void)
{
    int n = 0;
    while (open("/dev/null", O_RDONLY) >= 0) n++;
    printf("opened %d\n", n);
    return 0;
}

static void *noop(void *arg)
{
    return arg;
}

static int thread(void)
{
    pthread_t t;
    int rc = pthread_create(&t, NULL, noop, NULL);
    if (rc) return printf("thread failed: %s\n", strerror(rc)), 1;
    pthread_join(t, NULL);
    printf("thread ok\n");
    return 0;
}

static int stdin_closed(void)
{
    char c;
    int bad = read(0, &c, 1) < 0;
    int fd = open("/dev/null", O_RDONLY);
    printf("first open: %d\n", fd);
    return bad;
}

static int redirect(long us)
{
    double end = now_ms() + us / 1000.0;
    long misses = 0, tries = 0;
    while (now_ms() < end) {
        close(0);
        int fd = open("/dev/null", O_RDONLY);
        if (fd != 0) misses++;
        if (fd > 0) close(fd);
        tries++;
    }
    printf("redirect misses: %ld\n", misses);
    return tries ? 0 : 1;
}

static void *late_printer(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 100000000};
    nanosleep(&ts, NULL);
    printf("thread done\n");
    fflush(stdout);
    return NULL;
}

static int pexit(void)
{
    pthread_t t;
    pthread_create(&t, NULL, late_printer, NULL);
    pthread_exit(NULL);
}

static _Atomic int spin_stop;

static void *nvtx_spin(void *arg)
{
    (void)arg;
    while (!spin_stop) {
        nvtxRangePushA("spin");
        nvtxRangePop();
    }
    return NULL;
}

static int busyexit(long ms)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, nvtx_spin, NULL);
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
    exit(0);
}

static void bye(void)
{
    printf("bye\n");
    fflush(stdout);
}

static int quickexit(int n)
{
    at_quick_exit(bye);
    for (int i = 0; i < n; i++) {
        nvtxRangePushA("quick");
        nvtxRangePop();
    }
    quick_exit(3);
}

static int forkbusy(int n)
{
    pthread_t t;
    pthread_create(&t, NULL, nvtx_spin, NULL);
    struct timespec ts = {0, 50000000};
    nanosleep(&ts, NULL);
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double t0 = now_ms();
        pid_t pid = fork();
        if (pid == 0) _exit(0);
        double dt = now_ms() - t0;
        if (dt > worst) worst = dt;
        waitpid(pid, NULL, 0);
    }
    spin_stop = 1;
    pthread_join(t, NULL);
    printf("slowest fork: %s\n", worst < 250 ? "under 250 ms" : "250 ms or more");
    fprintf(stderr, "slowest fork %.2f ms\n", worst);
    return 0;
}

static volatile sig_atomic_t handled;
static void on_term(int sig)
{
    (void)sig;
    handled = 1;
}

/* The program's handler, saved and put back with sigaction as libraries do around a section. */
static int save_restore_raise(void)
{
    struct sigaction mine, saved;
    memset(&mine, 0, sizeof mine);
    mine.sa_handler = SIG_IGN;
    sigaction(SIGTERM, &mine, &saved);
    sigaction(SIGTERM, &saved, NULL);
    raise(SIGTERM);
    printf(handled ? "handled\n" : "not handled\n");
    return handled ? 0 : 1;
}

static int sigset_mode(void)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    sigset(SIGTERM, on_term); /* old, and still in programs */
#pragma GCC diagnostic pop
    return save_restore_raise();
}

extern __sighandler_t bsd_signal(int, __sighandler_t);
static int bsd_mode(void)
{
    bsd_signal(SIGTERM, on_term);
    if (save_restore_raise()) return 1;
    handled = 0;
    sysv_signal(SIGTERM, on_term); /* one-shot: reset to the default when it runs */
    return save_restore_raise();
}

static void *churn(void *arg)
{
    (void)arg;
    for (;;) {
        void *p[64];
        for (int i = 0; i < 64; i++) p[i] = malloc(16 + i * 24);
        for (int i = 0; i < 64; i++) free(p[i]);
    }
    return NULL;
}

static int mallocloop(void)
{
    pthread_t t[3];
    for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, churn, NULL);
    printf("ready\n");
    fflush(stdout);
    churn(NULL);
    return 0;
}

static volatile sig_atomic_t term_calls;

static void term_count(int sig)
{
    (void)sig;
    term_calls++;
}

static void term_count_info(int sig, siginfo_t *si, void *uc)
{
    (void)si, (void)uc;
    term_count(sig);
}

/* Counts, and the first time raises the signal again (delivered once it returns). */
static void term_count_nest(int sig)
{
    term_count(sig);
    if (term_calls == 1) raise(sig);
}

/* Counts, then sets the default again: "clean up, and die of the next one". */
static void term_count_reset(int sig)
{
    term_count(sig);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL);
}

static int termcount(const char *how)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    if (!strcmp(how, "signal")) {
        if (signal(SIGTERM, term_count) == SIG_ERR) return 2;
    } else {
        if (!strcmp(how, "siginfo")) {
            sa.sa_sigaction = term_count_info;
            sa.sa_flags = SA_SIGINFO;
        } else if (!strcmp(how, "reset")) {
            sa.sa_handler = term_count_reset;
        } else if (!strcmp(how, "nest")) {
            sa.sa_handler = term_count_nest;
        } else {
            sa.sa_handler = term_count;
        }
        if (sigaction(SIGTERM, &sa, NULL) != 0) return 2;
    }
    printf("ready\n");
    fflush(stdout);
    while (!term_calls) pause();
    struct timespec left = {0, 300000000};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
    printf("handled %d\n", (int)term_calls);
    return 0;
}

static void term_other(int sig)
{
    (void)sig;
}

/* What each read gave, in full (flags, SA_RESTORER too, and the mask's first word): the same
 * with the library and without. */
static char readback_seen[512];

static void readback_note(const struct sigaction *a)
{
    unsigned long w = 0;
    for (int s = 1; s < 64 && s <= (int)(8 * sizeof w); s++)
        if (sigismember(&a->sa_mask, s) == 1) w |= 1ul << (s - 1);
    size_t n = strlen(readback_seen);
    snprintf(readback_seen + n, sizeof readback_seen - n, " %x/%lx", (unsigned)a->sa_flags, w);
}

/* The handler as the program set it, read back: what differs, or NULL. */
static const char *same_act(void (*h)(int), void (*info)(int, siginfo_t *, void *), int flags,
                            int usr1)
{
    struct sigaction now;
    if (sigaction(SIGTERM, NULL, &now) != 0) return "sigaction failed";
    readback_note(&now);
    if (info ? now.sa_sigaction != info : now.sa_handler != h) return "another handler";
    int mask = SA_SIGINFO | SA_RESTART | SA_NODEFER | SA_RESETHAND | SA_ONSTACK;
    if ((now.sa_flags & mask) != flags) return "other flags";
    if (sigismember(&now.sa_mask, SIGUSR1) != usr1) return "another mask";
    return NULL;
}

static int readback(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR1);
    sa.sa_handler = term_other;
    sa.sa_flags = SA_RESTART;
    const char *bad = NULL;
    if (sigaction(SIGTERM, &sa, &old) != 0 || old.sa_handler != SIG_DFL) bad = "first old";
    if (!bad) bad = same_act(term_other, NULL, SA_RESTART, 1);
    if (!bad && signal(SIGTERM, term_count) != term_other) bad = "signal()'s old";
    if (!bad) bad = same_act(term_count, NULL, SA_RESTART, 0);
    sa.sa_sigaction = term_count_info;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (!bad && (sigaction(SIGTERM, &sa, &old) != 0 || old.sa_handler != term_count))
        bad = "second old";
    if (!bad) bad = same_act(NULL, term_count_info, SA_SIGINFO, 0);
    if (!bad) raise(SIGTERM);
    if (!bad && term_calls != 1) bad = "the handler did not run once";
    /* A full mask, then SA_RESETHAND: read back as set, and after it fired as the default. */
    sigfillset(&sa.sa_mask);
    sa.sa_handler = term_count;
    sa.sa_flags = SA_RESETHAND;
    if (!bad && sigaction(SIGTERM, &sa, NULL) != 0) bad = "resethand";
    if (!bad) bad = same_act(term_count, NULL, SA_RESETHAND, 1);
    if (!bad) raise(SIGTERM);
    if (!bad) bad = same_act(SIG_DFL, NULL, SA_RESETHAND, 1);
    if (!bad && term_calls != 2) bad = "the one-shot handler did not run";
    printf("readback %s%s\n", bad ? bad : "ok", readback_seen);
    return bad != NULL;
}

static atomic_int forkwrap_stop;

static void *forkwrap_setter(void *arg)
{
    (void)arg;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = term_count;
    sigemptyset(&sa.sa_mask);
    while (!atomic_load(&forkwrap_stop)) sigaction(SIGTERM, &sa, NULL);
    return NULL;
}

static int forkwrap(int n)
{
    pthread_t t;
    pthread_create(&t, NULL, forkwrap_setter, NULL);
    int hung = 0;
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = term_count;
            sigaction(SIGINT, &sa, NULL);
            _exit(0);
        }
        if (pid < 0) break;
        struct timespec t0, now, ms = {0, 1000000};
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int st;
        while (waitpid(pid, &st, WNOHANG) == 0) {
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (now.tv_sec - t0.tv_sec >= 2) { /* its lock never freed: it spins */
                hung++;
                kill(pid, SIGKILL);
                waitpid(pid, &st, 0);
                break;
            }
            nanosleep(&ms, NULL);
        }
    }
    atomic_store(&forkwrap_stop, 1);
    pthread_join(t, NULL);
    printf("hung %d\n", hung);
    return 0;
}

static atomic_int exit_go;

static void *exit_now(void *arg)
{
    (void)arg;
    while (!atomic_load(&exit_go)) {
    }
    exit(6);
}

static int twoexit(int n)
{
    for (int i = 0; i < 1000; i++) {
        nvtxRangePushA("iteration");
        nvtxRangePop();
    }
    pthread_t t[16];
    n = n < 1 ? 1 : n > 16 ? 16 : n;
    for (int i = 0; i < n; i++) pthread_create(&t[i], NULL, exit_now, NULL);
    atomic_store(&exit_go, 1);
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    return 0;
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "";
    const char *a = argc > 2 ? argv[2] : "0";
    if (!strcmp(m, "write") && argc > 3) return write_file(argv[2], atoi(argv[3]));
    if (!strcmp(m, "fill") && argc > 4) return fill(argv[2], atoi(argv[3]), atoi(argv[4]));
    if (!strcmp(m, "hello")) return printf("hello\n") < 0;
    if (!strcmp(m, "alloc")) return alloc();
    if (!strcmp(m, "files")) return files();
    if (!strcmp(m, "thread")) return thread();
    if (!strcmp(m, "stdin")) return stdin_closed();
    if (!strcmp(m, "redirect")) return redirect(atol(a));
    if (!strcmp(m, "pexit")) return pexit();
    if (!strcmp(m, "busyexit")) return busyexit(atol(a));
    if (!strcmp(m, "quickexit")) return quickexit(atoi(a));
    if (!strcmp(m, "forkbusy")) return forkbusy(atoi(a));
    if (!strcmp(m, "sigset")) return sigset_mode();
    if (!strcmp(m, "bsd")) return bsd_mode();
    if (!strcmp(m, "mallocloop")) return mallocloop();
    if (!strcmp(m, "twoexit")) return twoexit(atoi(a));
    if (!strcmp(m, "termcount") && argc > 2) return termcount(a);
    if (!strcmp(m, "readback")) return readback();
    if (!strcmp(m, "forkwrap") && argc > 2) return forkwrap(atoi(a));
    if (!strcmp(m, "longnames")) return long_names();
    fprintf(stderr, "hostile3: unknown mode %s\n", m);
    return 2;
}
