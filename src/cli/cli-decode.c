/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "evmon/cleanup.h"
#include "evmon/context.h"
#include "evmon/encode.h"
#include "evmon/encode-perf.h"
#include "evmon/encode-perfdata.h"
#include "evmon/flamegraph.h"
#include "evmon/human.h"
#include "evmon/io.h"
#include "evmon/jsonc.h"
#include "evmon/log.h"
#include "evmon/perfdata.h"

#include "cli.h"

/* evmonctl decode: a perf.data file as evmond's JSON lines. */

/* The file's first bytes again (standard input was read already: a file
 * there reads again from its start, a pipe not), or -errno. */
#define MIN(a, b) ((size_t) (a) < (size_t) (b) ? (size_t) (a) : (size_t) (b))

static ssize_t decode_head(const char *path, uint8_t *head, size_t size) {
        bool in = strcmp(path, "-") == 0;
        _cleanup_(closep) int fd = in ? -1 : open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (!in && fd < 0)
                return -errno;
        n = pread(in ? STDIN_FILENO : fd, head, size, 0);
        return n < 0 ? -errno : n;
}

static int decode_open_error(const char *path, int r) {
        const char *name = strcmp(path, "-") == 0 ? "standard input" : path;
        uint8_t head[128] = {};
        ssize_t n;

        if (r == -EPROTONOSUPPORT) {
                const char *why = NULL;

                n = decode_head(path, head, sizeof(head));
                if (n > 0)
                        why = perfdata_unsupported(head, (size_t) n);
                log_error("%s: %s is not read by evmonctl decode", name,
                        why ? why : "this perf.data variant");
        } else if (r == -EBADMSG) {
                n = decode_head(path, head, sizeof(head));
                if (n == 0)
                        log_error("%s is empty: no perf.data file (perf record -o FILE writes one)", name);
                else if (n < 0 && strcmp(path, "-") == 0)
                        /* A pipe: what was read is gone. */
                        log_error("standard input is not perf.data: it does not begin with perf's \"PERFILE2\" "
                                  "header, or its first records are damaged (perf record -o - ... | evmonctl "
                                  "decode - reads what perf writes)");
                else if (n > 0 && memcmp(head, "PERFILE2", MIN(n, 8)) != 0 && memcmp(head, "2ELIFREP", MIN(n, 8)) != 0)
                        log_error("%s is not a perf.data file: it does not begin with perf's \"PERFILE2\" "
                                  "(perf record -o FILE writes one, perf record -o - the pipe-mode data "
                                  "evmonctl decode - reads)", name);
                else
                        log_error("%s is not a well-formed perf.data file (its header or attrs are "
                                  "truncated or corrupt; evmonctl decode reads what perf record writes)", name);
        } else if (r == -EISDIR)
                log_error("%s is a directory without a \"data\" file: not the output of perf record "
                        "(a file, or with --threads a directory holding data and data.N)", name);
        else
                log_error("cannot read %s: %s", name, strerror(-r));
        return 1;
}

static int decode_terminal = -1;

/* A perf.data is anyone's to write: its comms and file names are valid
 * UTF-8 that the JSON passes raw, C1 controls among them (U+009B is
 * CSI). On a terminal they go out escaped, as watch --json does. */
static int decode_flush(struct jbuf *line) {
        if (decode_terminal < 0)
                decode_terminal = isatty(STDOUT_FILENO);
        if (line->len > 0 && decode_terminal) {
                human_put_json(stdout, line->data, line->len);
                if (fflush(stdout) == EOF)
                        return errno > 0 ? -errno : -EIO;
        } else if (line->len > 0 && fwrite(line->data, 1, line->len, stdout) != line->len)
                return errno > 0 ? -errno : -EIO;
        line->len = 0;
        return 0;
}

/* perfdata_next() waits for a live stream (perf record -o - | evmonctl
 * decode -): what came so far goes out first, so lines come as perf
 * writes, not when it exits. A failed write is found by the next. */
static void decode_wait(void *userdata) {
        struct jbuf *line = userdata;

        if (decode_flush(line) == 0)
                (void) fflush(stdout);
}

struct decode_events {
        const struct perfdata *pd;
        struct encoder **enc;           /* per event of the file */
        char **names;                   /* its wire name */
        size_t n;
};

