/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The doorbell reader (src/daemon/reader.c) on the real kernel, by counts:
 * an idle evmond with a client does not wake for events it is not given,
 * the last event of a burst is never left behind, and a lone event after
 * a stream that put the doorbells to rest rings again, and a stream that
 * moves between CPUs rings none once it flows, and a spell of three calls
 * is read at their doorbells, and a targeted process's last call before it
 * exits is read at its doorbell. Nothing here is
 * timed; the timeouts only end a test that has already failed. Needs root
 * and syscall tracepoints (else 77). Built twice: as latency-race, evmond
 * waits 1 ms between a look that found a ring empty and re-arming its
 * doorbell, so that bursts often land in that window. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

#define N_BURSTS 1000
#define BURST_MAX 64

static struct itest_daemon daemon_;
static struct itest_client *client;

/* Times evmond went to sleep and was woken: voluntary context switches
 * in /proc/PID/task/TID/status (each return to epoll_wait() that blocks
 * is one), summed over its threads: the loop's, the reader threads'
 * (ring.threads 2 here, which must not wake while nothing happens) and
 * the closing worker's. */
static uint64_t wakeups(pid_t pid) {
        char path[320], line[256];
        unsigned long long total = 0;
        unsigned n_tasks = 0;
        struct dirent *de;
        DIR *dir;

        snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
        dir = opendir(path);
        assert_non_null(dir);
        while ((de = readdir(dir))) {
                unsigned long long v;
                FILE *f;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "/proc/%d/task/%s/status", (int) pid, de->d_name);
                f = fopen(path, "re");
                if (!f)
                        continue;       /* a thread that just ended */
                while (fgets(line, sizeof(line), f))
                        if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1) {
                                total += v;
                                n_tasks++;
                                break;
                        }
                fclose(f);
        }
        closedir(dir);
        assert_true(n_tasks > 0);
        return total;
}

/* Reads events until N of ours came; anything else is a failure. */
static void expect_ours(unsigned n, unsigned burst) {
        for (unsigned i = 0; i < n; i++) {
                json_object *o = itest_client_expect(client, "event", 10000);

                if (!o)
                        fail_msg("burst %u: event %u of %u never came (nothing follows it to push it out)",
                                 burst, i + 1, n);
                assert_int_equal(itest_int(o, "pid"), getpid());
                json_object_put(o);
        }
}

static int setup(void **state) {
        char config[512];

        /* The filter keeps every other process's getppid() out in the
         * kernel: those are the events evmond is not given. Context stays
         * on, as by default: its process table's records (the host's
         * execs, forks and exits) are quiet sources, read with the events
         * or by the sweep, and must not wake evmond on a busy host. Two
         * reader threads: they wake for busy looks only. */
        snprintf(config, sizeof(config),
                 "{\"self\": true, \"ring\": {\"threads\": 2},\n"
                 " \"events\": [{\"tracepoint\": \"syscalls:sys_enter_getppid\", \"filter\": \"common_pid == %d\"}]}\n",
                 (int) getpid());
        client = calloc(1, sizeof(*client));
        if (!client)
                return -1;
        return itest_session_start(&daemon_, client, config);
}

static int teardown(void **state) {
        if (client) {
                itest_client_close(client);
                free(client);
        }
        itest_daemon_stop(&daemon_);
        itest_daemon_cleanup(&daemon_);
        return 0;
}

/* Over 3 quiet seconds, while another process calls getppid() 3,000
 * times, evmond wakes only for its once-a-second housekeeping tick (3,
 * and a few for slack). Before doorbells its flush timer alone woke it
 * ~20 times a second. */
