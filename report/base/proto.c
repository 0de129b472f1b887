/*
 * proto.c: the protobuf wire format (proto.h): https://protobuf.dev/programming-guides/encoding/
 */
#include "proto.h"
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static void room(struct proto_buf *p, size_t more)
{
    if (p->n + more <= p->cap) return;
    size_t cap = p->cap ? p->cap : 256;
    while (cap < p->n + more) cap *= 2;
    unsigned char *b = realloc(p->b, cap);
    if (!b) cli_fail("out of memory");
    p->b = b;
    p->cap = cap;
}

void proto_reset(struct proto_buf *p)
{
    p->n = 0;
}

void proto_free(struct proto_buf *p)
{
    free(p->b);
    memset(p, 0, sizeof *p);
}

static void varint(struct proto_buf *p, uint64_t v)
{
    room(p, 10);
    while (v >= 0x80) {
        p->b[p->n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p->b[p->n++] = (unsigned char)v;
}

static void tag(struct proto_buf *p, uint32_t field, unsigned wire)
{
    varint(p, (uint64_t)field << 3 | wire);
}

void proto_uint(struct proto_buf *p, uint32_t field, uint64_t v)
{
    tag(p, field, 0);
    varint(p, v);
}

void proto_bytes(struct proto_buf *p, uint32_t field, const void *data, size_t len)
{
    tag(p, field, 2);
    varint(p, len);
    room(p, len);
    if (len) memcpy(p->b + p->n, data, len);
    p->n += len;
}

void proto_str(struct proto_buf *p, uint32_t field, const char *s)
{
    proto_bytes(p, field, s, strlen(s));
}

void proto_msg(struct proto_buf *p, uint32_t field, const struct proto_buf *msg)
{
    proto_bytes(p, field, msg->b, msg->n);
}
