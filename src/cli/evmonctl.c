/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli/human.h"
#include "evmon/cleanup.h"
#include "evmon/io.h"
#include "evmon/perfdata.h"
#include "evmon/tracefs.h"
/* decode writes the daemon's own event lines: its encoder is in the
 * same static library. */
#include "daemon/encode.h"

#define DEFAULT_SOCKET "/run/evmon/evmond.sock"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

static const char *arg_socket;
static const char *arg_tracefs;
static int arg_json = -1;  /* -1: JSON when stdout is not a terminal */
static bool arg_all;

static void help(void) {
        printf("Usage: evmonctl COMMAND [OPTIONS]\n"
               "\n"
               "Commands that talk to evmond:\n"
               "  watch [EVENT...]       print events as they happen (all, or those named;\n"
               "                         patterns such as 'syscalls:*' work)\n"
               "  status                 events with counts, lost per CPU, clients\n"
               "  reload                 make evmond read its config again; exits 1 when\n"
               "                         the new config is refused (the old one stays)\n"
               "\n"
               "Commands that read tracefs directly (no daemon needed):\n"
               "  list                   the events this kernel has, as SYSTEM:NAME\n"
               "  describe SYSTEM:NAME   one event's decoder as JSON\n"
               "\n"
               "Commands that read files:\n"
               "  decode FILE            print the tracepoint samples of a perf.data file\n"
               "                         (perf record -o FILE) as evmond's JSON event lines,\n"
               "                         decoded with the formats the file carries, and a\n"
               "                         {\"type\":\"lost\"} line per PERF_RECORD_LOST; in file\n"
               "                         order (per CPU buffer, not sorted by time). \"time\"\n"
               "                         is wall-clock only when the file has a clock\n"
               "                         reference (perf record -k mono); otherwise it is\n"
               "                         \"ts\" counted from 1970 (offset 0), as nothing in\n"
               "                         the file relates perf's clock to the wall clock.\n"
               "                         Not read: pipe-mode output, compressed (-z) data\n"
               "\n"
               "Options:\n"
               "  -s, --socket PATH      evmond's socket (default $EVMON_SOCKET or %s)\n"
               "  -t, --tracefs DIR      tracefs directory (default: from /proc/mounts)\n"
               "  -j, --json             JSON lines even on a terminal\n"
               "      --all              decode: also one JSON line per other record\n"
               "                         (MMAP2, COMM, FINISHED_ROUND, ...) with its fields\n"
               "  -h, --help             show this help\n",
               DEFAULT_SOCKET);
}

static int connect_daemon(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *path = arg_socket ? arg_socket : getenv("EVMON_SOCKET");
        int fd;

        if (!path)
                path = DEFAULT_SOCKET;
        if (strlen(path) >= sizeof(sa.sun_path)) {
                fprintf(stderr, "evmonctl: socket path too long: %s\n", path);
                return -ENAMETOOLONG;
        }
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int r = -errno;
                fprintf(stderr, "evmonctl: cannot connect to evmond at %s: %s%s\n", path, strerror(errno),
                        errno == EACCES ? " (are you in the socket's group?)" :
                        errno == ENOENT || errno == ECONNREFUSED ? " (is evmond running? `systemctl status evmond`)" : "");
                close(fd);
                return r;
        }
        return fd;
}

static int send_line(int fd, const char *line) {
        return loop_write(fd, line, strlen(line));
}

/* Reads lines from FD into a growing buffer and calls FN for each; stops
 * when FN returns non-zero (its value is returned) or at EOF (0). */