static void test_idle_does_not_wake(void **state) {
        uint64_t before, after;
        pid_t child;

        /* One event first: the doorbells are armed once it is read. */
        syscall(SYS_getppid);
        expect_ours(1, 0);
        usleep(300 * 1000);

        before = wakeups(daemon_.pid);
        child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                for (int i = 0; i < 3000; i++) {
                        syscall(SYS_getppid);
                        usleep(1000);
                }
                _exit(0);
        }
        itest_reap(child);
        after = wakeups(daemon_.pid);
        /* The child's loop took at least 3 s: 3 ticks, or a few more. */
        fprintf(stderr, "idle evmond woke %" PRIu64 " times while 3000 events it is not given happened\n",
                after - before);
        if (after - before > 3 + 3)
                fail_msg("idle evmond woke %" PRIu64 " times in ~3 s (at most 6 expected)", after - before);

        /* And a lone event of ours still comes by itself. */
        syscall(SYS_getppid);
        expect_ours(1, 0);
}

/* 1,000 bursts of 1..64 calls, each on a CPU picked at random, with
 * nothing after a burst until all of it has arrived: a record that sat
 * below the watermark with no doorbell and no tick would never come. Each
 * burst starts 0-2 ms after the last one arrived, so that some start just
 * as evmond's tick finds its rings empty and re-arms their doorbells: a
 * record written between that look and the arm rings nothing. */
static void test_bursts_never_left_behind(void **state) {
        unsigned seed = (unsigned) time(NULL), total = 0;
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        cpu_set_t all, one;

        fprintf(stderr, "seed %u\n", seed);
        srand(seed);
        assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
        for (unsigned b = 1; b <= N_BURSTS; b++) {
                unsigned n = 1 + (unsigned) rand() % BURST_MAX;
                int cpu = (int) ((unsigned) rand() % (unsigned) (ncpu > 0 ? ncpu : 1));

                CPU_ZERO(&one);
                CPU_SET(cpu, &one);
                (void) sched_setaffinity(0, sizeof(one), &one);  /* offline or not allowed: anywhere */
                for (unsigned i = 0; i < n; i++)
                        syscall(SYS_getppid);
                expect_ours(n, b);
                total += n;
                usleep((unsigned) rand() % 2000);
        }
        assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
        fprintf(stderr, "%u events in %u bursts, every one delivered\n", total, N_BURSTS);

        /* Nothing more than we made. */
        json_object *o = itest_client_expect(client, "event", 200);
        if (o) {
                json_object_put(o);
                fail_msg("an event beyond the %u we made", total);
        }

        /* And each came through a doorbell or a tick, none through the
         * once-a-second sweep that finds what no doorbell announced
         * (reader_sweep()): that would come, but up to a second late. */
        o = itest_client_status(client, 5000);
        assert_non_null(o);
        json_object *ring;
        assert_true(json_object_object_get_ex(o, "ring", &ring));
        fprintf(stderr, "doorbell rings %" PRId64 ", early %" PRId64 ", ticks %" PRId64 ", swept %" PRId64 "\n",
                itest_int(ring, "doorbell_rings"), itest_int(ring, "early_bells"), itest_int(ring, "ticks"),
                itest_int(ring, "swept"));
        assert_int_equal(itest_int(ring, "swept"), 0);
        json_object_put(o);
}

/* Streams of 5,000 calls, each read in looks of more than a thousand
 * records, put that ring's doorbells to rest (monitor_ring_rest()); the
 * quiet ticks after wake them, so a lone call after each stream rings
 * its doorbell again: delivered without the once-a-second sweep. Every
 * call of each stream is delivered, once. */
