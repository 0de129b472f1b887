/*
 * nvml_ingest.c: the energy collector, writer side: the sampler's readings to energy_samples,
 * each GPU's identity and status to energy_gpus, and the run metadata (energy.gpu, energy.cpu,
 * energy_sampler_tid, energy_sampler_cpu_ns, energy_readings, energy_readings_dropped).
 */
#include "nvml_internal.h"
#include "../profiler/process.h"
#include "../profiler/store.h"

#include <sqlite3.h>
#include <string.h>

static struct ip_batch *samples;

void ip_energy_prepare(struct ip_store *s)
{
    samples = ip_batch_open(s, "energy_samples", 9);
    /* A forked child's copy of the parent's queue is the parent's to write. */
    if (ip_role() == IP_ROLE_FORK_CHILD) {
        atomic_store(&ip_energy_q.tail, atomic_load(&ip_energy_q.head));
        atomic_store(&ip_energy_q.dropped, 0);
    }
}

static int64_t or_null(int64_t v)
{
    return v < 0 ? IP_NULL : v;
}

void ip_energy_flush(struct ip_store *s, int final)
{
    (void) final;
    struct ip_energy_reading r;
    while (ip_energy_pop(&ip_energy_q, &r)) {
        int64_t *row = ip_batch_row(samples);
        row[0] = r.gpu;
        row[1] = ip_store_rel(s, r.ts);
        row[2] = r.kind;
        row[3] = or_null(r.energy_mj);
        row[4] = or_null(r.power_mw);
        row[5] = or_null(r.sm_mhz);
        row[6] = or_null(r.mem_mhz);
        row[7] = or_null(r.temp_c);
        row[8] = r.reasons == -1 ? IP_NULL : r.reasons;
    }
}

void ip_energy_finish(struct ip_store *s)
{
    ip_energy_flush(s, 1);
    struct ip_energy_gpu_info g[IP_ENERGY_GPUS];
    int n = ip_energy_gpu_infos(g, IP_ENERGY_GPUS);
    sqlite3_stmt *st = n ? ip_store_prepare(s, "INSERT OR REPLACE INTO energy_gpus VALUES"
                                               " (?,?,?,?,?,?,?)")
                         : NULL;
    for (int i = 0; st && i < n; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int(st, 1, g[i].nvml_index);
        sqlite3_bind_int(st, 2, g[i].cuda);
        sqlite3_bind_text(st, 3, g[i].name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 4, g[i].uuid, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(st, 5, g[i].mig);
        sqlite3_bind_text(st, 6, g[i].status, -1, SQLITE_TRANSIENT);
        if (g[i].power_limit_mw > 0)
            sqlite3_bind_int64(st, 7, g[i].power_limit_mw);
        else
            sqlite3_bind_null(st, 7);
        ip_store_step(s, st);
    }
    struct ip_energy_facts f;
    ip_energy_facts(&f);
    if (!f.tid) return; /* no sampler ran (off, or a forked child) */
    ip_store_meta_text(s, "energy.gpu", f.gpu_status);
    ip_store_meta_text(s, "energy.cpu", f.cpu_status);
    ip_store_meta_int(s, "energy_sampler_tid", f.tid);
    ip_store_meta_int(s, "energy_sampler_cpu_ns", f.cpu_ns);
    ip_store_meta_int(s, "energy_readings", f.readings);
    ip_store_meta_int(s, "energy_readings_dropped", (int64_t)atomic_load(&ip_energy_q.dropped));
}