static void decode_events_done(struct decode_events *d) {
        for (size_t i = 0; i < d->n; i++) {
                if (d->enc)
                        encoder_free(d->enc[i]);
                if (d->names)
                        free(d->names[i]);
        }
        free(d->enc);
        free(d->names);
}

static ssize_t decode_event_index(const struct decode_events *d, const struct perfdata_event *ev) {
        for (size_t i = 0; ev && i < d->n; i++)
                if (perfdata_event(d->pd, i) == ev)
                        return (ssize_t) i;
        return -1;
}

/* Names a read value's id (a group's members) after its event. */
static const char *decode_id_name(uint64_t id, void *userdata) {
        const struct decode_events *d = userdata;

        for (size_t i = 0; i < d->n; i++) {
                const struct perfdata_event *ev = perfdata_event(d->pd, i);

                for (size_t k = 0; k < ev->n_ids; k++)
                        if (ev->ids[k] == id)
                                return d->names[i];
        }
        return NULL;
}

/* An encoder per event: a tracepoint's fields from the format the file
 * carries, any other event's samples with every field in "sample". */
static int decode_events_new(const char *path, const struct perfdata *pd, struct decode_events *d) {
        d->pd = pd;
        d->n = perfdata_n_events(pd);
        d->enc = calloc(d->n ?: 1, sizeof(*d->enc));
        d->names = calloc(d->n ?: 1, sizeof(*d->names));
        if (!d->enc || !d->names)
                return -ENOMEM;
        for (size_t i = 0; i < d->n; i++) {
                const struct perfdata_event *ev = perfdata_event(pd, i);
                const struct encode_ids ids = { .name = decode_id_name, .userdata = d };
                int r;

                if (ev->name)
                        d->names[i] = strdup(ev->name);
                else if (asprintf(&d->names[i], "event%zu", i) < 0)
                        d->names[i] = NULL;
                if (!d->names[i])
                        return -ENOMEM;
                r = encoder_new(d->names[i], ev->format, &d->enc[i]);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        /* A format we cannot compile: its samples with
                         * their raw data, not decoded. */
                        log_error("%s: cannot decode the fields of %s: %s", path, d->names[i],
                                strerror(-r));
                        r = encoder_new(d->names[i], NULL, &d->enc[i]);
                        if (r < 0)
                                return r;
                }
                encoder_set_ids(d->enc[i], &ids);
        }
        return 0;
}

/* Opens PATH for decode in ORDER; 0, or the exit status after saying
 * why not. */
static int decode_open(const char *path, const char *name, const char *order, struct perfdata **ret) {
        _cleanup_(freep) char *fault = NULL;
        int r, o;

        o = perfdata_order_from_string(order);
        if (o < 0) {
                log_error("--order %s: use time, causal or file", order);
                return 2;
        }
        /* It would wait for perf.data typed in. */
        if (strcmp(path, "-") == 0 && isatty(STDIN_FILENO)) {
                log_error("decode -: standard input is a terminal; pipe perf's data in "
                          "(perf record -o - ... | evmonctl decode -) or name a FILE");
                return 2;
        }
        r = perfdata_open_full(path, ret, &fault);
        if (r < 0 && fault) {
                /* One file of a --threads directory: data.N's name is
                 * digits after "data.", safe to show as it is. */
                if (r == -EBADFD)
                        log_error("%s/%s is not a regular file (a FIFO, a device, or a link to one): not what "
                                  "perf record --threads writes; remove it or decode a copy of the directory",
                                  name, fault);
                else
                        log_error("cannot read %s/%s: %s", name, fault, strerror(-r));
                return 1;
        }
        if (r < 0)
                return decode_open_error(path, r);
        (void) perfdata_set_order(*ret, (enum perfdata_order) o);
        return 0;
}

/* ---- who and where: comm per thread, callchain names ---------------- */

/* The thread comms the file's COMM records gave, as perf script names a
 * sample's thread (open addressing by tid; grows, never shrinks). */
struct comm_slot {
        uint32_t tid;
        bool used;
        char comm[16];
};

struct decode_who {
        struct comm_slot *comms;
        size_t n_comms, cap_comms;
        struct ctx_symbols *symbols;    /* NULL: --no-symbols, or none to be had */
        struct ctx_frame *cframes;
        struct encode_frame *frames;
        size_t cap;
        uint64_t *unwound;              /* a DWARF-unwound callchain, UNWOUND_MAX entries */
};