static void test_rest_then_lone(void **state) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        cpu_set_t all, one;
        json_object *o, *ring;
        int64_t rests0, swept0;

        o = itest_client_status(client, 5000);
        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "ring", &ring));
        rests0 = itest_int(ring, "doorbell_rests");
        swept0 = itest_int(ring, "swept");
        json_object_put(o);

        assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
        for (unsigned round = 0; round < 10; round++) {
                CPU_ZERO(&one);
                CPU_SET((int) (round % (unsigned) (ncpu > 0 ? ncpu : 1)), &one);
                (void) sched_setaffinity(0, sizeof(one), &one);
                for (unsigned i = 0; i < 5000; i++)
                        syscall(SYS_getppid);
                expect_ours(5000, round);
                usleep(50 * 1000);
                syscall(SYS_getppid);
                expect_ours(1, round);
        }
        assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
        o = itest_client_expect(client, "event", 200);
        if (o) {
                json_object_put(o);
                fail_msg("an event beyond the 50,010 we made");
        }

        o = itest_client_status(client, 5000);
        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "ring", &ring));
        fprintf(stderr, "doorbell rests %" PRId64 ", swept %" PRId64 "\n", itest_int(ring, "doorbell_rests") - rests0,
                itest_int(ring, "swept") - swept0);
        assert_true(itest_int(ring, "doorbell_rests") > rests0);
        assert_int_equal(itest_int(ring, "swept"), swept0);
        json_object_put(o);
}

/* The ring counter KEY of the status C's evmond gives ("ring": {...}). */
static int64_t ring_count_of(struct itest_client *c, const char *key) {
        json_object *o, *ring;
        int64_t v;

        o = itest_client_status(c, 5000);
        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "ring", &ring));
        v = itest_int(ring, key);
        json_object_put(o);
        return v;
}

static int64_t ring_count(const char *key) {
        return ring_count_of(client, key);
}

/* A stream of ~1,000 calls a second that moves to the other CPU every 20
 * ms, 100 times: once it flows, no doorbell rings. While one ring flows
 * the tick reads every ring, and a quiet one stays disarmed; before, each
 * move rang the doorbell of the ring it came to (armed by the tick that
 * found it quiet) and held what its look read for a release: two wakeups
 * a move. Every call is delivered, once. */
static void test_moving_stream_rings_no_doorbell(void **state) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        int64_t rings0, rings;
        cpu_set_t all, one;

        rings0 = ring_count("doorbell_rings");
        assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
        for (unsigned move = 0; move < 100; move++) {
                CPU_ZERO(&one);
                CPU_SET((int) (move % (unsigned) (ncpu > 1 ? 2 : 1)), &one);
                (void) sched_setaffinity(0, sizeof(one), &one);
                for (unsigned i = 0; i < 20; i++) {
                        syscall(SYS_getppid);
                        usleep(1000);
                }
        }
        assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
        expect_ours(2000, 0);
        json_object *o = itest_client_expect(client, "event", 200);
        if (o) {
                json_object_put(o);
                fail_msg("an event beyond the 2,000 we made");
        }
        rings = ring_count("doorbell_rings") - rings0;
        fprintf(stderr, "100 moves of a 1 kHz stream: %" PRId64 " doorbell rings\n", rings);
        /* Its start rings each ring's doorbell once or twice (the first
         * record, then the second that switches to the tick); a host
         * that holds the stream off its CPU for a whole tick may arm the
         * rings between two calls: 4 to 29 here, by the hour (a usleep()
         * of 1 ms that sleeps 2 leaves a quiet half tick). Before: about
         * two a move, 200; a quarter of that is the bound. */
        if (rings > 50)
                fail_msg("%" PRId64 " doorbell rings for one stream moving between CPUs (at most 50 expected)", rings);
}

/* 100 spells of three calls 300 µs apart (a process's fork, exec and
 * exit), 30 ms apart: each call is read at its own doorbell, the ring
 * stays armed, and no tick runs. The doorbells' copies are counted
 * against what each look found (monitor_ring_bell_copies()), so a look
 * that came between a copy and its record looks again rather than leave
 * it to the sweep. Before: the second call switched the ring to the
 * tick, two more wakeups a spell (a release, a tick). */
