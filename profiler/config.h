/*
 * config.h: the INFPROF_* settings: the core's table (config.c) and the reader of every
 * collector's own (collectors/<name>_config.c), which the library reads at start and `infprof
 * info` prints. A bad value warns once, naming the variable and the fix, and the
 * default is used.
 */
#ifndef INFPROF_CONFIG_H
#define INFPROF_CONFIG_H

#include <stdint.h>

enum ip_cfg_id {
    IP_CFG_ENABLE,
    IP_CFG_MODE,
    IP_CFG_OUTPUT,
    IP_CFG_LOG,
    IP_CFG_FORK,
    IP_CFG_FOLLOW_EXEC,
    IP_CFG_BUFFER_MB,
    IP_CFG_BUFFER_WAIT_MS,
    IP_CFG_FLUSH_MS,
    IP_CFG_FINISH_TIMEOUT_MS,
    IP_CFG_DISK_RESERVE_MB,
    IP_CFG_ITERATION_RANGE,
    IP_CFG_BATCH,
    IP_CFG_NVTX_EMIT,
    IP_CFG_CLOCK,
    IP_CFG_COUNT
};

/* IP_CFG_MILLI: a decimal number of at most three places ("0.25"), held in thousandths (250);
 * its min and max in thousandths too. */
enum ip_cfg_type { IP_CFG_BOOL, IP_CFG_INT, IP_CFG_STR, IP_CFG_ENUM, IP_CFG_MILLI };

struct ip_cfg_entry {
    const char *name; /* environment variable */
    enum ip_cfg_type type;
    const char *dflt;    /* default, as it would be written in the environment */
    int64_t min, max;    /* IP_CFG_INT range (IP_CFG_MILLI: in thousandths) */
    const char *choices; /* IP_CFG_ENUM: "a|b|c"; the value is the index */
    const char *doc;
    const char *full; /* the value under INFPROF_MODE=full, unless set itself; NULL: the same */
};

/* What a setting holds once read. */
struct ip_cfg_value {
    int64_t num;           /* BOOL, INT, ENUM (the choice's index), MILLI (thousandths) */
    const char *text;      /* the text used: the environment's, or the default */
    unsigned char present; /* given in the environment */
};

/* The settings of one owner: the core's (ip_cfg_core) or a collector's, which its descriptor
 * hands to the core (collector.h) and which live in the collector's own files. */
struct ip_cfg_group {
    const char *owner; /* "core", or the collector's name */
    const struct ip_cfg_entry *entries;
    struct ip_cfg_value *values; /* n of each */
    int n;
};

extern const struct ip_cfg_group ip_cfg_core;

/* Reads the core's settings from the environment (warnings once per bad variable). */
void ip_cfg_load(void);
/* Reads a collector's settings (after ip_cfg_load: INFPROF_LOG and INFPROF_MODE apply). */
void ip_cfg_group_load(const struct ip_cfg_group *g);
/* Checks one value against its entry; returns 0 if it is valid (*num_out: its number). */
int ip_cfg_entry_parse(const struct ip_cfg_entry *e, const char *text, int64_t *num_out);
/* A setting's value before or without ip_cfg_load: the environment's if valid, else the
 * default (hooks that run before the library starts). */
int64_t ip_cfg_entry_env(const struct ip_cfg_entry *e);

int64_t ip_cfg_group_int(const struct ip_cfg_group *g, int id); /* BOOL, INT and ENUM */
const char *ip_cfg_group_str(const struct ip_cfg_group *g, int id);
int ip_cfg_group_is_set(const struct ip_cfg_group *g, int id); /* present in the environment */

/* The core's own, by id. */
int ip_cfg_parse(enum ip_cfg_id id, const char *text, int64_t *num_out);
int64_t ip_cfg_int(enum ip_cfg_id id);
const char *ip_cfg_str(enum ip_cfg_id id);
int ip_cfg_is_set(enum ip_cfg_id id);

#endif
