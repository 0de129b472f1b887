/*
 * proto.h: the protobuf wire format, as much as a trace writer needs (proto.c): varints, tags
 * and length-delimited fields appended to growable buffers. A nested message is built in
 * a buffer of its own and appended to its parent with proto_msg, so no length is ever guessed.
 * No schema here: the callers name Perfetto's field numbers (export/perfetto.c).
 */
#ifndef INFPROF_PROTO_H
#define INFPROF_PROTO_H

#include <stddef.h>
#include <stdint.h>

struct proto_buf {
    unsigned char *b;
    size_t n, cap;
};

void proto_reset(struct proto_buf *p); /* empty, keeping its memory */
void proto_free(struct proto_buf *p);
/* field = varint (wire type 0): uint64, int64 (two's complement), bool, enum. */
void proto_uint(struct proto_buf *p, uint32_t field, uint64_t v);
/* field = bytes or string (wire type 2). */
void proto_bytes(struct proto_buf *p, uint32_t field, const void *data, size_t len);
void proto_str(struct proto_buf *p, uint32_t field, const char *s);
/* field = the message built in `msg` (wire type 2). */
void proto_msg(struct proto_buf *p, uint32_t field, const struct proto_buf *msg);

#endif