/* The kernel's frames (up to 512) and the unwound user frames. */
#define UNWOUND_MAX (512 + 2 + 127)

static void decode_who_done(struct decode_who *w) {
        free(w->comms);
        ctx_symbols_free(w->symbols);
        free(w->cframes);
        free(w->frames);
        free(w->unwound);
}

static struct comm_slot *comm_slot(struct comm_slot *t, size_t cap, uint32_t tid) {
        size_t i = (tid * UINT32_C(2654435761)) & (cap - 1);

        while (t[i].used && t[i].tid != tid)
                i = (i + 1) & (cap - 1);
        return &t[i];
}

static int comm_set(struct decode_who *w, uint32_t tid, const char *comm) {
        struct comm_slot *c;

        if (2 * (w->n_comms + 1) > w->cap_comms) {
                size_t cap = w->cap_comms ? 2 * w->cap_comms : 1024;
                struct comm_slot *t = calloc(cap, sizeof(*t));

                if (!t)
                        return -ENOMEM;
                for (size_t i = 0; i < w->cap_comms; i++)
                        if (w->comms[i].used)
                                *comm_slot(t, cap, w->comms[i].tid) = w->comms[i];
                free(w->comms);
                w->comms = t;
                w->cap_comms = cap;
        }
        c = comm_slot(w->comms, w->cap_comms, tid);
        if (!c->used)
                w->n_comms++;
        c->used = true;
        c->tid = tid;
        /* The kernel's TASK_COMM_LEN, NUL-terminated whatever the file says. */
        snprintf(c->comm, sizeof(c->comm), "%s", comm);
        return 0;
}

static const char *comm_get(const struct decode_who *w, uint32_t tid) {
        const struct comm_slot *c;

        if (!w->cap_comms)
                return NULL;
        c = comm_slot(w->comms, w->cap_comms, tid);
        return c->used ? c->comm : NULL;
}

/* The running kernel's GNU build id from /sys/kernel/notes (ELF notes:
 * namesz, descsz, type, then name and desc, each padded to 4). */
static size_t running_kernel_build_id(uint8_t id[20]) {
        _cleanup_(closep) int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
        uint8_t buf[4096];
        ssize_t n;

        if (fd < 0 || (n = read(fd, buf, sizeof(buf))) <= 0)
                return 0;
        for (size_t o = 0; o + 12 <= (size_t) n;) {
                uint32_t namesz, descsz, type;
                size_t name_at = o + 12, desc_at;

                memcpy(&namesz, buf + o, 4);
                memcpy(&descsz, buf + o + 4, 4);
                memcpy(&type, buf + o + 8, 4);
                desc_at = name_at + ((namesz + 3u) & ~3u);
                if (namesz > sizeof(buf) || descsz > sizeof(buf) || desc_at + descsz > (size_t) n)
                        return 0;
                if (type == 3 && namesz == 4 && memcmp(buf + name_at, "GNU", 4) == 0 && descsz > 0) {
                        size_t len = descsz < 20 ? descsz : 20;

                        memcpy(id, buf + desc_at, len);
                        return len;
                }
                o = desc_at + ((descsz + 3u) & ~3u);
        }
        return 0;
}

static const struct perfdata_node *tree_child(const struct perfdata_tree *t, const struct perfdata_node *n,
                                              const char *key) {
        for (uint32_t i = n ? n->child : 0; i != 0 && i < t->n; i = t->nodes[i].next)
                if (t->nodes[i].key && strcmp(t->nodes[i].key, key) == 0)
                        return &t->nodes[i];
        return NULL;
}

/* Whether the file's kernel is this one, so that its kernel frames may be
 * named from this host's /proc/kallsyms: the build id perf recorded for
 * [kernel.kallsyms], or without one the release (uname -r). */
