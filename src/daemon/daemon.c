/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "counters.h"
#include "hotplug.h"
#include "daemon.h"
#include "emit.h"
#include "follow.h"
#include "notify.h"
#include "privs.h"
#include "replies.h"
#include "stats.h"
#include "targets.h"
#include "evmon/async.h"
#include "evmon/cleanup.h"
#include "evmon/error.h"
#include "evmon/log.h"

/* The wall-clock time of an event is its own clock's time plus this offset;
 * re-read every second so NTP adjustments show. */
static void daemon_update_offset(struct daemon *d) {
        clockid_t clock = d->config->clockid;
        uint64_t a, rt, b;

        if (clock == CLOCK_REALTIME) {
                d->realtime_offset = 0;
                return;
        }
        a = now_ns(clock);
        rt = now_ns(CLOCK_REALTIME);
        b = now_ns(clock);
        d->realtime_offset = (int64_t) (rt - (a + (b - a) / 2));
}

/* ring.threads, or one per CONFIG_RING_CPUS_PER_THREAD online CPUs. */
static unsigned ring_threads(const struct config *c) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);

        if (c->ring_threads > 0)
                return c->ring_threads;
        if (n < (long) CONFIG_RING_CPUS_PER_THREAD)
                return 1;
        n /= CONFIG_RING_CPUS_PER_THREAD;
        return n > (long) CONFIG_RING_THREADS_AUTO_MAX ? CONFIG_RING_THREADS_AUTO_MAX : (unsigned) n;
}

struct reader_opts daemon_reader_opts(const struct daemon *d) {
        return (struct reader_opts) {
                .threads = ring_threads(d->config),
                .doorbell = d->config->doorbell,
                .flush_usec = d->config->flush_ms * 1000u,
                .busy_usec = d->config->busy_flush_ms * 1000u,
                .idle_usec = d->config->idle_flush_ms * 1000u,
                .order = d->config->order_time,
                .hold_usec = CONFIG_ORDER_HOLD_USEC < d->config->flush_ms * 1000u ? CONFIG_ORDER_HOLD_USEC
                                                                                  : d->config->flush_ms * 1000u,
                .clock = d->config->clockid,
        };
}

void daemon_reader_threads_check(struct daemon *d, const struct reader_opts *ro) {
        unsigned n = reader_n_threads(d->reader);

        if (ro->order && ro->threads > n)
                log_warning("ring.threads is %u, but its reader threads could not start: the event loop "
                            "scans and merges the rings alone",
                            ro->threads);
}

bool daemon_has_counters(const struct daemon *d) {
        for (size_t i = 0; i < d->n_events; i++)
                if (d->events[i]->cfg->count)
                        return true;
        return false;
}

/* counters.interval_ms: one line per counting event (perf stat -I). */
static int on_counter_timer(sd_event_source *es, uint64_t usec, void *userdata) {
        struct daemon *d = userdata;

        /* What the rings hold goes first: these lines are timed now. */
        (void) reader_drain_all(d->reader);
        counters_emit(d);
        return sd_event_source_set_time_relative(es, d->config->counter_interval_ms * 1000ull);
}

/* A ring's first malformed record, said once with its header and bytes:
 * the metrics only count them (evmon_malformed_records_total), which told
 * a user that something was wrong but not what. */
static void log_malformed(struct daemon *d) {
        size_t n = monitor_n_rings(d->monitor);

        for (size_t i = 0; i < n; i++) {
                struct monitor_malformed mf;
                char hex[3 * MONITOR_MALFORMED_BYTES + 1] = "";
                size_t at = 0;

                if (!monitor_ring_take_malformed(d->monitor, i, &mf))
                        continue;
                for (size_t k = 0; k < mf.n_bytes && at + 4 <= sizeof(hex); k++)
                        at += (size_t) snprintf(hex + at, sizeof(hex) - at, "%s%02x", k ? " " : "", mf.bytes[k]);
                log_warning("CPU %d: skipped a malformed record, %s: type %" PRIu32 ", misc 0x%04x, size %u; "
                            "its first %zu bytes: %s (further ones are only counted: "
                            "evmon_malformed_records_total, evmonctl status)",
                            monitor_ring_cpu(d->monitor, i), mf.why, mf.type, (unsigned) mf.misc,
                            (unsigned) mf.size, mf.n_bytes, hex);
        }
}

