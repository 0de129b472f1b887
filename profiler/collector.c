/*
 * collector.c: the collector table the core was handed, and the status line each collector
 * writes about itself (collector.h); runinfo.c stores the lines in the run's metadata.
 */
#include "collector.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct ip_collector *const *coll_table;
static int coll_count;

static pthread_mutex_t status_lock = PTHREAD_MUTEX_INITIALIZER;
static char status_text[IP_COLLECTOR_MAX][512];

void ip_collectors_use(const struct ip_collector *const *table, int n)
{
    coll_table = table;
    coll_count = table && n > 0 ? (n < IP_COLLECTOR_MAX ? n : IP_COLLECTOR_MAX) : 0;
}

int ip_collector_count(void)
{
    return coll_count;
}

const struct ip_collector *ip_collector_at(int index)
{
    return index >= 0 && index < coll_count ? coll_table[index] : NULL;
}

void ip_collector_status(int index, const char *state, const char *reason_fmt, ...)
{
    if (index < 0 || index >= IP_COLLECTOR_MAX) return;
    char reason[480];
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
    if (index < 0 || index >= IP_COLLECTOR_MAX) {
        snprintf(out, n, "off: not started");
        return;
    }
    pthread_mutex_lock(&status_lock);
    snprintf(out, n, "%s", status_text[index][0] ? status_text[index] : "off: not started");
    pthread_mutex_unlock(&status_lock);
}