static bool kernel_is_running(const struct perfdata *pd) {
        struct perfdata_tree t = perfdata_header(pd);
        const struct perfdata_node *f, *ids, *v;
        uint8_t id[20];
        struct utsname u;
        size_t id_len;

        if (!t.nodes || !(f = tree_child(&t, &t.nodes[0], "features")))
                return false;
        ids = tree_child(&t, tree_child(&t, f, "build_id"), "build_ids");
        for (uint32_t i = ids ? ids->child : 0; i != 0 && i < t.n; i = t.nodes[i].next) {
                const struct perfdata_node *kind = tree_child(&t, &t.nodes[i], "kind");
                const struct perfdata_node *b = tree_child(&t, &t.nodes[i], "build_id");

                if (!kind || kind->kind != PERFDATA_NODE_STRING || kind->s.len != 6 ||
                    memcmp(kind->s.p, "kernel", 6) != 0 || !b || b->kind != PERFDATA_NODE_BYTES)
                        continue;
                id_len = running_kernel_build_id(id);
                return id_len > 0 && b->s.len >= id_len && memcmp(b->s.p, id, id_len) == 0;
        }
        v = tree_child(&t, tree_child(&t, f, "osrelease"), "value");
        return v && v->kind == PERFDATA_NODE_STRING && uname(&u) == 0 && strlen(u.release) == v->s.len &&
               memcmp(u.release, v->s.p, v->s.len) == 0;
}

/* The symbolizer for the file's processes: its mappings from its
 * records, this host's files where they are still the recorded ones. */
static void decode_who_symbols(struct decode_who *w, const struct perfdata *pd, const char *name) {
        struct ctx_symbols_opts o = { .recorded = true, .kernel = kernel_is_running(pd) };
        int r;

        r = ctx_symbols_new(&o, &w->symbols);
        if (r < 0 && o.kernel) {
                /* kallsyms shows addresses to CAP_SYSLOG only. */
                log_error("%s: kernel frames stay unnamed: /proc/kallsyms: %s", name,
                          r == -EPERM ? "its addresses are hidden (kptr_restrict: run as root)" : strerror(-r));
                o.kernel = false;
                r = ctx_symbols_new(&o, &w->symbols);
        }
        if (r < 0)
                log_error("%s: callchain frames stay unnamed: %s", name, strerror(-r));
}

/* What a side record tells: comms, mappings, forks and exits. */
static int decode_who_record(struct decode_who *w, const struct perf_record *r) {
        switch (r->type) {
        case PERF_RECORD_COMM:
                if (w->symbols && (r->misc & PERF_RECORD_MISC_COMM_EXEC))
                        ctx_symbols_forget(w->symbols, (pid_t) r->comm.pid);
                return r->comm.comm ? comm_set(w, r->comm.tid, r->comm.comm) : 0;
        case PERF_RECORD_MMAP2:
                /* A build id in place of device and inode names no file
                 * here that we could check. */
                if (w->symbols && (r->mmap2.prot & PROT_EXEC) && !(r->misc & PERF_RECORD_MISC_MMAP_BUILD_ID))
                        ctx_symbols_mmap(w->symbols, (pid_t) r->mmap2.pid, r->mmap2.addr, r->mmap2.len,
                                         r->mmap2.pgoff, makedev(r->mmap2.maj, r->mmap2.min), r->mmap2.ino,
                                         r->mmap2.filename);
                return 0;
        case PERF_RECORD_FORK:
                /* A thread's comm is its creator's until it sets one. */
                if (comm_get(w, r->task.ptid) && !comm_get(w, r->task.tid)) {
                        char comm[16];

                        snprintf(comm, sizeof(comm), "%s", comm_get(w, r->task.ptid));
                        if (comm_set(w, r->task.tid, comm) < 0)
                                return -ENOMEM;
                }
                if (w->symbols && r->task.pid != r->task.ppid)
                        ctx_symbols_fork(w->symbols, (pid_t) r->task.ppid, (pid_t) r->task.pid);
                return 0;
        default:
                return 0;
        }
}

/* A sample perf record --call-graph dwarf took (the kernel's callchain
 * without user frames, the user registers and stack): S with its user
 * frames unwound as perf script unwinds them (in *COPY), else S. */