/* The one housekeeping tick, once a second: with the rings on doorbells
 * (reader.c) it is all an idle evmond wakes for, so whatever else must run
 * now and then (metrics) belongs here rather than on a timer of its own;
 * the systemd watchdog is pinged on the loop iteration it wakes. */
static int on_tick(sd_event_source *es, uint64_t usec, void *userdata) {
        struct daemon *d = userdata;
        char status[256];

        daemon_update_offset(d);
        hotplug_check(d);
        (void) reader_sweep(d->reader);
        log_malformed(d);
        server_sweep(d->server);
        daemon_status_text(d, status, sizeof(status));
        notify_status(status);
        metrics_file_tick(&d->metrics, d, usec);
        return sd_event_source_set_time(es, usec + 1000000u);
}

static int on_terminate(sd_event_source *es, const struct signalfd_siginfo *si, void *userdata) {
        struct daemon *d = userdata;

        log_info("Received %s, stopping", strsignal((int) si->ssi_signo));
        notify_stopping();
        return sd_event_exit(d->event, 0);
}

static int on_hangup(sd_event_source *es, const struct signalfd_siginfo *si, void *userdata) {
        struct daemon *d = userdata;
        _cleanup_(freep) char *error = NULL;

        log_info("Received SIGHUP, reloading %s", d->config->path);
        (void) daemon_reload_notify(d, &error);
        return 0;
}

/* tracefs_open()'s error R as its real cause and remedy: without root the
 * mount is there but closed to us (0700 root), which no mount would fix. */
static int tracefs_open_error(const char *dir, int r, char **ret_error) {
        _cleanup_(freep) char *mounted = NULL;

        if (!dir) {
                _cleanup_(fclosep) FILE *f = fopen("/proc/mounts", "re");
                _cleanup_(freep) char *text = NULL;
                size_t n = 0;

                if (f && getdelim(&text, &n, 0, f) > 0)
                        (void) tracefs_find_mount(text, &mounted);
        }
        if (r == -EACCES || r == -EPERM)
                return error_set(ret_error, r, "%s: %s: evmond needs root to read tracefs, create probes and open perf "
                                 "events (running as uid %u; start it as root, e.g. by evmond.service)",
                                 dir ?: mounted ?: "tracefs (not mounted, and mounting it needs root)",
                                 strerror(-r), (unsigned) geteuid());
        /* A directory that is there but holds no events/ is not tracefs:
         * "No such file or directory" alone named the wrong thing. */
        if (dir && r == -ENOENT && access(dir, F_OK) == 0)
                return error_set(ret_error, r, "cannot use %s as tracefs: it has no events/ directory "
                                 "(--tracefs names tracefs' mount point, such as /sys/kernel/tracing)", dir);
        if (dir)
                return error_set(ret_error, r, "cannot use %s as tracefs: %s (--tracefs names tracefs' mount "
                                 "point, such as /sys/kernel/tracing)", dir, strerror(-r));
        if (mounted)
                return error_set(ret_error, r, "cannot use tracefs at %s: %s", mounted, strerror(-r));
        return error_set(ret_error, r, "/proc/mounts: cannot find or mount tracefs: %s "
                         "(mount it with `mount -t tracefs nodev /sys/kernel/tracing`)", strerror(-r));
}

static int daemon_open_tracefs(struct daemon *d, char **ret_error) {
        int r = tracefs_open(d->args.tracefs_dir, &d->tracefs);

        return r < 0 ? tracefs_open_error(d->args.tracefs_dir, r, ret_error) : 0;
}

int daemon_config_load(struct daemon *d, struct config **ret, char **ret_error) {
        _cleanup_(config_freep) struct config *c = NULL;
        int r;

        r = config_load(d->args.config_path, &c, ret_error);
        if (r < 0)
                return r;
        if (d->args.socket_path) {
                char *p = strdup(d->args.socket_path);
                if (!p)
                        return -ENOMEM;
                free(c->socket_path);
                c->socket_path = p;
        }
        *ret = TAKE_PTR(c);
        return 0;
}

