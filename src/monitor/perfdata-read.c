/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf.data's records in file order: from the mapped data section, the
 * data.N files of a --threads directory in turn, the window of a stream,
 * and COMPRESSED records expanded; each put in host order at an aligned
 * address and parsed with the layout of its event. */

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "perfdata-int.h"

/* ---- the stream of records -------------------------------------------- */

/* The extra payload that follows some of perf's records and is not
 * counted in their size: AUXTRACE's trace data (its first u64), the
 * tracing data after HEADER_TRACING_DATA (its u32, already padded to 8). */
int record_payload(const struct perfdata *pd, const struct perf_event_header *h, const uint8_t *p,
                          uint64_t *ret) {
        *ret = 0;
        if (h->type == PERFDATA_RECORD_AUXTRACE) {
                if (h->size < 16)
                        return -EBADMSG;
                *ret = file_u64(pd, p + 8);
        } else if (h->type == PERFDATA_RECORD_HEADER_TRACING_DATA) {
                uint32_t v;

                if (h->size < 12)
                        return -EBADMSG;
                memcpy(&v, p + 8, 4);
                *ret = pd->swap ? bswap_32(v) : v;
        }
        return 0;
}

static int decompress(struct perfdata *pd, const uint8_t *src, size_t n) {
        ZSTD_inBuffer in = { .src = src, .size = n };

        if (!pd->zstd) {
                pd->zstd = ZSTD_createDStream();
                if (!pd->zstd)
                        return -ENOMEM;
                ZSTD_initDStream(pd->zstd);
        }
        /* A record may straddle two compressed records (util/session.c
         * keeps the rest of the last one): move it to the front. */
        if (pd->dpos > 0)
                memmove(pd->dbuf, pd->dbuf + pd->dpos, pd->dlen - pd->dpos);
        pd->dlen -= pd->dpos;
        pd->dpos = 0;
        for (;;) {
                ZSTD_outBuffer out;
                size_t ret;

                if (pd->dcap - pd->dlen < BOUNCE_SIZE) {
                        size_t cap = pd->dcap ? pd->dcap * 2 : 4 * BOUNCE_SIZE;
                        uint8_t *b;

                        if (cap > DECOMP_MAX)
                                return -EBADMSG;
                        b = realloc(pd->dbuf, cap);
                        if (!b)
                                return -ENOMEM;
                        pd->dbuf = b;
                        pd->dcap = cap;
                }
                out = (ZSTD_outBuffer) { .dst = pd->dbuf + pd->dlen, .size = pd->dcap - pd->dlen };
                ret = ZSTD_decompressStream(pd->zstd, &out, &in);
                if (ZSTD_isError(ret))
                        return -EBADMSG;
                pd->dlen += out.pos;
                if (in.pos == in.size && out.pos < out.size)
                        return 0;
        }
}

/* Goes on with the next source (after the current one, round) that has
 * records left; DONE: the current one has none. False when none has. */
static bool source_rotate(struct perfdata *pd, bool done) {
        struct source *s = &pd->srcs[pd->cur_src];

        s->pos = pd->pos;
        s->done = s->done || done;
        for (size_t k = 1; k <= pd->n_srcs; k++) {
                size_t i = (pd->cur_src + k) % pd->n_srcs;

                if (pd->srcs[i].done)
                        continue;
                pd->srcs[pd->cur_src].zstd = pd->zstd;
                s = &pd->srcs[i];
                pd->zstd = TAKE_PTR(s->zstd);
                pd->cur_src = i;
                pd->rbase = s->base;
                pd->pos = s->pos;
                pd->data_end = s->end;
                pd->truncated = s->truncated;
                pd->src_bytes = 0;
                return true;
        }
        return false;
}

/* ---- a stream ---------------------------------------------------------- */

/* Whether the stream has bytes to read now (or its end), waiting up to
 * TIMEOUT_MS; the caller's wait hook first, when it would wait. */
bool stream_ready(struct perfdata *pd, int timeout_ms) {
        struct pollfd pfd = { .fd = pd->in_fd, .events = POLLIN };

        if (pd->in_eof)
                return true;
        if (poll(&pfd, 1, 0) > 0)
                return true;
        if (pd->wait)
                pd->wait(pd->wait_userdata);
        return timeout_ms != 0 && poll(&pfd, 1, timeout_ms) != 0;
}