static const struct perf_sample *decode_unwind(struct decode_who *w, const struct perf_event_attr *a,
                                               const struct perf_sample *s, struct perf_sample *copy) {
        uint64_t nr = s->callchain.nr;
        int n;

        if (!w->symbols || !a->exclude_callchain_user || !(s->sample_type & PERF_SAMPLE_CALLCHAIN) ||
            !(s->sample_type & PERF_SAMPLE_REGS_USER) || !(s->sample_type & PERF_SAMPLE_STACK_USER) ||
            !s->regs_user.regs || s->regs_user.abi != PERF_SAMPLE_REGS_ABI_64 || s->stack_user.dyn_size == 0 ||
            s->pid == 0)
                return s;
        if (!w->unwound && !(w->unwound = malloc(UNWOUND_MAX * sizeof(uint64_t))))
                return s;
        if (nr > 512)
                nr = 512;
        memcpy(w->unwound, s->callchain.ips, nr * sizeof(uint64_t));
        w->unwound[nr] = PERF_CONTEXT_USER;
        n = ctx_symbols_unwind(w->symbols, (pid_t) s->pid, s->regs_user.mask, s->regs_user.regs, s->stack_user.data,
                               (size_t) (s->stack_user.dyn_size < s->stack_user.size ? s->stack_user.dyn_size
                                                                                     : s->stack_user.size),
                               w->unwound + nr + 1, UNWOUND_MAX - nr - 1);
        if (n <= 0)
                return s;
        *copy = *s;
        copy->callchain.ips = w->unwound;
        copy->callchain.nr = nr + 1 + (uint64_t) n;
        return copy;
}

/* The frames of S's callchain, or NULL. */
static const struct encode_frame *decode_frames(struct decode_who *w, const struct perf_sample *s) {
        uint64_t nr = s->callchain.nr;

        if (!w->symbols || !(s->sample_type & PERF_SAMPLE_CALLCHAIN) || nr == 0)
                return NULL;
        if (nr > w->cap) {
                struct ctx_frame *cf = realloc(w->cframes, nr * sizeof(*cf));
                struct encode_frame *ef;

                if (!cf)
                        return NULL;
                w->cframes = cf;
                ef = realloc(w->frames, nr * sizeof(*ef));
                if (!ef)
                        return NULL;
                w->frames = ef;
                w->cap = nr;
        }
        (void) ctx_symbols_resolve(w->symbols, (pid_t) s->pid, s->callchain.ips, nr, w->cframes);
        for (uint64_t i = 0; i < nr; i++)
                w->frames[i] = (struct encode_frame) { w->cframes[i].sym, w->cframes[i].off, w->cframes[i].module,
                                                     w->cframes[i].note };
        return w->frames;
}

/* What decode left out, said at the end. */
struct decode_counts {
        uint64_t bad, unknown, unparsed;
};

/* Encodes record PR into LINE: 0 when written or left out (counted in
 * *C), -ENOMEM. */
static int decode_record(struct perfdata *pd, const struct decode_events *d, struct decode_who *w,
                         const struct perfdata_record *pr, int64_t offset, struct jbuf *line,
                         struct decode_counts *c) {
        ssize_t i = decode_event_index(d, pr->event);
        int r;

        if (pr->rec.type == PERF_RECORD_SAMPLE) {
                const struct perf_sample *s = &pr->rec.sample;
                struct encode_context ctx = { .ppid = -1, .uid = -1, .container_uid = -1 };
                struct perf_sample unwound;

                if (i < 0 || !pr->parsed) {
                        c->unknown++;
                        return 0;
                }
                s = decode_unwind(w, &pr->event->attr, s, &unwound);
                ctx.comm = (s->sample_type & PERF_SAMPLE_TID) ? comm_get(w, s->tid) : NULL;
                r = encode_event_ext(line, d->enc[i], s, offset, ctx.comm ? &ctx : NULL, decode_frames(w, s));
                if (r == -EBADMSG) {
                        c->bad++;
                        return 0;
                }
                return r;
        }
        if (pr->rec.type < PERFDATA_RECORD_USER_TYPE_START && !pr->parsed) {
                /* Its id names no event of the file, whose events lay the
                 * sample_id out differently: nothing tells where its body
                 * ends. Counted, not guessed at. */
                c->unparsed++;
                return 0;
        }
        if (pr->rec.type < PERFDATA_RECORD_USER_TYPE_START && decode_who_record(w, &pr->rec) < 0)
                return -ENOMEM;
        if (pr->rec.type == PERF_RECORD_LOST) {
                const struct perf_event_attr *a = pr->event ? &pr->event->attr : &perfdata_event(pd, 0)->attr;
                int cpu = pr->rec.has_sid && (a->sample_type & PERF_SAMPLE_CPU) ? (int) pr->rec.sid.cpu : -1;

                return encode_lost(line, cpu, pr->rec.lost.lost);
        }
        if (!arg_all)
                return 0;
        if (pr->rec.type >= PERFDATA_RECORD_USER_TYPE_START)
                return encode_perfdata_user(line, pr);
        /* perf's synthesized records carry no id: laid out by the first
         * event (perfdata.c), named by none. */
        const struct perfdata_event *layout = pr->event ?: perfdata_event(pd, 0);
        const struct encode_record_opts ro = {
                .sample_type = layout ? layout->attr.sample_type : 0,
                .event = i >= 0 ? d->names[i] : NULL,
                .realtime_offset_ns = offset,
                .ids = { .name = decode_id_name, .userdata = (void *) d },
        };
        return encode_record(line, pr->header, &pr->rec, &ro);
}