static int daemon_load_config(struct daemon *d, char **ret_error) {
        int r;

        *ret_error = NULL;
        r = daemon_config_load(d, &d->config, ret_error);
        if (r < 0)
                return r;
        return daemon_probe_setup(d);
}

/* SOCKET.lock, held with flock() for as long as we run: the kernel lets it
 * go however we end (SIGKILL too), so --cleanup can tell a dead instance
 * from a live one even when systemd still holds the listening socket. */
static int daemon_lock(struct daemon *d, char **ret_error) {
        _cleanup_(freep) char *path = NULL, *dir = NULL;
        int fd, r;

        if (asprintf(&path, "%s.lock", d->config->socket_path) < 0)
                return -ENOMEM;
        dir = strdup(path);
        if (!dir)
                return -ENOMEM;
        *strrchr(dir, '/') = 0;
        if (*dir && mkdir(dir, 0755) < 0 && errno != EEXIST)
                r = -errno;
        else {
                fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
                if (fd < 0)
                        r = -errno;
                else if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                        r = -errno;
                        safe_close(fd);
                        if (r == -EWOULDBLOCK)
                                return error_set(ret_error, -EBUSY, "another evmond runs on %s (it holds %s): stop it first",
                                                 d->config->socket_path, path);
                } else {
                        d->lock.fd = fd;
                        d->lock.path = TAKE_PTR(path);
                        return 0;
                }
        }
        return error_set(ret_error, r, "%s: cannot lock: %s", path, strerror(-r));
}

int daemon_prepare(struct daemon *d, char **ret_error) {
        int r;

        r = daemon_load_config(d, ret_error);
        if (r < 0)
                return r;
        /* A second daemon on a live socket must stop here, before it
         * touches the probes the first one owns. */
        if (!d->check_only && sd_listen_fds(false) <= 0) {
                r = server_check_path(d->config->socket_path, ret_error);
                if (r < 0)
                        return r;
        }
        if (!d->check_only) {
                r = daemon_lock(d, ret_error);
                if (r < 0)
                        return r;
        }
        r = daemon_open_tracefs(d, ret_error);
        if (r < 0)
                return r;
        r = targets_prepare(&d->targets, d->config, ret_error);
        if (r < 0)
                return r;
        return daemon_prepare_events(d, ret_error);
}

int daemon_cleanup(struct daemon *d, unsigned *ret_removed, unsigned *ret_metrics_removed, char **ret_error) {
        int r;

        *ret_removed = 0;
        *ret_metrics_removed = 0;
        r = daemon_load_config(d, ret_error);
        if (r < 0)
                return r;
        r = daemon_lock(d, ret_error);
        if (r < 0)
                return r;
        /* Ours now: no evmond of this config runs (it would hold the lock). */
        *ret_metrics_removed = metrics_file_remove_stale(d->config->metrics_path);
        r = daemon_open_tracefs(d, ret_error);
        if (r < 0)
                return r;
        return daemon_remove_probes(d, ret_removed, ret_error);
}

/* The kernel refuses a ring's mmap with EPERM when it is more locked memory
 * than the user may have: kernel.perf_event_mlock_kb per CPU for all the
 * user's rings, then the process's RLIMIT_MEMLOCK, unless it has
 * CAP_IPC_LOCK (perf_mmap() in kernel/events/core.c). */
static int ring_memlock_error(const char *config_path, unsigned ring_pages, char **ret_error) {
        _cleanup_(fclosep) FILE *f = fopen("/proc/sys/kernel/perf_event_mlock_kb", "re");
        unsigned long mlock_kb = 0;
        struct rlimit rl = {};
        char limit[32] = "unlimited";

        if (!f || fscanf(f, "%lu", &mlock_kb) != 1)
                mlock_kb = 0;
        if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
                snprintf(limit, sizeof(limit), "%llu KiB", (unsigned long long) rl.rlim_cur / 1024);
        return error_set(ret_error, -EPERM, "%s: ring.pages: the per-CPU rings (%u pages and a header page, %zu KiB each) are more locked memory "
                         "than evmond may have: kernel.perf_event_mlock_kb is %lu KiB per CPU for all of the user's rings, "
                         "RLIMIT_MEMLOCK (LimitMEMLOCK= in the unit, `ulimit -l`) %s beyond that, and evmond lacks "
                         "CAP_IPC_LOCK: lower ring.pages, or raise one of the limits",
                         config_path, ring_pages, (ring_pages + (size_t) 1) * (size_t) sysconf(_SC_PAGESIZE) / 1024,
                         mlock_kb, limit);
}

