/*
 * launch_overhead.cu: infprof-launch-bench, the host time infprof adds to a kernel launch.
 *
 * A launch-bound loop of empty kernels runs in child processes, alternately without the library
 * and with it (LD_PRELOAD, so CUPTI is injected and every launch goes through our callback and
 * CUPTI's records), RUNS times each. A child times batches of LAUNCHES back-to-back launches on
 * the host (the GPU drains a batch between batches, so the launch queue never fills and the time
 * is the host's) and prints the median ns per launch over its batches. The figure is the
 * median over runs of (with - without); goal: at most 1000 ns. Printed, never asserted.
 *
 *   infprof-launch-bench [--lib PATH] [--runs R] [--batches B] [--launches L] [--no-api]
 *
 * --lib defaults to ../lib/libinfprof.so next to this binary; --no-api adds a third variant
 * with INFPROF_CUDA_API=0 (no API records, the issue callback only). Each traced child's
 * database is checked: every launch must be there and nothing dropped, else the figure is void.
 */
#include <cuda_runtime.h>
#include <sqlite3.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern "C" __global__ void k_empty(void) {}

static long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The measured loop: prints "ns_per_launch X" and "launches N". */
static int child(int batches, int launches)
{
    if (cudaFree(0) != cudaSuccess) {
        fprintf(stderr, "infprof-launch-bench: no usable CUDA device\n");
        return 2;
    }
    for (int i = 0; i < 1000; i++) k_empty<<<1, 1>>>();
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    double *per = (double *)malloc(sizeof(double) * (size_t)batches);
    for (int b = 0; b < batches; b++) {
        long t0 = now_ns();
        for (int i = 0; i < launches; i++) k_empty<<<1, 1>>>();
        long t1 = now_ns();
        if (cudaDeviceSynchronize() != cudaSuccess) return 1;
        per[b] = (double)(t1 - t0) / launches;
    }
    printf("ns_per_launch %.1f\nlaunches %d\n", median(per, batches), 1000 + batches * launches);
    free(per);
    return 0;
}

/* Run one child; its median ns/launch, or -1. env: NULL (plain) or extra "K=V" settings. */
static double run_child(const char *self, const char *lib, const char *const *env, int batches,
                        int launches, const char *db, long *kernels, long *dropped)
{
    int fd[2];
    if (pipe(fd) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        if (lib) {
            setenv("LD_PRELOAD", lib, 1);
            setenv("INFPROF_OUTPUT", db, 1);
            unlink(db);
            for (int i = 0; env && env[i]; i += 2) setenv(env[i], env[i + 1], 1);
        }
        char b[32], l[32];
        snprintf(b, sizeof b, "%d", batches);
        snprintf(l, sizeof l, "%d", launches);
        execl(self, self, "--child", b, l, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char out[256] = "";
    ssize_t n = read(fd[0], out, sizeof out - 1);
    out[n > 0 ? n : 0] = 0;
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    double ns = -1;
    long expect = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        sscanf(out, "ns_per_launch %lf\nlaunches %ld", &ns, &expect) != 2)
        return -1;
    *kernels = *dropped = -1;
    if (lib) {
        sqlite3 *d;
        if (sqlite3_open_v2(db, &d, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
            sqlite3_stmt *st;
            const char *sql = "SELECT (SELECT count(*) FROM kernels), (SELECT value FROM meta"
                              " WHERE key = 'cupti_dropped_records')";
            if (sqlite3_prepare_v2(d, sql, -1, &st, NULL) == SQLITE_OK) {
                if (sqlite3_step(st) == SQLITE_ROW) {
                    *kernels = sqlite3_column_int64(st, 0);
                    *dropped = sqlite3_column_int64(st, 1);
                }
                sqlite3_finalize(st);
            }
        }
        sqlite3_close(d);
        unlink(db);
        if (*kernels != expect || *dropped != 0) {
            fprintf(stderr,
                    "infprof-launch-bench: traced run recorded %ld of %ld kernels,"
                    " %ld dropped: figure void\n",
                    *kernels, expect, *dropped);
            return -1;
        }
    }
    return ns;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--child")) return child(atoi(argv[2]), atoi(argv[3]));
    int runs = 7, batches = 200, launches = 256, no_api = 0;
    char self[PATH_MAX], lib[PATH_MAX] = "";
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    self[len > 0 ? len : 0] = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--lib") && i + 1 < argc)
            snprintf(lib, sizeof lib, "%s", argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batches") && i + 1 < argc)
            batches = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--launches") && i + 1 < argc)
            launches = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-api"))
            no_api = 1;
        else {
            fprintf(stderr, "usage: infprof-launch-bench [--lib PATH] [--runs R] [--batches B]"
                            " [--launches L] [--no-api]\n");
            return 2;
        }
    }
    if (runs < 1 || batches < 1 || launches < 1) return 2;
    if (!lib[0]) {
        const char *slash = strrchr(self, '/');
        size_t dir = slash ? (size_t)(slash - self) : 0;
        if (dir + 32 > sizeof lib) return 2;
        memcpy(lib, self, dir);
        strcpy(lib + dir, "/../lib/libinfprof.so");
    }
    if (access(lib, R_OK) != 0) {
        fprintf(stderr, "infprof-launch-bench: %s not found (--lib PATH)\n", lib);
        return 2;
    }
    char db[64];
    snprintf(db, sizeof db, "/tmp/infprof-launch-bench-%d.db", (int)getpid());
    static const char *const no_api_env[] = {"INFPROF_CUDA_API", "0", NULL};
    int variants = no_api ? 3 : 2;
    double *v[3];
    for (int k = 0; k < 3; k++) v[k] = (double *)calloc((size_t)runs, sizeof(double));
    long kernels = 0, dropped = 0;
    /* Interleaved, so drift (clocks, other load) hits every variant alike. */
    for (int r = 0; r < runs; r++) {
        for (int k = 0; k < variants; k++) {
            v[k][r] = run_child(self, k ? lib : NULL, k == 2 ? no_api_env : NULL, batches, launches,
                                db, &kernels, &dropped);
            if (v[k][r] < 0) {
                fprintf(stderr, "infprof-launch-bench: run %d (%s) failed\n", r,
                        k == 0   ? "plain"
                        : k == 1 ? "infprof"
                                 : "infprof, no API records");
                return 1;
            }
        }
    }
    double added[3] = {0, 0, 0};
    for (int k = 1; k < variants; k++) {
        double d[64];
        int n = runs < 64 ? runs : 64;
        for (int r = 0; r < n; r++) d[r] = v[k][r] - v[0][r];
        added[k] = median(d, n);
    }
    printf("runs %d\nbatches %d\nlaunches_per_batch %d\n", runs, batches, launches);
    printf("plain_ns_per_launch %.1f\n", median(v[0], runs));
    printf("infprof_ns_per_launch %.1f\n", median(v[1], runs));
    printf("added_ns_per_launch %.1f\n", added[1]);
    if (no_api) {
        printf("infprof_no_api_ns_per_launch %.1f\n", median(v[2], runs));
        printf("added_no_api_ns_per_launch %.1f\n", added[2]);
    }
    printf("goal_added_ns 1000\nmeets_goal %s\n", added[1] <= 1000 ? "yes" : "no");
    return 0;
}
