/*
 * hostile.c: programs that do what real programs do and a preloaded library must survive
 * (tests/core/test_hostile.py). Output is deterministic.
 *
 *   hostile closeall FILE     wait for the profile database (INFPROF_OUTPUT) to exist, open FILE
 *                             and close it, close every descriptor from 3 to 1023 as a daemon
 *                             does, open FILE (its own data) read-write, record NVTX ranges for
 *                             a while, and exit; it prints the numbers its two opens got
 *   hostile closerange FILE   the same with close_range(3, ~0U, 0)
 *   hostile closefrom FILE    the same with closefrom(3)
 *   hostile execl | execlp | execle
 *                             replace itself with /bin/true through that call
 *   hostile execl-thread      the same from a thread, at once
 *   hostile return N          return N from main (no exit call of its own)
 *   hostile waitfile FILE     wait for the database, then for FILE to exist, then exit
 *   hostile threads N         N threads alive at once, each recording one NVTX range
 */
#include <nvtx3/nvToolsExt.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int wait_for_database(void)
{
    const char *db = getenv("INFPROF_OUTPUT");
    struct stat st;
    for (int i = 0; db && i < 1000; i++) {
        if (stat(db, &st) == 0 && st.st_size > 0) return 1;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    return !db; /* run without the library: nothing to wait for */
}

static int daemonlike(const char *how, const char *file)
{
    if (!wait_for_database()) {
        fprintf(stderr, "hostile: no database appeared\n");
        return 1;
    }
    int first = open(file, O_RDONLY);
    printf("hostile %s: first file opened as fd %d\n", how, first);
    close(first);
    if (!strcmp(how, "closeall"))
        for (int fd = 3; fd < 1024; fd++) close(fd);
    else if (!strcmp(how, "closerange"))
        close_range(3, ~0u, 0);
    else
        closefrom(3);
    int fd = open(file, O_RDWR);
    if (fd < 0) {
        perror("hostile: open");
        return 1;
    }
    /* A while of ordinary work: the profiler's writer commits several times meanwhile. */
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    long ranges = 0;
    do {
        for (int i = 0; i < 100; i++, ranges++) {
            nvtxRangePushA("work");
            nvtxRangePop();
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < 700);
    printf("hostile %s: own file open as fd %d\n", how, fd);
    close(fd);
    return 0;
}

static void *exec_thread(void *arg)
{
    (void)arg;
    execl("/bin/true", "true", (char *)NULL);
    return NULL;
}

static pthread_barrier_t all_alive;

static void *one_range(void *arg)
{
    (void)arg;
    nvtxRangePushA("thread");
    nvtxRangePop();
    pthread_barrier_wait(&all_alive); /* every thread exists at once */
    return NULL;
}

static int many_threads(int n)
{
    pthread_t *t = calloc((size_t)n, sizeof *t);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 << 10);
    pthread_barrier_init(&all_alive, NULL, (unsigned)n + 1);
    int made = 0;
    for (int i = 0; i < n; i++) made += pthread_create(&t[i], &attr, one_range, NULL) == 0;
    if (made != n) {
        fprintf(stderr, "hostile: only %d threads\n", made);
        return 1;
    }
    pthread_barrier_wait(&all_alive);
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    printf("hostile threads: %d\n", n);
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 2 &&
        (!strcmp(mode, "closeall") || !strcmp(mode, "closerange") || !strcmp(mode, "closefrom")))
        return daemonlike(mode, argv[2]);
    if (!strcmp(mode, "waitfile") && argc > 2) {
        if (!wait_for_database()) return 1;
        nvtxRangePushA("waiting");
        nvtxRangePop();
        struct stat st;
        for (int i = 0; i < 3000 && stat(argv[2], &st) != 0; i++) {
            struct timespec ts = {0, 10000000};
            nanosleep(&ts, NULL);
        }
        printf("hostile waitfile: done\n");
        return 0;
    }
    if (!strcmp(mode, "threads") && argc > 2) return many_threads(atoi(argv[2]));
    if (!strcmp(mode, "return") && argc > 2) {
        nvtxRangePushA("returning");
        nvtxRangePop();
        return atoi(argv[2]);
    }
    nvtxRangePushA("before exec");
    nvtxRangePop();
    if (!strcmp(mode, "execl")) execl("/bin/true", "true", (char *)NULL);
    if (!strcmp(mode, "execlp")) execlp("true", "true", (char *)NULL);
    if (!strcmp(mode, "execle")) execle("/bin/true", "true", (char *)NULL, environ);
    if (!strcmp(mode, "execl-thread")) {
        pthread_t t;
        pthread_create(&t, NULL, exec_thread, NULL);
        pthread_join(t, NULL);
    }
    fprintf(stderr, "usage: hostile closeall|closerange|closefrom FILE | execl | execlp | execle |"
                    " execl-thread\n");
    return 2;
}