static int daemon_open_events(struct daemon *d, unsigned ring_pages, char **ret_error) {
        struct monitor_opts mo = {
                .ring_pages = ring_pages,
                /* Woken when an eighth of a ring is full: at a busy CPU's
                 * rate that is ~2 ms of samples, leaving the rest of the
                 * ring for the times we wait for a CPU. */
                .wakeup_bytes = (uint32_t) (ring_pages * (size_t) sysconf(_SC_PAGESIZE) / 8),
                .clockid = d->config->clockid,
                .cgroup_fds = d->targets.cgroup_fds,
                .n_cgroups = d->targets.n_cgroup_fds,
                .pids = d->targets.pids,
                .n_pids = d->targets.n_pids,
                .sample_cgroup = d->targets.cgroup_mount != NULL,
                /* Not for --check-config: no one would read them. */
                .doorbell = d->config->doorbell && !d->check_only,
        };
        int r;

        r = monitor_new(&mo, &d->monitor);
        if (r == -EPERM)
                return ring_memlock_error(d->config->path, mo.ring_pages, ret_error);
        if (r < 0)
                return error_set(ret_error, r, "%s: failed to set up the per-CPU rings (%u pages each): %s",
                                 d->config->path, mo.ring_pages, strerror(-r));
        if (d->config->context && !d->check_only) {
                r = daemon_context_open(d, ret_error);
                if (r < 0)
                        return r;
        } else if (!d->check_only)
                /* Before privileges go: kallsyms' addresses need them. */
                daemon_context_open_symbols(d);
        for (size_t i = 0; i < d->n_events; i++) {
                r = daemon_event_open(d, d->events[i], daemon_group_leader(d->events, d->n_events, d->events[i]),
                                      ret_error);
                if (r < 0)
                        return r;
        }
        return 0;
}

int daemon_check_open(struct daemon *d, char **ret_error) {
        int r;

        *ret_error = NULL;
        /* One page per ring is enough to let the kernel judge every event. */
        r = daemon_open_events(d, 1, ret_error);
        d->monitor = monitor_free(d->monitor);
        for (size_t i = 0; i < d->n_events; i++)
                d->events[i]->handle = -1;
        return r;
}

/* With a socket from systemd, socket.path, socket.mode and socket.group
 * are evmond.socket's to set (ListenStream=, SocketMode=, SocketGroup=):
 * say so when the config asks for something else, or an admin who edits
 * only the config sees nothing change. */
static void daemon_check_passed_socket(const struct config *c, int fd) {
        /* One byte past sun_path stays 0: a path of all 108 bytes has no
         * NUL of its own. */
        union {
                struct sockaddr_un un;
                char bytes[sizeof(struct sockaddr_un) + 1];
        } u = {};
        struct sockaddr_un *sa = &u.un;
        socklen_t len = sizeof(u.un);
        struct stat st;
        struct group *g;

        if (getsockname(fd, (struct sockaddr *) sa, &len) < 0 || sa->sun_family != AF_UNIX || !sa->sun_path[0])
                return;
        if (c->socket_path && strcmp(sa->sun_path, c->socket_path) != 0) {
                log_warning("The socket from systemd is %s, not %s (socket.path, --socket): evmond serves %s; "
                            "set ListenStream= with `systemctl edit evmond.socket`, then restart it",
                            sa->sun_path, c->socket_path, sa->sun_path);
                return;
        }
        if (stat(sa->sun_path, &st) < 0)
                return;
        if ((st.st_mode & 07777) != c->socket_mode)
                log_warning("The socket from systemd, %s, has mode %04o, not %04o (socket.mode): set SocketMode= "
                            "with `systemctl edit evmond.socket`, then restart it",
                            sa->sun_path, (unsigned) (st.st_mode & 07777), (unsigned) c->socket_mode);
        if (c->socket_group && *c->socket_group && (g = getgrnam(c->socket_group)) && g->gr_gid != st.st_gid)
                log_warning("The socket from systemd, %s, is not in group %s (socket.group): set SocketGroup= "
                            "with `systemctl edit evmond.socket`, then restart it", sa->sun_path, c->socket_group);
}

