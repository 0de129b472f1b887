/*
 * window_config.c: the settings of the recording windows (docs/windows.md), with their defaults
 * and docs: read at start by the core (the collector's descriptor hands them over), written to
 * the run's metadata and listed by `infprof info`.
 */
#include "window_config.h"

#include <stddef.h>

/* clang-format off */
static const struct ip_cfg_entry entries[IP_WINDOW_CFG_COUNT] = {
    [IP_WINDOW_CFG_START] = {"INFPROF_WINDOW_START", IP_CFG_ENUM, "open", 0, 0, "open|closed",
        "Whether the run records from its start (open) or only inside the windows it is asked"
        " for (closed: `infprof window PID start`, INFPROF_WINDOW_DELAY_MS, a signal;"
        " docs/windows.md).", NULL},
    [IP_WINDOW_CFG_DELAY_MS] = {"INFPROF_WINDOW_DELAY_MS", IP_CFG_INT, "0", 0, 86400000, NULL,
        "Record nothing for this many ms from the start, then open a window (nsys --delay);"
        " 0: no delay.", NULL},
    [IP_WINDOW_CFG_DURATION_MS] = {"INFPROF_WINDOW_DURATION_MS", IP_CFG_INT, "0", 0, 86400000,
        NULL, "Close each window this many ms after it opened (nsys --duration); 0: a window"
        " stays open until it is closed or the run ends.", NULL},
    [IP_WINDOW_CFG_CAPTURE] = {"INFPROF_CAPTURE_RANGE", IP_CFG_STR, "", 0, 0, NULL,
        "Windows the program opens itself (nsys --capture-range): `nvtx:NAME`, each push/pop"
        " range of that text (a glob) is a window; `cudaProfilerApi`, cudaProfilerStart to"
        " cudaProfilerStop (and cuProfilerStart/Stop). The run starts closed.", NULL},
    [IP_WINDOW_CFG_CONTROL] = {"INFPROF_WINDOW_CONTROL", IP_CFG_BOOL, "1", 0, 1, NULL,
        "Hear `infprof window PID start|stop`: a request file INFPROF_WINDOW_DIR/"
        "infprof-window-PID, looked for every 100 ms by our writer thread (a stat, no"
        " descriptor held).", NULL},
    [IP_WINDOW_CFG_DIR] = {"INFPROF_WINDOW_DIR", IP_CFG_STR, "/tmp", 0, 0, NULL,
        "Where `infprof window` leaves its requests and the process its answers (the same"
        " for both).", NULL},
    [IP_WINDOW_CFG_SIGNAL] = {"INFPROF_WINDOW_SIGNAL", IP_CFG_INT, "0", 0, 64, NULL,
        "A signal that opens a window when closed and closes it when open (e.g. 12, SIGUSR2);"
        " 0: none. Refused, and said in the run header, when the program already handles"
        " it; a handler the program sets later replaces ours.", NULL},
};
/* clang-format on */

static struct ip_cfg_value values[IP_WINDOW_CFG_COUNT];

const struct ip_cfg_group ip_window_cfg = {"window", entries, values, IP_WINDOW_CFG_COUNT};
