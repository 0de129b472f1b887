/*
 * cmd_window.c: `infprof window PID start|stop`: open or close a recording window in a running
 * process profiled by infprof (docs/windows.md). The request is a file INFPROF_WINDOW_DIR (/tmp
 * by default, the process's setting) /infprof-window-PID, written whole (a temporary file
 * renamed); the process's writer looks for it every 100 ms, acts, and answers in
 * ...-PID.ack, which this command reads, prints and removes. No answer within --wait seconds
 * (2) says why it may be.
 */
#include "commands.h"
#include "../base/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void window_usage(FILE *out)
{
    fprintf(out, "usage: infprof window PID start|stop [--wait SECONDS]\n\n"
                 "Open (start) or close (stop) a recording window in process PID, profiled by\n"
                 "infprof (run with --closed to record only inside windows). The process and\n"
                 "this command must agree on INFPROF_WINDOW_DIR (default /tmp).\n");
}

int cmd_window(int argc, char **argv)
{
    const char *pid_s = NULL, *what = NULL;
    double wait = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            window_usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--wait")) {
            if (++i == argc || (wait = atof(argv[i])) <= 0)
                cli_fail("--wait needs seconds, e.g. 5");
        } else if (!pid_s) {
            pid_s = argv[i];
        } else if (!what) {
            what = argv[i];
        } else {
            cli_fail("unexpected '%s' (usage: infprof window PID start|stop)", argv[i]);
        }
    }
    char *end;
    long pid = pid_s ? strtol(pid_s, &end, 10) : 0;
    if (!pid_s || *end || pid <= 0)
        cli_fail("no process id (usage: infprof window PID start|stop)");
    if (!what || (strcmp(what, "start") && strcmp(what, "stop")))
        cli_fail("say start or stop (usage: infprof window PID start|stop)");
    if (kill((pid_t)pid, 0) && errno == ESRCH) cli_fail("no process %ld is running", pid);
    const char *dir = getenv("INFPROF_WINDOW_DIR");
    if (!dir || !*dir) dir = "/tmp";
    char req[4096], tmp[4200], ack[4200];
    snprintf(req, sizeof req, "%s/infprof-window-%ld", dir, pid);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", req, (long)getpid());
    snprintf(ack, sizeof ack, "%s.ack", req);
    unlink(ack); /* a stale answer of an earlier request */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) cli_fail("cannot write %s: %s", tmp, strerror(errno));
    int ok = write(fd, what, strlen(what)) == (ssize_t)strlen(what);
    close(fd);
    if (!ok || rename(tmp, req)) {
        unlink(tmp);
        cli_fail("cannot write the request %s: %s", req, strerror(errno));
    }
    /* Wait for the answer (the process looks every 100 ms). */
    struct timespec step = {0, 20000000};
    for (double waited = 0; waited < wait; waited += 0.02) {
        FILE *f = fopen(ack, "r");
        if (f) {
            char line[128] = "";
            if (!fgets(line, sizeof line, f)) line[0] = 0;
            fclose(f);
            unlink(ack);
            line[strcspn(line, "\n")] = 0;
            printf("infprof: process %ld: %s\n", pid, line[0] ? line : "answered");
            return 0;
        }
        nanosleep(&step, NULL);
    }
    unlink(req); /* nobody took it: ours */
    fprintf(stderr,
            "infprof: process %ld did not answer within %.0f s: is it profiled by infprof (with"
            " INFPROF_WINDOW_CONTROL=1, the default) and does it use INFPROF_WINDOW_DIR=%s?\n",
            pid, wait, dir);
    return 1;
}
