/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The served events: one per config entry, with its decoder, encoder, perf
 * fds and, for a probe made through tracefs, the probe. Their lifecycle in
 * two halves, as libtracefs has it: destroy undoes what the kernel holds
 * (fds, probes), free releases memory only, so _cleanup_ can free a
 * half-built event. */

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "evmon/cleanup.h"
#include "evmon/encode.h"
#include "evmon/monitor.h"
#include "evmon/probe.h"
#include "evmon/tracefs.h"

struct daemon;

/* The most task fields of one event checked for self-exclusion. */
#define EVENT_SELF_FIELDS_MAX 4u

struct daemon_event {
        unsigned index;               /* bit in client subscriptions */
        char *wire_name;
        struct event_config *cfg;     /* in daemon->config (repointed on reload) */
        char *definition;             /* what identifies it across reloads */
        struct format *format;
        struct encoder *encoder;
        struct monitor_source source;
        struct probe_pmu pmu;         /* probes made by perf_event_open */
        bool probe_added;             /* probes made through tracefs: ours to remove */
        enum probe_kind probe_kind;
        char *probe_name;             /* the tracefs event name in our group */
        int handle;                   /* monitor handle, -1 before it is open */
        /* What the kernel filters on: the config's filter with evmond's
         * own pid left out (events_self_filter()); NULL: the config's. */
        char *kernel_filter;
        /* Offsets of the sched: fields that name a task (prev_pid,
         * next_pid, pid: 4-byte ints in the raw data), checked against
         * evmond's clients in evmond (emit.c). */
        uint32_t self_offs[EVENT_SELF_FIELDS_MAX];
        unsigned n_self_offs;
        uint64_t count;               /* samples received */
        uint64_t bad;                 /* samples that did not decode */
        struct perf_event_attr attr;  /* the config's attr (event_config_has_attr()), what source.attr points at */
        uint64_t counter_last;        /* counting events: the sum of the last counter line */
        /* ... and its times enabled and running (ns) and scaled value,
         * for the metrics file. */
        uint64_t counter_last_enabled, counter_last_running, counter_last_scaled;
        /* Counting events: what earlier openings under this name counted
         * (a reload or filter change opened it anew) and its fds on a
         * CPU before it went offline, added to what the kernel counts so
         * its value never goes back: per fd where they match the old fds
         * one for one (counter_carry_fds, NULL: none), the rest in total;
         * and each fd's last read (counters.c). */
        struct counter_carry {
                uint64_t value, enabled, running;
                double scaled;
        } counter_carry, *counter_carry_fds, *counter_seen_fds;
        size_t n_counter_carry_fds;   /* of both arrays */
        /* The schema line of this definition (encode_schema()), and a
         * number no other definition served by this evmond has. */
        struct jbuf schema;
        uint64_t schema_gen;
        bool runtime;                 /* added or changed at run time, not from the file */
        bool disabled;                /* disabled at run time */
        struct follow *follow;        /* uprobes: the probed file, watched (follow.c) */
        /* Uprobes: the configured file, opened and checked as the probe is
         * made (elf_open_target()) and held while the event lives: the
         * kernel is handed "/proc/self/fd/N" of it (target), for tracefs
         * and for each CPU's PMU event alike, so the probe lands on the
         * inode checked, whatever the path holds by then. Its directory
         * (O_PATH, for follow.c) and its real path; -1 and NULL otherwise. */
        int target_fd, target_dir_fd;
        char *target_path;
        char *target;
};

/* Everything that makes two config entries the same event: an event whose
 * definition did not change keeps its fds over a reload. NULL on ENOMEM. */
char *event_definition(const struct event_config *ec);

/* Builds EC's event: its decoder and encoder, and its probe where it is
 * one (in D's probe group). Opens no perf fd. Errors name the config
 * entry in *ret_error. */
int daemon_event_new(struct daemon *d, struct event_config *ec, struct daemon_event **ret, char **ret_error);
/* The leader of EV's group among EVENTS (N of them, in config order): the
 * first with its group name; NULL when that is EV, or EV has no group. */
struct daemon_event *daemon_group_leader(struct daemon_event *const *events, size_t n, const struct daemon_event *ev);
/* The wire name of the served event whose perf id (PERF_FORMAT_ID,
 * PERF_SAMPLE_ID) is ID, or NULL: the "event" of a read value.
 * USERDATA is the daemon (an encode_id_name_fn). */
const char *daemon_event_id_name(uint64_t id, void *userdata);
/* Opens EV on every CPU (disabled), in LEADER's group (NULL: none). */
int daemon_event_open(struct daemon *d, struct daemon_event *ev, struct daemon_event *leader, char **ret_error);
/* The kernel side: closes EV's fds and removes the probe made for it. */
void daemon_event_destroy(struct daemon *d, struct daemon_event *ev);
/* Memory only; NULL-tolerant, returns NULL. */
struct daemon_event *daemon_event_free(struct daemon_event *ev);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct daemon_event *, daemon_event_free);

/* Builds every event of d->config into d->events. */
int daemon_prepare_events(struct daemon *d, char **ret_error);
/* Destroys and frees every event of D (its monitor already gone or not). */
void daemon_events_done(struct daemon *d);

/* probes.c: our tracefs probe group. */

/* Names our group and our record of groups from the socket path. */
int daemon_probe_setup(struct daemon *d);
/* Removes the probes we recorded (not with --check-config) and frees
 * D's probe state. */
void daemon_probes_done(struct daemon *d);
/* Makes EV's probe through tracefs in our group, per SPEC. */
int daemon_event_add_probe(struct daemon *d, struct daemon_event *ev, struct probe_spec *spec, char **ret_error);
/* Removes probe NAME of our group on the async worker, after the perf fds
 * closed before (evmon/async.h); errors are logged there, naming OWNER. */
void daemon_probe_remove_async(struct daemon *d, enum probe_kind kind, const char *name, const char *owner);
/* Removes EV's tracefs probe, when we made one (asynchronously). */
void daemon_event_remove_probe(struct daemon *d, struct daemon_event *ev);
/* A tracefs format whose common header PMU probes borrow, read once. */
int daemon_reference_format(struct daemon *d, char **ret_error);
/* Removes the probes of group and record (--cleanup, ExecStopPost=). */
int daemon_remove_probes(struct daemon *d, unsigned *ret_removed, char **ret_error);
/* The probe kind of a probe event kind, _PROBE_KIND_INVALID otherwise. */
enum probe_kind probe_kind_of(enum event_kind k);