static void test_spells_read_lone(void **state) {
        int64_t ticks0, swept0, ticks, swept;

        ticks0 = ring_count("ticks");
        swept0 = ring_count("swept");
        for (unsigned spell = 0; spell < 100; spell++) {
                for (unsigned i = 0; i < 3; i++) {
                        syscall(SYS_getppid);
                        usleep(300);
                }
                usleep(30 * 1000);
        }
        expect_ours(300, 0);
        ticks = ring_count("ticks") - ticks0;
        swept = ring_count("swept") - swept0;
        fprintf(stderr, "100 spells of 3 calls: %" PRId64 " ticks, %" PRId64 " swept\n", ticks, swept);
        assert_int_equal(swept, 0);
        /* A host that holds the caller off its CPU may still make a
         * spell's calls look like one more; before, ~200. */
        if (ticks > 40)
                fail_msg("%" PRId64 " ticks for 100 spells of three lone calls (at most 40 expected)", ticks);
}

/* A targeted process that makes one call and exits at once: its record is
 * read at its doorbell, not left to the once-a-second sweep. Once the task
 * is gone perf_poll() reports its doorbell as HUP alone, the wakeup its
 * record asked for included. Reading only on EPOLLIN left the call to the
 * sweep whenever the task was gone before evmond woke: in 1 round of 3
 * here (and test-perfev's enable_on_exec child lost its page faults to a
 * client that had stopped reading). Its own evmond per round: the target
 * is the child. */
static void test_target_exit_rings(void **state) {
        for (unsigned round = 0; round < 8; round++) {
                struct itest_daemon d = {};
                struct itest_client *c = calloc(1, sizeof(*c));
                int gate[2], status;
                char config[512], b;
                json_object *o;
                int64_t swept;
                pid_t child;

                assert_non_null(c);
                assert_int_equal(pipe2(gate, O_CLOEXEC), 0);
                child = itest_fork();
                assert_true(child >= 0);
                if (child == 0) {
                        close(gate[1]);
                        if (read(gate[0], &b, 1) != 1)
                                _exit(1);
                        syscall(SYS_getppid);
                        _exit(0);
                }
                close(gate[0]);
                snprintf(config, sizeof(config),
                         "{\"targets\": {\"pids\": [%d]},\n"
                         " \"events\": [{\"tracepoint\": \"syscalls:sys_enter_getppid\"}]}\n",
                         (int) child);
                assert_int_equal(itest_session_start(&d, c, config), 0);
                assert_int_equal(write(gate[1], "x", 1), 1);
                close(gate[1]);
                assert_int_equal(waitpid(child, &status, 0), child);
                assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

                o = itest_client_expect(c, "event", 5000);
                if (!o)
                        fail_msg("round %u: the target's call never came", round);
                assert_int_equal(itest_int(o, "pid"), child);
                json_object_put(o);
                swept = ring_count_of(c, "swept");
                fprintf(stderr, "round %u: doorbell rings %" PRId64 ", swept %" PRId64 "\n", round,
                        ring_count_of(c, "doorbell_rings"), swept);
                assert_int_equal(swept, 0);
                itest_client_close(c);
                free(c);
                assert_int_equal(itest_daemon_stop(&d), 0);
                itest_daemon_cleanup(&d);
        }
}

int main(void) {
        static const char *const need[] = { "syscalls/sys_enter_getppid", NULL };
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_idle_does_not_wake),
                cmocka_unit_test(test_bursts_never_left_behind),
                cmocka_unit_test(test_rest_then_lone),
                cmocka_unit_test(test_moving_stream_rings_no_doorbell),
                cmocka_unit_test(test_spells_read_lone),
                cmocka_unit_test(test_target_exit_rings),
        };

        itest_require(need);
#ifdef ARM_DELAY_USEC
        /* The evmond we start inherits it (src/daemon/reader.c). */
        setenv("EVMON_TEST_ARM_DELAY_USEC", ARM_DELAY_USEC, 1);
#endif
        return cmocka_run_group_tests(tests, setup, teardown);
}