static int read_lines(int fd, int (*fn)(const char *line, size_t len, void *ud), void *ud) {
        static char buf[1 << 20];
        size_t len = 0;

        for (;;) {
                ssize_t n = read(fd, buf + len, sizeof(buf) - len);
                size_t start = 0;

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        return 0;
                len += (size_t) n;
                for (size_t i = 0; i < len; i++)
                        if (buf[i] == '\n') {
                                int r = fn(buf + start, i - start + 1, ud);
                                if (r != 0)
                                        return r;
                                start = i + 1;
                        }
                /* Everything one read() gave goes out before we wait for
                 * more: big writes under load, no delay on a quiet system. */
                if (fflush(stdout) == EOF)
                        return errno > 0 ? -errno : -EIO;
                memmove(buf, buf + start, len - start);
                len -= start;
                if (len == sizeof(buf))
                        return -E2BIG;
        }
}

static int on_watch_line(const char *line, size_t len, void *ud) {
        _cleanup_(json_object_putp) json_object *o = NULL;

        if (arg_json) {
                if (fwrite(line, 1, len, stdout) != len)
                        return -EPIPE;
                return 0;
        }
        o = json_tokener_parse(line);
        if (o)
                human_print(stdout, o);
        fflush(stdout);
        return 0;
}

static int cmd_watch(char **events) {
        _cleanup_(closep) int fd = -1;
        int r;

        if (arg_json < 0)
                arg_json = !isatty(STDOUT_FILENO);
        fd = connect_daemon();
        if (fd < 0)
                return 1;
        if (events && *events) {
                _cleanup_(json_object_putp) json_object *o = json_object_new_object();
                json_object *a = json_object_new_array();
                _cleanup_(freep) char *line = NULL;

                json_object_object_add(o, "type", json_object_new_string("subscribe"));
                for (char **e = events; *e; e++)
                        json_object_array_add(a, json_object_new_string(*e));
                json_object_object_add(o, "events", a);
                if (asprintf(&line, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)) < 0)
                        return 1;
                if (send_line(fd, line) < 0)
                        return 1;
        }
        /* Full buffering on a pipe: lines reach the reader in big writes. */
        if (arg_json)
                setvbuf(stdout, NULL, _IOFBF, 1 << 16);
        r = read_lines(fd, on_watch_line, NULL);
        fflush(stdout);
        if (r < 0 && r != -EPIPE) {
                fprintf(stderr, "evmonctl: reading from evmond failed: %s\n", strerror(-r));
                return 1;
        }
        return 0;
}

struct request {
        const char *type;
        int status;
};

static int on_reply_line(const char *line, size_t len, void *ud) {
        struct request *req = ud;
        _cleanup_(json_object_putp) json_object *o = json_tokener_parse(line);
        json_object *t;

        if (!o || !json_object_object_get_ex(o, "type", &t))
                return 0;
        if (strcmp(json_object_get_string(t), "error") == 0) {
                json_object *e;
                json_object_object_get_ex(o, "error", &e);
                fprintf(stderr, "evmonctl: evmond says: %s\n", json_object_get_string(e));
                req->status = 1;
                return 1;
        }
        if (strcmp(json_object_get_string(t), req->type) != 0)
                return 0;
        puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
        {
                json_object *ok;
                if (json_object_object_get_ex(o, "ok", &ok) && !json_object_get_boolean(ok))
                        req->status = 1;
        }
        return 1;
}

static int cmd_request(const char *type) {
        _cleanup_(closep) int fd = -1;
        struct request req = { .type = type };
        char line[64];
        int r;

        fd = connect_daemon();
        if (fd < 0)
                return 1;
        snprintf(line, sizeof(line), "{\"type\":\"%s\"}\n", type);
        if (send_line(fd, line) < 0)
                return 1;
        r = read_lines(fd, on_reply_line, &req);
        if (r <= 0) {
                fprintf(stderr, "evmonctl: evmond closed the connection without answering \"%s\"\n", type);
                return 1;
        }
        return req.status;
}

static int open_tracefs(struct tracefs **ret) {
        int r = tracefs_open(arg_tracefs, ret);
        if (r < 0)
                fprintf(stderr, "evmonctl: cannot open tracefs%s%s: %s%s\n", arg_tracefs ? " at " : "",
                        arg_tracefs ? arg_tracefs : "", strerror(-r),
                        r == -EACCES || r == -EPERM ? " (run as root)" : "");
        return r;
}

