/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "evmon/cleanup.h"
#include "evmon/flamegraph.h"

#include "cli.h"
#include "profile.pb-c.h"

/* profile --format pprof: the folded stacks as pprof's profile.proto
 * (github.com/google/pprof, proto/profile.proto), the format go tool
 * pprof, Grafana Pyroscope and speedscope read. protobuf-c (Debian's
 * libprotobuf-c) packs it from the .proto itself, so the wire format is
 * the library's, not ours to get right; zlib gzips it, as the .proto asks
 * of a file on disk. Each distinct frame name is one Function and one
 * Location (no addresses: the names are what folding kept); the comm is
 * the root frame, as in the folded lines. */

/* Distinct names → their index in the string table, by open addressing. */
struct names {
        char **strings;         /* the string table; [0] is "" */
        size_t n, cap;
        uint32_t *slots;        /* index + 1, 0 empty */
        size_t n_slots;
};

static uint64_t name_hash(const char *s) {
        uint64_t h = 1469598103934665603ULL;

        for (; *s; s++) {
                h ^= (unsigned char) *s;
                h *= 1099511628211ULL;
        }
        return h;
}

static int names_grow(struct names *t) {
        size_t n_slots = t->n_slots ? t->n_slots * 2 : 1024;
        uint32_t *slots = calloc(n_slots, sizeof(*slots));

        if (!slots)
                return -ENOMEM;
        for (size_t i = 0; i < t->n; i++) {
                size_t k = name_hash(t->strings[i]) & (n_slots - 1);

                while (slots[k])
                        k = (k + 1) & (n_slots - 1);
                slots[k] = (uint32_t) i + 1;
        }
        free(t->slots);
        t->slots = slots;
        t->n_slots = n_slots;
        return 0;
}

/* NAME's index in the string table (NAME is not copied: the flame owns
 * it, or it is a literal), or -ENOMEM. */
static int64_t names_index(struct names *t, const char *name) {
        size_t k;

        if ((t->n + 1) * 2 > t->n_slots && names_grow(t) < 0)
                return -ENOMEM;
        for (k = name_hash(name) & (t->n_slots - 1); t->slots[k]; k = (k + 1) & (t->n_slots - 1))
                if (strcmp(t->strings[t->slots[k] - 1], name) == 0)
                        return t->slots[k] - 1;
        if (t->n == t->cap) {
                size_t cap = t->cap ? t->cap * 2 : 256;
                char **grown = reallocarray(t->strings, cap, sizeof(*grown));

                if (!grown)
                        return -ENOMEM;
                t->strings = grown;
                t->cap = cap;
        }
        t->strings[t->n] = (char *) name;
        t->slots[k] = (uint32_t) ++t->n;
        return (int64_t) t->n - 1;
}

struct pprof {
        struct names names;
        Perftools__Profiles__Sample **samples;
        size_t n_samples, cap_samples;
        uint64_t *ids;          /* every sample's location ids, leaf first */
        size_t n_ids, cap_ids;
        int64_t *values;        /* every sample's count */
};

/* A sample per stack; functions and locations share ids: a name's
 * string index (0 is ""). Ids and values are kept as offsets into arrays
 * that grow, made pointers when all are in (profile_write_pprof()). */
static int pprof_stack(const char *const *frames, size_t n, uint64_t count, void *userdata) {
        struct pprof *p = userdata;
        Perftools__Profiles__Sample *s;

        if (p->n_samples == p->cap_samples) {
                size_t cap = p->cap_samples ? p->cap_samples * 2 : 256;
                Perftools__Profiles__Sample **grown = reallocarray(p->samples, cap, sizeof(*grown));
                int64_t *values;

                if (!grown)
                        return -ENOMEM;
                p->samples = grown;
                values = reallocarray(p->values, cap, sizeof(*values));
                if (!values)
                        return -ENOMEM;
                p->values = values;
                p->cap_samples = cap;
        }
        if (p->n_ids + n > p->cap_ids) {
                size_t cap = p->cap_ids ? p->cap_ids * 2 : 4096;
                uint64_t *grown;

                while (cap < p->n_ids + n)
                        cap *= 2;
                grown = reallocarray(p->ids, cap, sizeof(*grown));
                if (!grown)
                        return -ENOMEM;
                p->ids = grown;
                p->cap_ids = cap;
        }
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        perftools__profiles__sample__init(s);
        s->n_location_id = n;
        s->location_id = (uint64_t *) (uintptr_t) p->n_ids;
        s->n_value = 1;
        s->value = (int64_t *) (uintptr_t) p->n_samples;
        p->values[p->n_samples] = (int64_t) count;
        p->samples[p->n_samples++] = s;
        /* pprof's stacks are leaf first. */
        for (size_t i = 0; i < n; i++) {
                int64_t k = names_index(&p->names, frames[n - 1 - i]);

                if (k < 0)
                        return (int) k;
                p->ids[p->n_ids++] = (uint64_t) k;
        }
        return 0;
}

