/*
 * hostile2.c: programs that behave as real ones do and that once harmed by the library
 * (tests/core/test_hostile2.py). Usage: hostile2 MODE [ARGS]
 *   earlyclose US FILE [loop|range|from]
 *                        wait US microseconds from start, close fds 3..1023 (one by one,
 *                        close_range or closefrom), then open FILE and write 500 lines to it;
 *                        exit 1 if any write failed
 *   nvtxdeep N           push N nested NVTX ranges and pop them, then a balanced recursion N deep
 *   pipeclose FD         dup2 a pipe's write end onto FD, fork a reader, write, close FD (and the
 *                        original end); the reader must see end-of-file (exit 1 if it did not)
 *   forkclose OUT        fork a child that closes fds 3..1023 and writes the targets of the
 *                        descriptors it still has (from /proc/self/fd) to OUT, one per line
 *   fdcount              open /dev/null until the descriptor limit says no; print how many
 *   reraise N            N NVTX ranges, then SIGTERM to itself with a handler that cleans up,
 *                        resets SIGTERM to SIG_DFL and raises it again
 *   sighandler-nvtx N    NVTX ranges in a loop while a timer's signal handler pushes and pops
 *                        one, until N handlers ran; prints how many ran
 */
#include <dirent.h>
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The library's database exists and has its first pages (run without it: nothing to wait for). */
static int wait_for_database(void)
{
    const char *db = getenv("INFPROF_OUTPUT");
    struct stat st;
    for (int i = 0; db && i < 1000; i++) {
        if (stat(db, &st) == 0 && st.st_size > 0) return 1;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    return !db;
}

static long since_start_us(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - t0->tv_sec) * 1000000 + (now.tv_nsec - t0->tv_nsec) / 1000;
}

static int earlyclose(long us, const char *path, const char *how)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (since_start_us(&t0) < us) { /* the program's own start-up work */
    }
    if (!strcmp(how, "range"))
        close_range(3, ~0u, 0);
    else if (!strcmp(how, "from"))
        closefrom(3);
    else
        for (int fd = 3; fd < 1024; fd++) close(fd);
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    int failed = 0;
    for (int i = 0; i < 500; i++) {
        if (fprintf(f, "line %d of the program's own file\n", i) < 0 || fflush(f) != 0) failed++;
    }
    if (fclose(f) != 0) failed++;
    if (failed) fprintf(stderr, "hostile2: %d writes failed\n", failed);
    return failed ? 1 : 0;
}

static int recurse(int n)
{
    if (n == 0) return 0;
    nvtxRangePushA("recursion");
    int r = recurse(n - 1) + 1;
    nvtxRangePop();
    return r;
}

static int nvtxdeep(int n)
{
    for (int i = 0; i < n; i++) nvtxRangePushA("deep");
    for (int i = 0; i < n; i++) nvtxRangePop();
    printf("nested %d, recursed %d\n", n, recurse(n));
    return 0;
}

static int pipeclose(int target)
{
    int p[2];
    if (!wait_for_database()) return 2;
    if (pipe(p) != 0 || dup2(p[1], target) != target) return 2;
    close(p[1]);
    pid_t reader = fork();
    if (reader == 0) {
        close(target);
        alarm(10); /* a reader that never sees end-of-file dies here, and the test says so */
        char buf[64];
        ssize_t got, total = 0;
        while ((got = read(p[0], buf, sizeof buf)) > 0) total += got;
        _exit(total == 5 ? 0 : 3);
    }
    close(p[0]);
    if (write(target, "hello", 5) != 5) return 2;
    close(target); /* the reader's end-of-file */
    int st;
    waitpid(reader, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "hostile2: the reader never saw end-of-file\n");
        return 1;
    }
    printf("pipe on %d closed\n", target);
    return 0;
}

static int forkclose(const char *out)
{
    nvtxRangePushA("parent");
    nvtxRangePop();
    if (!wait_for_database()) return 2;
    pid_t child = fork();
    if (child == 0) {
        char found[8192];
        size_t n = 0;
        for (int fd = 3; fd < 1024; fd++) close(fd);
        DIR *d = opendir("/proc/self/fd");
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char link[300], target[1024];
            snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
            ssize_t len = readlink(link, target, sizeof target - 1);
            if (len <= 0 || atoi(e->d_name) < 3 || atoi(e->d_name) == dirfd(d)) continue;
            target[len] = 0;
            n += (size_t)snprintf(found + n, sizeof found - n, "%s\n", target);
            if (n >= sizeof found) n = sizeof found - 1;
        }
        if (d) closedir(d);
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, found, n) != (ssize_t)n) _exit(2);
        close(fd);
        _exit(0);
    }
    int st;
    waitpid(child, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static volatile sig_atomic_t cleaned;

static void cleanup_and_reraise(int sig)
{
    cleaned = 1; /* the program's own clean-up */
    signal(sig, SIG_DFL);
    raise(sig);
}

static int reraise(int n)
{
    signal(SIGTERM, cleanup_and_reraise);
    for (int i = 0; i < n; i++) {
        nvtxRangePushA("work");
        nvtxRangePop();
    }
    printf("ranges %d\n", n);
    raise(SIGTERM);
    return 0; /* never reached */
}

static volatile sig_atomic_t handled;

static void range_in_handler(int sig)
{
    (void)sig;
    nvtxRangePushA("in handler");
    nvtxRangePop();
    handled++;
}

/* A timer's signal arrives while the program is busy with NVTX (often inside the library's
 * hook): every range the handler pushes is recorded or counted as dropped. */
static int sighandler_nvtx(int n)
{
    signal(SIGALRM, range_in_handler);
    struct itimerval every = {{0, 200}, {0, 200}}, off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &every, NULL);
    long outside = 0;
    while (handled < n) {
        nvtxRangePushA("outside");
        nvtxRangePop();
        outside++;
    }
    setitimer(ITIMER_REAL, &off, NULL);
    printf("handled %d\n", (int)handled);
    return outside > 0 ? 0 : 1;
}

/* How many more files the program can open (its descriptor limit less what is open). */
static int fdcount(void)
{
    int n = 0;
    while (open("/dev/null", O_RDONLY) >= 0) n++;
    printf("opened %d\n", n);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IONBF, 0);
    if (!strcmp(mode, "earlyclose") && argc > 3)
        return earlyclose(atol(argv[2]), argv[3], argc > 4 ? argv[4] : "loop");
    if (!strcmp(mode, "fdcount")) return fdcount();
    if (!strcmp(mode, "nvtxdeep") && argc > 2) return nvtxdeep(atoi(argv[2]));
    if (!strcmp(mode, "pipeclose") && argc > 2) return pipeclose(atoi(argv[2]));
    if (!strcmp(mode, "forkclose") && argc > 2) return forkclose(argv[2]);
    if (!strcmp(mode, "reraise") && argc > 2) return reraise(atoi(argv[2]));
    if (!strcmp(mode, "sighandler-nvtx") && argc > 2) return sighandler_nvtx(atoi(argv[2]));
    fprintf(stderr, "usage: hostile2 MODE [ARGS] (modes at the top of hostile2.c)\n");
    return 2;
}