static int cmd_list(void) {
        _cleanup_(tracefs_freep) struct tracefs *t = NULL;
        _cleanup_(strv_freep) char **names = NULL;
        int r;

        if (open_tracefs(&t) < 0)
                return 1;
        r = tracefs_list_events(t, &names);
        if (r < 0) {
                fprintf(stderr, "evmonctl: cannot list events in %s: %s\n", tracefs_path(t), strerror(-r));
                return 1;
        }
        for (char **n = names; *n; n++)
                puts(*n);
        return 0;
}

static int cmd_describe(const char *event) {
        _cleanup_(tracefs_freep) struct tracefs *t = NULL;
        _cleanup_(format_freep) struct format *f = NULL;
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_(freep) char *system = NULL;
        const char *colon = strchr(event, ':');
        json_object *fields;
        int r;

        if (!colon || colon == event || !colon[1]) {
                fprintf(stderr, "evmonctl: \"%s\" is not SYSTEM:NAME (for example sched:sched_process_exec)\n", event);
                return 2;
        }
        system = strndup(event, colon - event);
        if (!system || open_tracefs(&t) < 0)
                return 1;
        r = tracefs_event_format(t, system, colon + 1, &f);
        if (r < 0) {
                fprintf(stderr, "evmonctl: %s: %s\n", event,
                        r == -ENOENT ? "no such event in this kernel (`evmonctl list` shows them)" : strerror(-r));
                return 1;
        }
        o = json_object_new_object();
        fields = json_object_new_array();
        json_object_object_add(o, "event", json_object_new_string(event));
        json_object_object_add(o, "id", json_object_new_int64(f->id));
        for (size_t i = 0; i < f->n_fields; i++) {
                const struct format_field *ff = &f->fields[i];
                json_object *e = json_object_new_object();

                json_object_object_add(e, "name", json_object_new_string(ff->name));
                json_object_object_add(e, "type", json_object_new_string(ff->type));
                json_object_object_add(e, "offset", json_object_new_int64(ff->offset));
                json_object_object_add(e, "size", json_object_new_int64(ff->size));
                /* The sign the decoder gives the value: it follows the
                 * declared type (int in an 8-byte syscall slot is signed),
                 * and only numbers have one (kernels disagree about the
                 * signed: of a __data_loc char[]). */
                json_object_object_add(e, "signed", json_object_new_boolean(
                        (ff->kind == FIELD_INT || ff->kind == FIELD_ARRAY || ff->kind == FIELD_DYN_ARRAY) && ff->elem_signed));
                json_object_object_add(e, "kind", json_object_new_string(field_kind_to_string(ff->kind)));
                if (ff->common)
                        json_object_object_add(e, "common", json_object_new_boolean(true));
                json_object_array_add(fields, e);
        }
        json_object_object_add(o, "fields", fields);
        puts(json_object_to_json_string_ext(o, (isatty(STDOUT_FILENO) ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
                                                : JSON_C_TO_STRING_PLAIN) | JSON_C_TO_STRING_NOSLASHESCAPE));
        return 0;
}

/* ---- decode: perf.data files ------------------------------------------ */

static int log_oom_cli(void) {
        fprintf(stderr, "evmonctl: out of memory\n");
        return 1;
}

static void jbuf_donep(struct jbuf *b) {
        jbuf_done(b);
}

static void json_add_u64(json_object *o, const char *key, uint64_t v) {
        json_object_object_add(o, key, json_object_new_uint64(v));
}

static void json_add_hex(json_object *o, const char *key, uint64_t v) {
        char s[24];

        snprintf(s, sizeof(s), "0x%" PRIx64, v);
        json_object_object_add(o, key, json_object_new_string(s));
}