static int daemon_open_server(struct daemon *d) {
        _cleanup_(freep) char *error = NULL;
        struct config *c = d->config;
        struct server_opts so = {
                .path = c->socket_path,
                .mode = c->socket_mode,
                .gid = (gid_t) -1,
                .max_clients = c->max_clients,
                .max_per_uid = c->max_clients_per_uid,
                .admin_gid = (gid_t) -1,
                .admin_group = c->socket_admin_group,
                .queue_bytes = c->client_queue_bytes,
                .listen_fd = -1,
                .cgroup_mount = d->targets.cgroup_mount,
        };
        int n, r;

        n = sd_listen_fds(true);
        if (n > 1)
                return log_error_errno(-EINVAL, "Got %d sockets from systemd; evmond.socket passes exactly one", n);
        if (n == 1) {
                if (sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_STREAM, 1, NULL, 0) <= 0)
                        return log_error_errno(-EINVAL, "The socket from systemd is not a listening Unix stream socket");
                so.listen_fd = SD_LISTEN_FDS_START;
                log_info("Using the socket passed by systemd");
                daemon_check_passed_socket(c, SD_LISTEN_FDS_START);
        } else if (c->socket_group && *c->socket_group) {
                struct group *g = getgrnam(c->socket_group);
                if (g)
                        so.gid = g->gr_gid;
                else
                        log_warning("Group \"%s\" (socket.group) does not exist: the socket stays root's; "
                                    "create it with `groupadd --system %s`", c->socket_group, c->socket_group);
        }
        if (c->socket_admin_group) {
                struct group *g = getgrnam(c->socket_admin_group);
                if (g)
                        so.admin_gid = g->gr_gid;
                else
                        log_warning("Group \"%s\" (socket.admin_group) does not exist: only root may reload evmond",
                                    c->socket_admin_group);
        }
        so.start_ns = d->start_realtime_ns;
        r = server_new(d->event, &so, &daemon_server_ops, d, &d->server, &error);
        if (r < 0 && error)
                return log_error_errno(r, "%s", error);
        if (r < 0)
                return log_error_errno(r, "Failed to listen on %s: %m", c->socket_path);
        return 0;
}

static int daemon_watch_signals(struct daemon *d) {
        sigset_t mask;
        int r;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        signal(SIGPIPE, SIG_IGN);
        if ((r = sd_event_add_signal(d->event, NULL, SIGTERM, on_terminate, d)) < 0 ||
            (r = sd_event_add_signal(d->event, NULL, SIGINT, on_terminate, d)) < 0 ||
            (r = sd_event_add_signal(d->event, NULL, SIGHUP, on_hangup, d)) < 0)
                return log_error_errno(r, "Failed to watch signals: %m");
        r = sd_event_set_watchdog(d->event, true);
        if (r < 0)
                log_warning_errno(r, "Failed to set up the systemd watchdog: %m");
        return 0;
}

static int daemon_start_timers(struct daemon *d) {
        int r;

        r = sd_event_add_time_relative(d->event, &d->tick_timer, CLOCK_MONOTONIC, 1000000, 100000, on_tick, d);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the status timer: %m");
        (void) sd_event_source_set_enabled(d->tick_timer, SD_EVENT_ON);
        r = sd_event_add_time_relative(d->event, &d->counter_timer, CLOCK_MONOTONIC,
                                       d->config->counter_interval_ms * 1000ull, 1000, on_counter_timer, d);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the counter timer: %m");
        /* Only counting events need it: an idle evmond wakes no more. */
        (void) sd_event_source_set_enabled(d->counter_timer, daemon_has_counters(d) ? SD_EVENT_ON : SD_EVENT_OFF);
        return 0;
}