/* Makes the NEED bytes at pd->pos readable (fewer only at the end of the
 * input), reading no more than is there: a live stream is never waited
 * on for bytes the next record does not need. What is before pd->pos is
 * dropped: nothing points there (records that wait in the queue are
 * copies, pd->stable is false for them). */
int stream_want(struct perfdata *pd, uint64_t need) {
        while (pd->win_off + pd->win_len - pd->pos < need && !pd->in_eof) {
                size_t drop = pd->win_hold ? 0 : (size_t) (pd->pos - pd->win_off);
                uint64_t want;
                ssize_t n;

                if (drop > 0) {
                        memmove(pd->win, pd->win + drop, pd->win_len - drop);
                        pd->win_len -= drop;
                        pd->win_off = pd->pos;
                }
                /* Room for what is held before pd->pos too (the header
                 * while stream_open() reads it): sized by NEED alone, a
                 * window filled to its end read 0 bytes, taken as the
                 * input's end (a header of 128 KiB and more failed). */
                want = (pd->pos - pd->win_off) + need + STREAM_READ;
                if (pd->win_cap < want) {
                        uint8_t *w;

                        /* Doubling: a file-mode perf.data is read whole. */
                        want = want > 2 * (uint64_t) pd->win_cap ? want : 2 * (uint64_t) pd->win_cap;
                        if (want > SIZE_MAX)
                                return -EFBIG;
                        w = realloc(pd->win, want);

                        if (!w)
                                return -ENOMEM;
                        pd->win = w;
                        pd->win_cap = want;
                }
                /* The caller's wait hook, when read() would wait. */
                (void) stream_ready(pd, 0);
                n = read(pd->in_fd, pd->win + pd->win_len, pd->win_cap - pd->win_len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        pd->in_eof = true;
                pd->win_len += (size_t) n;
        }
        pd->rbase = pd->win;
        pd->rbase_off = pd->win_off;
        pd->data_end = pd->win_off + pd->win_len;
        return 0;
}

/* Makes the whole record at pd->pos readable, its extra payload with it,
 * as far as the input holds it; a header that is no record is left to
 * the reader's checks. */
int stream_record(struct perfdata *pd) {
        struct perf_event_header h;
        uint64_t extra;
        int r;

        r = stream_want(pd, sizeof(h));
        if (r < 0 || pd->data_end - pd->pos < sizeof(h))
                return r;
        read_header(pd, pd->win + (pd->pos - pd->win_off), &h);
        if (h.size < sizeof(h))
                return 0;
        r = stream_want(pd, h.size);
        if (r < 0 || pd->data_end - pd->pos < h.size)
                return r;
        if (record_payload(pd, &h, pd->win + (pd->pos - pd->win_off), &extra) < 0 ||
            extra > STREAM_RECORD_MAX - h.size)
                return 0;
        return extra > 0 ? stream_want(pd, h.size + extra) : 0;
}

/* The next record in file order, COMPRESSED ones expanded; in a --threads
 * directory, from each file in turn as perf reads them. */
static int raw_next(struct perfdata *pd, const uint8_t **ret_p, struct perf_event_header *ret_h,
                    uint64_t *ret_offset, bool *ret_compressed) {
        for (;;) {
                struct perf_event_header h;
                const uint8_t *p;
                uint64_t left, extra;
                int r;

                if (pd->dpos < pd->dlen && pd->dlen - pd->dpos >= sizeof(h)) {
                        p = pd->dbuf + pd->dpos;
                        read_header(pd, p, &h);
                        if (h.size < sizeof(h))
                                return pd_fail(pd, -EBADMSG, pd->doff);
                        if (h.size <= pd->dlen - pd->dpos) {
                                pd->dpos += h.size;
                                *ret_p = p;
                                *ret_h = h;
                                *ret_offset = pd->doff;
                                *ret_compressed = true;
                                return 1;
                        }
                        /* The rest comes with the next COMPRESSED record. */
                }

                if (pd->n_srcs > 1 && pd->src_bytes >= DIR_READER_MAX_SIZE && pd->dpos >= pd->dlen)
                        source_rotate(pd, false);
                if (pd->stream) {
                        r = stream_record(pd);
                        if (r < 0)
                                return pd_fail(pd, r, pd->pos);
                }
                if (pd->pos >= pd->data_end) {
                        if (pd->dpos < pd->dlen)
                                return pd_fail(pd, -EBADMSG, pd->doff);
                        if (pd->truncated)
                                return pd_fail(pd, -EBADMSG, pd->pos);
                        if (pd->n_srcs > 1 && source_rotate(pd, true))
                                continue;
                        /* Records whole, but a feature section was damaged. */
                        if (pd->feature_damage)
                                return pd_fail(pd, -EBADMSG, pd->feature_damage);
                        return 0;
                }
                left = pd->data_end - pd->pos;
                if (left < sizeof(h))
                        return pd_fail(pd, -EBADMSG, pd->pos);
                p = pd->rbase + (pd->pos - pd->rbase_off);
                read_header(pd, p, &h);
                if (h.size < sizeof(h) || h.size > left)
                        return pd_fail(pd, -EBADMSG, pd->pos);
                r = record_payload(pd, &h, p, &extra);
                if (r < 0 || extra > left - h.size)
                        return pd_fail(pd, -EBADMSG, pd->pos);

                if (h.type == PERFDATA_RECORD_COMPRESSED || h.type == PERFDATA_RECORD_COMPRESSED2) {
                        const uint8_t *data = p + sizeof(h);
                        uint64_t n = h.size - sizeof(h);

                        if (h.type == PERFDATA_RECORD_COMPRESSED2) {
                                /* u64 data_size, then the data padded to 8 */
                                if (n < 8)
                                        return pd_fail(pd, -EBADMSG, pd->pos);
                                n = file_u64(pd, data);
                                data += 8;
                                if (n > h.size - sizeof(h) - 8u)
                                        return pd_fail(pd, -EBADMSG, pd->pos);
                        }
                        r = decompress(pd, data, n);
                        if (r < 0)
                                return pd_fail(pd, r, pd->pos);
                        pd->doff = pd->pos;
                        pd->pos += h.size;
                        pd->src_bytes += h.size;
                        continue;
                }
                if (pd->dpos < pd->dlen)
                        /* A record cut off at the end of the compressed data. */
                        return pd_fail(pd, -EBADMSG, pd->doff);

                *ret_p = p;
                *ret_h = h;
                *ret_offset = pd->pos;
                *ret_compressed = false;
                pd->pos += h.size + extra;
                pd->src_bytes += h.size + extra;
                return 1;
        }
}

/* Which event laid a kernel record out (P: the record as stored);
 * -EBADMSG when the record is too short to hold the id that says so. */
static int find_event(const struct perfdata *pd, const uint8_t *p, const struct perf_event_header *h,
                       const struct perfdata_event **ret_ev, const struct perfdata_event **ret_layout) {
        const struct perfdata_event *ev = NULL, *layout = NULL;
        uint64_t body = h->size - sizeof(*h);

        if (pd->n_events == 1)
                ev = layout = pd->events[0];
        else if (pd->n_events == 0 || pd->layout_bad)
                ;
        else if (h->type == PERF_RECORD_SAMPLE) {
                uint64_t at = 8 * (uint64_t) pd->sample_id_pos;

                if (body < at + 8)
                        return -EBADMSG;
                ev = layout = event_by_id(pd, file_u64(pd, p + sizeof(*h) + at));
        } else if (pd->trailer_id_pos > 0) {
                uint64_t back = 8 * (uint64_t) pd->trailer_id_pos, id;

                if (body < back)
                        return -EBADMSG;
                id = file_u64(pd, p + h->size - back);
                ev = layout = event_by_id(pd, id);
                /* perf's synthesized records (the tasks and maps that
                 * existed before recording) carry an id of 0 and the
                 * first event's trailer, zeroed (util/evlist.c
                 * evlist__event2evsel(), evlist__id_hdr_size()), whatever
                 * the other events' trailers are. */
                if (!layout && (id == 0 || pd->trailer_uniform))
                        layout = pd->events[0];
        } else
                layout = pd->events[0];         /* no trailer to lay out */
        *ret_ev = ev;
        *ret_layout = layout;
        return 0;
}

/* The next record in file order, in host order at an aligned address,
 * parsed (kernel records) or decoded (perf's own, into pd->user). */
int read_one(struct perfdata *pd, struct perfdata_record *ret, struct raw *raw) {
        const struct perfdata_event *ev = NULL, *layout = NULL;
        struct perf_event_header h;
        const uint8_t *p;
        uint64_t offset;
        bool compressed, user;
        int r;

        r = raw_next(pd, &p, &h, &offset, &compressed);
        if (r <= 0)
                return r;

        user = h.type >= PERFDATA_RECORD_USER_TYPE_START;
        if (!user && find_event(pd, p, &h, &ev, &layout) < 0)
                return pd_fail(pd, -EBADMSG, offset);

        /* A stream's window moves on: what waits is copied. */
        *raw = (struct raw) { .offset = offset, .compressed = compressed, .stable = !compressed && !pd->stream };
        if (pd->swap || (uintptr_t) p % 8 != 0) {
                struct perf_event_header *c = (struct perf_event_header *) pd->bounce;

                memcpy(c, p, h.size);
                *c = h;
                if (pd->swap && !user && layout) {
                        r = swap_record(c, &layout->attr, ev ? ev->format : NULL);
                        if (r < 0)
                                return pd_fail(pd, r, offset);
                }
                raw->h = c;
                raw->stable = false;
        } else
                raw->h = (const struct perf_event_header *) p;

        *ret = (struct perfdata_record) {
                .offset = offset,
                .header = raw->h,
                .compressed = compressed,
                .event = ev,
                .rec = { .type = h.type, .misc = h.misc },
        };
        if (user) {
                r = user_record_decode(&pd->user, raw->h, pd->swap);
                if (r == -ENOMEM)
                        return pd_fail(pd, r, offset);
                if (r < 0)
                        return pd_fail(pd, -EBADMSG, offset);
                ret->user = tree_get(&pd->user);
                return 1;
        }
        raw->layout = layout;
        return 1;
}

/* Parses kernel record PR (its header where it stays) with LAYOUT's attr
 * and finds its time (0: none, delivered where it stands). */
int parse_record(struct perfdata *pd, struct perfdata_record *pr, const struct perfdata_event *layout) {
        uint64_t t;
        int r;

        pr->time = 0;
        if (!layout)
                return 0;
        r = record_parse(&layout->attr, pr->header, &pr->rec);
        if (r < 0)
                return pd_fail(pd, r, pr->offset);
        pr->parsed = true;
        t = layout->attr.sample_type;
        if (pr->rec.type == PERF_RECORD_SAMPLE) {
                if (t & PERF_SAMPLE_TIME)
                        pr->time = pr->rec.sample.time;
        } else if (pr->rec.has_sid && (t & PERF_SAMPLE_TIME))
                pr->time = pr->rec.sid.time;
        return 0;
}


void perfdata_rewind(struct perfdata *pd) {
        /* What a stream gave is gone. */
        if (!pd || pd->stream)
                return;
        if (pd->n_srcs > 1) {
                pd->srcs[pd->cur_src].zstd = pd->zstd;
                for (size_t i = 0; i < pd->n_srcs; i++) {
                        pd->srcs[i].pos = pd->srcs[i].start;
                        pd->srcs[i].done = false;
                        if (i > 0 && pd->srcs[i].zstd)
                                ZSTD_initDStream(pd->srcs[i].zstd);
                }
                pd->zstd = TAKE_PTR(pd->srcs[0].zstd);
                pd->cur_src = 0;
                pd->rbase = pd->srcs[0].base;
                pd->data_end = pd->srcs[0].end;
                pd->truncated = pd->srcs[0].truncated;
        }
        pd->pos = pd->data_start;
        pd->src_bytes = 0;
        pd->dpos = pd->dlen = 0;
        if (pd->zstd)
                ZSTD_initDStream(pd->zstd);
        pd->error = 0;
        pd->error_offset = 0;
        pd->at_end = false;
        queue_clear(pd);
}

uint64_t perfdata_offset(const struct perfdata *pd) {
        if (!pd)
                return 0;
        return pd->error < 0 ? pd->error_offset : pd->pos;
}

int perfdata_offset_file(const struct perfdata *pd) {
        if (!pd || pd->n_srcs < 2 || pd->cur_src == 0)
                return -1;
        return (int) pd->srcs[pd->cur_src].n;
}
