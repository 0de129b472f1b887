/*
 * registry.c: the table of collectors (collector.h) and their status lines. Adding a collector
 * means one line here and one file of its own.
 */
#include "collector.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

extern const struct ip_collector ip_collector_cupti;
extern const struct ip_collector ip_collector_torch;
extern const struct ip_collector ip_collector_nvtx;
extern const struct ip_collector ip_collector_cudnn;

const struct ip_collector *const ip_collectors[IP_COLLECTOR_COUNT] = {
    [IP_COLLECTOR_CORE] = NULL,
    [IP_COLLECTOR_CUPTI] = &ip_collector_cupti,
    [IP_COLLECTOR_TORCH] = &ip_collector_torch,
    [IP_COLLECTOR_NVTX] = &ip_collector_nvtx,
    [IP_COLLECTOR_CUDNN] = &ip_collector_cudnn,
};

static pthread_mutex_t status_lock = PTHREAD_MUTEX_INITIALIZER;
static char status_text[IP_COLLECTOR_COUNT][256];

void ip_collector_status(int index, const char *state, const char *reason_fmt, ...)
{
    if (index < 0 || index >= IP_COLLECTOR_COUNT) return;
    char reason[200];
    va_list ap;
    va_start(ap, reason_fmt);
    vsnprintf(reason, sizeof reason, reason_fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&status_lock);
    snprintf(status_text[index], sizeof status_text[index], "%s%s%s", state, reason[0] ? ": " : "",
             reason);
    pthread_mutex_unlock(&status_lock);
}

void ip_collector_status_copy(int index, char *out, size_t n)
{
    pthread_mutex_lock(&status_lock);
    snprintf(out, n, "%s", status_text[index][0] ? status_text[index] : "off: not started");
    pthread_mutex_unlock(&status_lock);
}