static void json_add_bytes_hex(json_object *o, const char *key, const uint8_t *p, size_t n) {
        char s[2 * 64 + 1] = "";

        if (n > 64)
                n = 64;
        for (size_t i = 0; i < n; i++)
                snprintf(s + 2 * i, 3, "%02x", p[i]);
        json_object_object_add(o, key, json_object_new_string(s));
}

static void json_add_str(json_object *o, const char *key, const char *s) {
        json_object_object_add(o, key, json_object_new_string(s));
}

static void json_add_read(json_object *o, const struct perf_read *rd) {
        json_object *a = json_object_new_array();

        if (rd->read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
                json_add_u64(o, "time_enabled", rd->time_enabled);
        if (rd->read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
                json_add_u64(o, "time_running", rd->time_running);
        for (uint64_t i = 0; i < rd->nr; i++) {
                struct perf_read_value v;
                json_object *e = json_object_new_object();

                if (perf_read_get(rd, i, &v) < 0)
                        break;
                json_add_u64(e, "value", v.value);
                if (rd->read_format & PERF_FORMAT_ID)
                        json_add_u64(e, "id", v.id);
                if (rd->read_format & PERF_FORMAT_LOST)
                        json_add_u64(e, "lost", v.lost);
                json_object_array_add(a, e);
        }
        json_object_object_add(o, "values", a);
}

/* The generic view of a sample that has no tracepoint format to decode. */
static void json_add_sample(json_object *o, const struct perf_sample *s) {
        uint64_t t = s->sample_type;

        if (t & PERF_SAMPLE_IP)
                json_add_hex(o, "ip", s->ip);
        if (t & PERF_SAMPLE_TID) {
                json_add_u64(o, "pid", s->pid);
                json_add_u64(o, "tid", s->tid);
        }
        if (t & PERF_SAMPLE_TIME)
                json_add_u64(o, "time", s->time);
        if (t & PERF_SAMPLE_ADDR)
                json_add_hex(o, "addr", s->addr);
        if (t & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER))
                json_add_u64(o, "id", s->id);
        if (t & PERF_SAMPLE_STREAM_ID)
                json_add_u64(o, "stream_id", s->stream_id);
        if (t & PERF_SAMPLE_CPU)
                json_add_u64(o, "cpu", s->cpu);
        if (t & PERF_SAMPLE_PERIOD)
                json_add_u64(o, "period", s->period);
        if (t & PERF_SAMPLE_READ)
                json_add_read(o, &s->read);
        if (t & PERF_SAMPLE_CALLCHAIN)
                json_add_u64(o, "callchain_nr", s->callchain.nr);
        if (t & PERF_SAMPLE_RAW)
                json_add_u64(o, "raw_size", s->raw.size);
        if (t & PERF_SAMPLE_BRANCH_STACK)
                json_add_u64(o, "branch_nr", s->branch_stack.nr);
        if (t & PERF_SAMPLE_STACK_USER)
                json_add_u64(o, "stack_user_size", s->stack_user.size);
        if (t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
                json_add_u64(o, "weight", s->weight);
        if (t & PERF_SAMPLE_DATA_SRC)
                json_add_hex(o, "data_src", s->data_src);
        if (t & PERF_SAMPLE_TRANSACTION)
                json_add_hex(o, "transaction", s->transaction);
        if (t & PERF_SAMPLE_PHYS_ADDR)
                json_add_hex(o, "phys_addr", s->phys_addr);
        if (t & PERF_SAMPLE_CGROUP)
                json_add_u64(o, "cgroup", s->cgroup);
        if (t & PERF_SAMPLE_DATA_PAGE_SIZE)
                json_add_u64(o, "data_page_size", s->data_page_size);
        if (t & PERF_SAMPLE_CODE_PAGE_SIZE)
                json_add_u64(o, "code_page_size", s->code_page_size);
        if (t & PERF_SAMPLE_AUX)
                json_add_u64(o, "aux_size", s->aux.size);
}

/* One line for a record that is not a decoded tracepoint sample: its type
 * and every field record_parse() gave. */
static json_object *record_to_json(const struct perfdata_record *pr) {
        const struct perf_record *r = &pr->rec;
        const char *name = perfdata_record_type_to_string(r->type);
        json_object *o = json_object_new_object();

        json_add_str(o, "type", "record");
        json_add_str(o, "record", name ? name : "unknown");
        json_add_u64(o, "record_type", r->type);
        json_add_u64(o, "offset", pr->offset);
        json_add_u64(o, "size", pr->header->size);
        json_add_u64(o, "misc", r->misc);
        if (pr->event && pr->event->name)
                json_add_str(o, "event", pr->event->name);
        if (!pr->parsed) {
                if (r->type < PERFDATA_RECORD_USER_TYPE_START)
                        json_object_object_add(o, "unparsed", json_object_new_boolean(true));
                return o;
        }

        switch (r->type) {
        case PERF_RECORD_SAMPLE:
                json_add_sample(o, &r->sample);
                break;
        case PERF_RECORD_MMAP:
                json_add_u64(o, "pid", r->mmap.pid);
                json_add_u64(o, "tid", r->mmap.tid);
                json_add_hex(o, "addr", r->mmap.addr);
                json_add_u64(o, "len", r->mmap.len);
                json_add_u64(o, "pgoff", r->mmap.pgoff);
                json_add_str(o, "filename", r->mmap.filename);
                break;
        case PERF_RECORD_MMAP2:
                json_add_u64(o, "pid", r->mmap2.pid);
                json_add_u64(o, "tid", r->mmap2.tid);
                json_add_hex(o, "addr", r->mmap2.addr);
                json_add_u64(o, "len", r->mmap2.len);
                json_add_u64(o, "pgoff", r->mmap2.pgoff);
                if (r->mmap2.has_build_id)
                        json_add_bytes_hex(o, "build_id", r->mmap2.build_id, r->mmap2.build_id_size);
                else {
                        json_add_u64(o, "maj", r->mmap2.maj);
                        json_add_u64(o, "min", r->mmap2.min);
                        json_add_u64(o, "ino", r->mmap2.ino);
                        json_add_u64(o, "ino_generation", r->mmap2.ino_generation);
                }
                json_add_u64(o, "prot", r->mmap2.prot);
                json_add_u64(o, "flags", r->mmap2.flags);
                json_add_str(o, "filename", r->mmap2.filename);
                break;
        case PERF_RECORD_LOST:
                json_add_u64(o, "id", r->lost.id);
                json_add_u64(o, "lost", r->lost.lost);
                break;
        case PERF_RECORD_COMM:
                json_add_u64(o, "pid", r->comm.pid);
                json_add_u64(o, "tid", r->comm.tid);
                json_add_str(o, "comm", r->comm.comm);
                json_object_object_add(o, "exec", json_object_new_boolean(r->misc & PERF_RECORD_MISC_COMM_EXEC));
                break;
        case PERF_RECORD_EXIT:
        case PERF_RECORD_FORK:
                json_add_u64(o, "pid", r->task.pid);
                json_add_u64(o, "ppid", r->task.ppid);
                json_add_u64(o, "tid", r->task.tid);
                json_add_u64(o, "ptid", r->task.ptid);
                json_add_u64(o, "time", r->task.time);
                break;
        case PERF_RECORD_THROTTLE:
        case PERF_RECORD_UNTHROTTLE:
                json_add_u64(o, "time", r->throttle.time);
                json_add_u64(o, "id", r->throttle.id);
                json_add_u64(o, "stream_id", r->throttle.stream_id);
                break;
        case PERF_RECORD_READ:
                json_add_u64(o, "pid", r->read.pid);
                json_add_u64(o, "tid", r->read.tid);
                json_add_read(o, &r->read.values);
                break;
        case PERF_RECORD_AUX:
                json_add_u64(o, "aux_offset", r->aux.aux_offset);
                json_add_u64(o, "aux_size", r->aux.aux_size);
                json_add_u64(o, "flags", r->aux.flags);
                break;
        case PERF_RECORD_ITRACE_START:
                json_add_u64(o, "pid", r->itrace_start.pid);
                json_add_u64(o, "tid", r->itrace_start.tid);
                break;
        case PERF_RECORD_LOST_SAMPLES:
                json_add_u64(o, "lost", r->lost_samples.lost);
                break;
        case PERF_RECORD_SWITCH_CPU_WIDE:
                json_add_u64(o, "next_prev_pid", r->switch_cpu_wide.next_prev_pid);
                json_add_u64(o, "next_prev_tid", r->switch_cpu_wide.next_prev_tid);
                __attribute__((fallthrough));
        case PERF_RECORD_SWITCH:
                json_object_object_add(o, "out", json_object_new_boolean(r->misc & PERF_RECORD_MISC_SWITCH_OUT));
                break;
        case PERF_RECORD_NAMESPACES: {
                json_object *a = json_object_new_array();

                json_add_u64(o, "pid", r->namespaces.pid);
                json_add_u64(o, "tid", r->namespaces.tid);
                for (uint64_t i = 0; i < r->namespaces.nr; i++) {
                        json_object *e = json_object_new_object();
                        uint64_t dev, ino;

                        memcpy(&dev, &r->namespaces.dev_ino[2 * i], sizeof(dev));
                        memcpy(&ino, &r->namespaces.dev_ino[2 * i + 1], sizeof(ino));
                        json_add_u64(e, "dev", dev);
                        json_add_u64(e, "ino", ino);
                        json_object_array_add(a, e);
                }
                json_object_object_add(o, "namespaces", a);
                break;
        }
        case PERF_RECORD_KSYMBOL:
                json_add_hex(o, "addr", r->ksymbol.addr);
                json_add_u64(o, "len", r->ksymbol.len);
                json_add_u64(o, "ksym_type", r->ksymbol.ksym_type);
                json_add_u64(o, "flags", r->ksymbol.flags);
                json_add_str(o, "name", r->ksymbol.name);
                break;
        case PERF_RECORD_BPF_EVENT:
                json_add_u64(o, "bpf_type", r->bpf_event.type);
                json_add_u64(o, "flags", r->bpf_event.flags);
                json_add_u64(o, "id", r->bpf_event.id);
                json_add_bytes_hex(o, "tag", r->bpf_event.tag, 8);
                break;
        case PERF_RECORD_CGROUP:
                json_add_u64(o, "id", r->cgroup.id);
                json_add_str(o, "path", r->cgroup.path);
                break;
        case PERF_RECORD_TEXT_POKE:
                json_add_hex(o, "addr", r->text_poke.addr);
                json_add_u64(o, "old_len", r->text_poke.old_len);
                json_add_u64(o, "new_len", r->text_poke.new_len);
                break;
        case PERF_RECORD_AUX_OUTPUT_HW_ID:
                json_add_u64(o, "hw_id", r->aux_output_hw_id.hw_id);
                break;
        case 22: /* PERF_RECORD_CALLCHAIN_DEFERRED, newer than some uapi headers */
                json_add_u64(o, "cookie", r->callchain_deferred.cookie);
                json_add_u64(o, "nr", r->callchain_deferred.nr);
                break;
        }

        if (r->has_sid) {
                json_object *sid = json_object_new_object();
                uint64_t t = pr->event ? pr->event->attr.sample_type : 0;

                /* Without the event (perf's synthesized records carry id 0)
                 * every trailer field is shown. */
                if (!pr->event || (t & PERF_SAMPLE_TID)) {
                        json_add_u64(sid, "pid", r->sid.pid);
                        json_add_u64(sid, "tid", r->sid.tid);
                }
                if (!pr->event || (t & PERF_SAMPLE_TIME))
                        json_add_u64(sid, "time", r->sid.time);
                if (!pr->event || (t & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)))
                        json_add_u64(sid, "id", r->sid.id);
                if (!pr->event || (t & PERF_SAMPLE_CPU))
                        json_add_u64(sid, "cpu", r->sid.cpu);
                json_object_object_add(o, "sample_id", sid);
        }
        return o;
}

static int decode_open_error(const char *path, int r) {
        if (r == -EPROTONOSUPPORT) {
                uint8_t head[16] = {};
                const char *why = NULL;
                _cleanup_(closep) int fd = open(path, O_RDONLY | O_CLOEXEC);

                if (fd >= 0) {
                        ssize_t n = read(fd, head, sizeof(head));
                        if (n > 0)
                                why = perfdata_unsupported(head, (size_t) n);
                }
                fprintf(stderr, "evmonctl: %s: %s is not read by evmonctl decode\n", path,
                        why ? why : "this perf.data variant");
        } else if (r == -EBADMSG)
                fprintf(stderr, "evmonctl: %s is not a well-formed perf.data file (truncated or corrupt; "
                        "evmonctl decode reads what `perf record -o FILE` writes)\n", path);
        else
                fprintf(stderr, "evmonctl: cannot read %s: %s\n", path, strerror(-r));
        return 1;
}

static int decode_flush(struct jbuf *line) {
        if (line->len > 0 && fwrite(line->data, 1, line->len, stdout) != line->len)
                return -EPIPE;
        line->len = 0;
        return 0;
}

/* One encoder per event of the file, NULL where it has no format. */
struct encoders {
        struct encoder **v;
        size_t n;
};

static void encoders_done(struct encoders *e) {
        for (size_t i = 0; e->v && i < e->n; i++)
                encoder_free(e->v[i]);
        free(e->v);
}

static int cmd_decode(const char *path) {
        _cleanup_(perfdata_freep) struct perfdata *pd = NULL;
        _cleanup_(jbuf_donep) struct jbuf line = {};
        _cleanup_(encoders_done) struct encoders encoders = {};
        struct perfdata_clock clock;
        struct perfdata_record pr;
        uint64_t n_bad = 0, n_unknown = 0, n_undecodable = 0;
        int64_t offset = 0;
        size_t n_events;
        int r, status = 0;

        r = perfdata_open(path, &pd);
        if (r < 0)
                return decode_open_error(path, r);

        if (perfdata_clock(pd, &clock) >= 0)
                offset = (int64_t) (clock.wall_ns - clock.clock_ns);
        else
                fprintf(stderr, "evmonctl: %s has no clock reference (HEADER_CLOCK_DATA, written by "
                        "perf record -k CLOCK): \"time\" is \"ts\" counted from 1970, not wall-clock time\n", path);

        n_events = perfdata_n_events(pd);
        encoders.v = calloc(n_events, sizeof(*encoders.v));
        if (!encoders.v)
                return log_oom_cli();
        encoders.n = n_events;
        for (size_t i = 0; i < n_events; i++) {
                const struct perfdata_event *ev = perfdata_event(pd, i);

                if (!ev->format || !ev->name)
                        continue;
                r = encoder_new(ev->name, ev->format, &encoders.v[i]);
                if (r < 0)
                        fprintf(stderr, "evmonctl: %s: cannot decode %s: %s\n", path, ev->name, strerror(-r));
        }

        /* Full buffering: this is a batch job. */
        setvbuf(stdout, NULL, _IOFBF, 1 << 16);
        while ((r = perfdata_next(pd, &pr)) > 0) {
                const struct perfdata_event *ev = pr.event;
                struct encoder *enc = NULL;

                for (size_t i = 0; ev && i < n_events; i++)
                        if (perfdata_event(pd, i) == ev)
                                enc = encoders.v[i];

                if (pr.rec.type == PERF_RECORD_SAMPLE && !ev)
                        n_unknown++;
                if (pr.rec.type == PERF_RECORD_SAMPLE && enc) {
                        r = encode_event(&line, enc, &pr.rec.sample, offset);
                        if (r == -EBADMSG) {
                                n_bad++;
                                continue;
                        }
                } else if (pr.rec.type == PERF_RECORD_LOST && pr.parsed) {
                        const struct perf_event_attr *a = ev ? &ev->attr : &perfdata_event(pd, 0)->attr;
                        int cpu = pr.rec.has_sid && (a->sample_type & PERF_SAMPLE_CPU) ? (int) pr.rec.sid.cpu : -1;

                        r = encode_lost(&line, cpu, pr.rec.lost.lost);
                } else if (arg_all) {
                        _cleanup_(json_object_putp) json_object *o = record_to_json(&pr);
                        const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                                          JSON_C_TO_STRING_NOSLASHESCAPE);
                        size_t n = strlen(s);

                        r = jbuf_reserve(&line, n + 1);
                        if (r >= 0) {
                                jbuf_put_bytes(&line, s, n);
                                jbuf_put_char(&line, '\n');
                        }
                } else {
                        if (pr.rec.type == PERF_RECORD_SAMPLE && ev)
                                n_undecodable++;
                        continue;
                }
                if (r < 0)
                        return log_oom_cli();
                if (line.len >= 1 << 16 && decode_flush(&line) < 0)
                        return 0;       /* the reader went away */
        }
        if (decode_flush(&line) < 0 || fflush(stdout) == EOF)
                return 0;

        if (r < 0) {
                fprintf(stderr, "evmonctl: %s: %s at byte %" PRIu64 " of the file; stopped there\n", path,
                        r == -EOPNOTSUPP ? "a sample with fields newer than this evmonctl" :
                        r == -EBADMSG ? "damaged or truncated data (a malformed record or section)" : strerror(-r),
                        perfdata_offset(pd));
                status = 1;
        }
        if (n_bad > 0)
                fprintf(stderr, "evmonctl: %s: %" PRIu64 " samples did not decode with their event's format\n", path, n_bad);
        if (n_unknown > 0)
                fprintf(stderr, "evmonctl: %s: %" PRIu64 " samples name no event of the file (unknown sample id)\n", path, n_unknown);
        if (n_undecodable > 0 && !arg_all)
                fprintf(stderr, "evmonctl: %s: %" PRIu64 " samples of events that are not tracepoints or whose "
                        "format the file lacks were skipped (--all shows them)\n", path, n_undecodable);
        return status;
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "socket", required_argument, NULL, 's' },
                { "tracefs", required_argument, NULL, 't' },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                { "all", no_argument, NULL, 'A' },
                {}
        };
        const char *cmd;
        int c;

        signal(SIGPIPE, SIG_IGN);
        while ((c = getopt_long(argc, argv, "s:t:jh", options, NULL)) >= 0)
                switch (c) {
                case 's':
                        arg_socket = optarg;
                        break;
                case 't':
                        arg_tracefs = optarg;
                        break;
                case 'j':
                        arg_json = 1;
                        break;
                case 'h':
                        help();
                        return 0;
                case 'A':
                        arg_all = true;
                        break;
                default:
                        fprintf(stderr, "Try 'evmonctl --help'.\n");
                        return 2;
                }
        if (optind >= argc) {
                help();
                return 2;
        }
        cmd = argv[optind++];
        if (strcmp(cmd, "watch") == 0)
                return cmd_watch(argv + optind);
        if (strcmp(cmd, "status") == 0 && optind == argc)
                return cmd_request("status");
        if (strcmp(cmd, "reload") == 0 && optind == argc)
                return cmd_request("reload");
        if (strcmp(cmd, "list") == 0 && optind == argc)
                return cmd_list();
        if (strcmp(cmd, "describe") == 0 && optind + 1 == argc)
                return cmd_describe(argv[optind]);
        if (strcmp(cmd, "decode") == 0 && optind + 1 == argc)
                return cmd_decode(argv[optind]);
        fprintf(stderr, "evmonctl: unknown command or wrong arguments: %s; try 'evmonctl --help'.\n", cmd);
        return 2;
}