/* Says where reading stopped (R, what perfdata_next() returned) and what
 * was left out; the exit status. */
static int decode_report(struct perfdata *pd, const char *name, int r, const struct decode_counts *c) {
        int status = 0;

        if (r < 0) {
                char file[32] = "file";

                if (perfdata_pipe(pd))
                        strcpy(file, "stream");
                else if (perfdata_offset_file(pd) >= 0)
                        snprintf(file, sizeof(file), "file data.%d", perfdata_offset_file(pd));
                log_error("%s: %s at byte %" PRIu64 " of the %s; stopped there, after every "
                        "record before it", name,
                        r == -EOPNOTSUPP ? "a sample with fields newer than this evmonctl" :
                        r == -EBADMSG ? "damaged or truncated data (a malformed record or section)" : strerror(-r),
                        perfdata_offset(pd), file);
                status = 1;
        }
        if (c->bad > 0)
                log_error("%s: %" PRIu64 " samples did not decode with their event's format", name, c->bad);
        if (c->unknown > 0)
                log_error("%s: %" PRIu64 " samples name no event of the file (unknown sample id)", name, c->unknown);
        if (c->unparsed > 0)
                log_error("%s: %" PRIu64 " other records name no event of the file (unknown id): left out",
                        name, c->unparsed);
        return status;
}

/* decode --folded: the comm of each thread as its COMM records name it
 * (perf script's comm), and the stacks folded. */
struct decode_fold {
        struct flame *flame;
        json_object *comms;     /* "tid" → comm */
        uint64_t samples, no_callchain, full;
};

/* Folds sample record PR (its line encoded into LINE, then dropped), or
 * takes a thread's comm; 0 or -ENOMEM. */
static int decode_fold_record(struct perfdata *pd, const struct decode_events *d, struct decode_who *w,
                              const struct perfdata_record *pr, int64_t offset, struct jbuf *line,
                              struct decode_fold *fold, struct decode_counts *c) {
        char tid[16];
        int r;

        /* The mappings and comms the frames are named by. */
        if (pr->rec.type != PERF_RECORD_SAMPLE && pr->parsed && pr->rec.type < PERFDATA_RECORD_USER_TYPE_START &&
            decode_who_record(w, &pr->rec) < 0)
                return -ENOMEM;

        if (pr->rec.type == PERF_RECORD_COMM && pr->parsed && pr->rec.comm.comm) {
                json_object *s = json_object_new_string(pr->rec.comm.comm);

                snprintf(tid, sizeof(tid), "%" PRIu32, pr->rec.comm.tid);
                if (!s || json_object_object_add(fold->comms, tid, s) < 0)
                        return -ENOMEM;
                return 0;
        }
        if (pr->rec.type == PERF_RECORD_SAMPLE) {
                json_object *comm = NULL;
                bool callchain;
                size_t start = line->len;

                r = decode_record(pd, d, w, pr, offset, line, c);
                if (r < 0 || line->len == start)
                        return r;
                if (pr->event && (pr->event->attr.sample_type & PERF_SAMPLE_TID)) {
                        snprintf(tid, sizeof(tid), "%" PRIu32, pr->rec.sample.tid);
                        json_object_object_get_ex(fold->comms, tid, &comm);
                }
                /* The same line decode writes, so that the stacks are
                 * named as its lines name them. */
                fold->samples++;
                r = profile_fold_line(fold->flame, line->data + start, line->len - start, NULL,
                                      comm ? json_object_get_string(comm) : NULL, &callchain);
                line->len = start;
                if (r == -EBADMSG) {
                        c->bad++;
                        return 0;
                }
                if (r == -ENOMEM)
                        return r;
                if (r == -E2BIG)
                        fold->full++;
                if (!callchain)
                        fold->no_callchain++;
        }
        return 0;
}