static void pprof_done(struct pprof *p) {
        for (size_t i = 0; i < p->n_samples; i++)
                free(p->samples[i]);
        free(p->samples);
        free(p->ids);
        free(p->values);
        free(p->names.strings);
        free(p->names.slots);
}

/* DATA gzipped to OUT; 0 or -errno. */
static int write_gzip(const uint8_t *data, size_t len, FILE *out) {
        z_stream z = {};
        uint8_t buf[1 << 16];
        int r;

        /* 15 + 16: a gzip header and trailer, not zlib's. */
        if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
                return -ENOMEM;
        z.next_in = (uint8_t *) data;
        z.avail_in = (uInt) len;
        do {
                z.next_out = buf;
                z.avail_out = sizeof(buf);
                r = deflate(&z, Z_FINISH);
                if (r == Z_STREAM_ERROR) {
                        deflateEnd(&z);
                        return -EIO;
                }
                if (fwrite(buf, 1, sizeof(buf) - z.avail_out, out) != sizeof(buf) - z.avail_out) {
                        deflateEnd(&z);
                        return errno > 0 ? -errno : -EIO;
                }
        } while (r != Z_STREAM_END);
        deflateEnd(&z);
        return 0;
}

int profile_write_pprof(const struct flame *f, FILE *out, int64_t time_ns, int64_t duration_ns) {
        _cleanup_(pprof_done) struct pprof p = {};
        Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
        Perftools__Profiles__ValueType type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
        Perftools__Profiles__ValueType *types[1] = { &type };
        _cleanup_(freep) Perftools__Profiles__Function *functions = NULL;
        _cleanup_(freep) Perftools__Profiles__Function **function_ptrs = NULL;
        _cleanup_(freep) Perftools__Profiles__Location *locations = NULL;
        _cleanup_(freep) Perftools__Profiles__Location **location_ptrs = NULL;
        _cleanup_(freep) Perftools__Profiles__Line *lines = NULL;
        _cleanup_(freep) Perftools__Profiles__Line **line_ptrs = NULL;
        _cleanup_(freep) uint8_t *packed = NULL;
        int64_t samples, count;
        size_t n;
        int r;

        /* String 0 is "", as the .proto requires. */
        if (names_index(&p.names, "") < 0 || (samples = names_index(&p.names, "samples")) < 0 ||
            (count = names_index(&p.names, "count")) < 0)
                return -ENOMEM;
        r = flame_foreach(f, pprof_stack, &p);
        if (r < 0)
                return r;
        /* The offsets made pointers, now that nothing moves. */
        for (size_t i = 0; i < p.n_samples; i++) {
                p.samples[i]->location_id = p.ids + (uintptr_t) p.samples[i]->location_id;
                p.samples[i]->value = p.values + (uintptr_t) p.samples[i]->value;
        }
        /* A function and a location for every name but "", "samples",
         * "count" (a frame of those names has one too: ids are string
         * indexes, and the three are used by frames only if named so). */
        n = p.names.n;
        functions = calloc(n, sizeof(*functions));
        function_ptrs = calloc(n, sizeof(*function_ptrs));
        locations = calloc(n, sizeof(*locations));
        location_ptrs = calloc(n, sizeof(*location_ptrs));
        lines = calloc(n, sizeof(*lines));
        line_ptrs = calloc(n, sizeof(*line_ptrs));
        if (!functions || !function_ptrs || !locations || !location_ptrs || !lines || !line_ptrs)
                return -ENOMEM;
        for (size_t i = 1; i < n; i++) {
                perftools__profiles__function__init(&functions[i - 1]);
                functions[i - 1].id = i;
                functions[i - 1].name = (int64_t) i;
                functions[i - 1].system_name = (int64_t) i;
                function_ptrs[i - 1] = &functions[i - 1];
                perftools__profiles__line__init(&lines[i - 1]);
                lines[i - 1].function_id = i;
                line_ptrs[i - 1] = &lines[i - 1];
                perftools__profiles__location__init(&locations[i - 1]);
                locations[i - 1].id = i;
                locations[i - 1].n_line = 1;
                locations[i - 1].line = &line_ptrs[i - 1];
                location_ptrs[i - 1] = &locations[i - 1];
        }
        type.type = samples;
        type.unit = count;
        prof.n_sample_type = 1;
        prof.sample_type = types;
        prof.n_sample = p.n_samples;
        prof.sample = p.samples;
        prof.n_function = n - 1;
        prof.function = function_ptrs;
        prof.n_location = n - 1;
        prof.location = location_ptrs;
        prof.n_string_table = n;
        prof.string_table = p.names.strings;
        prof.time_nanos = time_ns;
        prof.duration_nanos = duration_ns;
        packed = malloc(perftools__profiles__profile__get_packed_size(&prof) ?: 1);
        if (!packed)
                return -ENOMEM;
        return write_gzip(packed, perftools__profiles__profile__pack(&prof, packed), out);
}