/* Enable last: every event is open and the socket serves. Then everything
 * that needs more is done (rings are mapped, the socket is bound, tracefs
 * is mounted): drop privileges. */
static int daemon_go(struct daemon *d) {
        char status[256];
        size_t n_up;
        int r;

        /* The process table first: the events' first lines find it seeded. */
        r = daemon_context_enable(d);
        if (r < 0)
                return r;
        for (size_t i = 0; i < d->n_events; i++) {
                r = monitor_enable(d->monitor, d->events[i]->handle);
                if (r < 0)
                        return log_error_errno(r, "Failed to enable %s: %m", d->events[i]->wire_name);
        }
        if (!getenv("EVMON_KEEP_PRIVILEGES")) {
                _cleanup_(freep) char *kept = NULL;
                r = privs_drop(&kept);
                if (r < 0)
                        return log_error_errno(r, "Failed to drop capabilities: %m");
                log_debug("Capabilities now: %s", kept ?: "?");
        }
        daemon_status_text(d, status, sizeof(status));
        (void) monitor_rings_up(d->monitor, &n_up);
        log_info("Serving %zu events on %s from %zu CPUs (config %s)", d->n_events, d->config->socket_path, n_up,
                 d->config->path);
        notify_ready(status);
        return 0;
}

int daemon_start(struct daemon *d) {
        _cleanup_(freep) char *error = NULL;
        struct reader_opts ro;
        int r;

        d->start_usec = now_ns(CLOCK_MONOTONIC) / 1000;
        d->start_realtime_ns = now_ns(CLOCK_REALTIME);
        metrics_file_init(&d->metrics);
        /* Not sd_event_default(): a default loop checks on every
         * iteration that it runs in its thread, a gettid() syscall per
         * wakeup (systemd 252), one in five of a steady stream's tick. */
        r = sd_event_new(&d->event);
        if (r < 0)
                return log_error_errno(r, "Failed to create the event loop: %m");
        r = daemon_watch_signals(d);
        if (r < 0)
                return r;

        daemon_update_offset(d);
        r = daemon_open_events(d, d->config->ring_pages, &error);
        if (r < 0) {
                log_error("%s", error ?: strerror(-r));
                return r;
        }
        r = daemon_open_server(d);
        if (r < 0)
                return r;
        ro = daemon_reader_opts(d);
        r = reader_new(d->event, d->monitor, &daemon_emit_handler, d, daemon_emit_batch, &ro, &d->reader);
        if (r < 0)
                return log_error_errno(r, "Failed to watch the rings: %m");
        reader_set_scan(d->reader, &daemon_emit_scan);
        daemon_reader_threads_check(d, &ro);
        r = hotplug_start(d);
        if (r < 0)
                return log_oom();
        r = daemon_start_timers(d);
        if (r < 0)
                return r;
        return daemon_go(d);
}

int daemon_run(struct daemon *d) {
        int r = sd_event_loop(d->event);
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        return r;
}

void daemon_done(struct daemon *d) {
        metrics_file_done(&d->metrics);
        d->reader = reader_free(d->reader);
        daemon_emit_scan_done(d);
        d->tick_timer = sd_event_source_disable_unref(d->tick_timer);
        d->counter_timer = sd_event_source_disable_unref(d->counter_timer);
        d->server = server_free(d->server);
        /* Every perf fd first: a probe with an open fd cannot be removed. */
        d->monitor = monitor_free(d->monitor);
        hotplug_done(d);
        daemon_context_done(d);
        daemon_events_done(d);
        /* The closes and probe removals still queued: none is left behind
         * on exit, and the tracefs handle they use is freed below. */
        async_wait(0);
        daemon_probes_done(d);
        if (d->lock.path) {
                (void) unlink(d->lock.path);
                d->lock.fd = safe_close(d->lock.fd);
                free(d->lock.path);
                d->lock.path = NULL;
        }
        targets_done(&d->targets);
        d->tracefs = tracefs_free(d->tracefs);
        d->config = config_free(d->config);
        jbuf_done(&d->line);
        d->event = sd_event_unref(d->event);
}
