/*
 * opname.h: the innermost PyTorch operator of a thread, as a small id that GPU work and cuDNN
 * calls carry (docs/libtorch.md "Operators"). The operator collector keeps each thread's
 * innermost open operator in ip_self.op_rf; its name is looked up only when something reads it
 * (a launch, a cuDNN call, a state change in records mode), and interned into a fixed table
 * shared by all threads without a lock: the id is the table slot + 1. Names past the table's
 * IP_OPNAME_SLOTS are counted (meta torch_operator_names_overflow) and read as no operator.
 */
#ifndef INFPROF_OPNAME_H
#define INFPROF_OPNAME_H

#include <stdint.h>

struct ip_store;

#define IP_OPNAME_SLOTS 2048
#define IP_OPNAME_MAX   64 /* bytes kept of a name, with its terminating zero */

/* How to read the name of an open operator (set once by the operator collector). */
void ip_opname_source(const char *(*name_of)(const void *rf));

/* App side, lock-free, no allocation: the id of `name` (1..IP_OPNAME_SLOTS), 0 when the table is
 * full. Safe from any thread. */
uint32_t ip_opname_id(const char *name);

/* App side: the calling thread's innermost open operator's id, 0 none. */
uint32_t ip_thread_op(void);

/* Writer side: the strings id of an operator id (IP_NULL for 0 or unknown). */
int64_t ip_opname_string(struct ip_store *s, uint32_t id);

/* Names that found no slot. */
uint64_t ip_opname_overflow(void);

#endif
