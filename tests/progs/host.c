/*
 * host.c: a host program for the "the program never notices us" tests. Each mode exercises one
 * thing a profiler can break; each marks its work with NVTX ranges so that the database has
 * events to hold. Output goes to stdout and stderr so byte-for-byte comparisons mean something.
 *
 *   host threads | fork | forkexec PROGRAM... | exec PROGRAM... | sigterm | sigint | exit |
 *        _exit | abort | sigquery | segv | spin | raise SIGNUM | exitterm
 *
 * exitterm: a forked child does its work, says "child PID" and waits for a byte on stdin, then
 * calls _exit(5); the parent says how the child ended ("child exited 5", "child killed by signal
 * 15"). The test sends the child a SIGTERM while its _exit is being finished.
 */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void work(const char *what, int n)
{
    for (int i = 0; i < n; i++) {
        nvtxRangePushA(what);
        nvtxRangePop();
    }
}

static void *thread_main(void *arg)
{
    work("thread work", 100);
    return arg;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    printf("host %s: start\n", mode);
    fprintf(stderr, "host %s: a line on stderr\n", mode);
    fflush(stdout);
    work("main work", 10);
    if (!strcmp(mode, "threads")) {
        pthread_t t[4];
        for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, thread_main, NULL);
        for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
        printf("threads joined\n");
        return 3;
    }
    if (!strcmp(mode, "fork")) {
        pid_t pid = fork();
        if (pid == 0) {
            work("child work", 5);
            printf("child done\n");
            exit(5);
        }
        int status;
        waitpid(pid, &status, 0);
        printf("parent: child exited %d\n", WEXITSTATUS(status));
        return 0;
    }
    if (!strcmp(mode, "exitterm")) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            work("child work", 5);
            printf("child %d\n", (int)getpid());
            fflush(stdout);
            char c;
            if (read(0, &c, 1) < 0) perror("read");
            _exit(5);
        }
        int status;
        waitpid(pid, &status, 0);
        if (WIFSIGNALED(status))
            printf("child killed by signal %d\n", WTERMSIG(status));
        else
            printf("child exited %d\n", WEXITSTATUS(status));
        return 0;
    }
    if (!strcmp(mode, "forkexec") && argc > 2) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            execvp(argv[2], argv + 2);
            _exit(127);
        }
        int status;
        waitpid(pid, &status, 0);
        printf("parent: child exited %d\n", WEXITSTATUS(status));
        return 0;
    }
    if (!strcmp(mode, "exec") && argc > 2) {
        fflush(stdout);
        execvp(argv[2], argv + 2);
        return 127;
    }
    if (!strcmp(mode, "sigterm")) raise(SIGTERM);
    if (!strcmp(mode, "sigint")) raise(SIGINT);
    if (!strcmp(mode, "raise") && argc > 2) raise(atoi(argv[2]));
    if (!strcmp(mode, "exit")) exit(9);
    if (!strcmp(mode, "_exit")) {
        printf("lost: never flushed\n");
        _exit(4);
    }
    if (!strcmp(mode, "abort")) abort();
    if (!strcmp(mode, "segv")) {
        volatile int *p = NULL;
        return *p;
    }
    if (!strcmp(mode, "sigquery")) {
        /* A program asking what SIGINT does must hear what it would hear without us. */
        struct sigaction sa;
        sigaction(SIGINT, NULL, &sa);
        printf("SIGINT handler is %s\n", sa.sa_handler == SIG_DFL ? "default" : "set");
        void (*prev)(int) = signal(SIGTERM, SIG_IGN);
        printf("SIGTERM handler was %s\n", prev == SIG_DFL ? "default" : "set");
        return 0;
    }
    if (!strcmp(mode, "spin")) {
        /* Runs until killed, recording all along; says when its first events are out. */
        for (long i = 0;; i++) {
            work("spin", 1000);
            if (i == 0) printf("spinning\n"), fflush(stdout);
        }
    }
    printf("host %s: end\n", mode);
    return 0;
}