static void decode_fold_done(struct decode_fold *fold) {
        flame_free(fold->flame);
        json_object_put(fold->comms);
}

/* decode --folded: the stacks of PD's samples, folded; the exit status. */
static int decode_folded(struct perfdata *pd, const char *name, const struct decode_events *d, struct decode_who *w,
                         int64_t offset) {
        _cleanup_(decode_fold_done) struct decode_fold fold = {};
        _cleanup_(jbuf_donep) struct jbuf line = {};
        struct decode_counts counts = {};
        struct perfdata_record pr;
        int r, k;

        k = profile_check_format(arg_format ?: "folded");
        if (k != 0)
                return k;
        fold.comms = json_object_new_object();
        if (!fold.comms || flame_new(&fold.flame) < 0)
                return log_oom_cli();
        while ((r = perfdata_next(pd, &pr)) > 0)
                if (decode_fold_record(pd, d, w, &pr, offset, &line, &fold, &counts) < 0)
                        return log_oom_cli();
        if (fold.samples > 0 && fold.no_callchain == fold.samples)
                log_error("%s: its samples carry no callchain (perf record -g records them): each stack is "
                          "the sampled address alone", name);
        if (fold.full > 0)
                log_error("%s: %" PRIu64 " samples left out: more than %u distinct frames", name, fold.full,
                          FLAME_NODES_MAX);
        k = profile_write(fold.flame, arg_format ?: "folded", "Flame Graph", NULL, 0, 0);
        return decode_report(pd, name, r, &counts) ?: k;
}

int cmd_decode(const char *path, const char *order) {
        _cleanup_(perfdata_freep) struct perfdata *pd = NULL;
        _cleanup_(jbuf_donep) struct jbuf line = {};
        _cleanup_(decode_events_done) struct decode_events d = {};
        _cleanup_(decode_who_done) struct decode_who who = {};
        struct decode_counts counts = {};
        struct perfdata_clock clock;
        struct perfdata_record pr;
        int64_t offset = 0;
        int r, k;
        const char *name = strcmp(path, "-") == 0 ? "standard input" : path;

        r = decode_open(path, name, order, &pd);
        if (r != 0)
                return r;
        if (perfdata_clock(pd, &clock) >= 0)
                offset = (int64_t) (clock.wall_ns - clock.clock_ns);
        else if (!arg_folded)
                log_error("%s has no clock reference (HEADER_CLOCK_DATA, written by "
                        "perf record -k CLOCK): \"time\" is \"ts\" counted from 1970, not wall-clock time", name);
        if (decode_events_new(name, pd, &d) < 0)
                return log_oom_cli();
        if (!arg_no_symbols)
                decode_who_symbols(&who, pd, name);
        if (arg_folded)
                return decode_folded(pd, name, &d, &who, offset);

        /* Full buffering: this is a batch job; a stream is flushed
         * whenever the reader waits for it. */
        setvbuf(stdout, NULL, _IOFBF, 1 << 16);
        perfdata_set_wait(pd, decode_wait, &line);
        if (encode_perfdata_header(&line, pd) < 0)
                return log_oom_cli();
        while ((r = perfdata_next(pd, &pr)) > 0) {
                if (decode_record(pd, &d, &who, &pr, offset, &line, &counts) < 0)
                        return log_oom_cli();
                if (line.len >= 1 << 16 && (k = decode_flush(&line)) < 0)
                        return stdout_failed(-k);       /* quiet when the reader went away */
        }
        if ((k = decode_flush(&line)) < 0)
                return stdout_failed(-k);
        if (fflush(stdout) == EOF)
                return stdout_failed(errno > 0 ? errno : EIO);
        return decode_report(pd, name, r, &counts);
}
