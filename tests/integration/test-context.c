/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Process and container context on the real kernel (issue 11): a uniquely
 * named program exec'd by this test carries its comm, executable, parent
 * and uid; its second thread's events carry the process; a prctl rename
 * shows from then on; moved through cgroups made here in the docker,
 * containerd (under a pod), CRI-O, podman and nspawn layouts at the
 * places those runtimes put them, its events carry each one's container
 * id, and a subscription by an id gets exactly that container's events;
 * the same layouts below a subtree of the test's (as a user with a
 * delegated cgroup would make them, issue 26) name no container, and a
 * rootless podman one under user@UID.service carries container_uid and
 * reaches only a subscription by "UID/ID". Each runtime's state, made
 * under a test root as the runtime writes it (issue 31), names the
 * container, image and pod in "container_info"; the spoofs have none,
 * the rootless one and an id docker does not keep are not verified, and
 * a docker rename is seen. cpu-clock callchains name its functions
 * (checked against nm) and kernel functions (against /proc/kallsyms).
 * Root, tracefs and the getpgid tracepoint, else 77; the cgroup part
 * needs a cgroup2 mount and is skipped without one. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "itest.h"

#define GETPGID "syscalls:sys_enter_getpgid"
#define MARK_MAIN 2000000001L
#define MARK_THREAD 2000000002L
#define MARK_RENAMED 2000000003L
#define MARK_CGROUP 2000000100L

static struct itest_daemon daemon_ = { .pid = -1 };
static char tmp[] = "/tmp/evmon-ctx-XXXXXX";
static char prog[256], comm[16];
static char cg_mount[256], cg_root[512];

static int setup(void **state) {
        static const char *const need[] = { "syscalls/sys_enter_getpgid", "sched/sched_process_exec", NULL };
        char src[512], cmd[1200];

        itest_require(need);
        assert_non_null(mkdtemp(tmp));
        /* A program of a name no other process has. */
        snprintf(comm, sizeof(comm), "evctx-%06d", (int) (getpid() % 1000000));
        snprintf(prog, sizeof(prog), "%s/%s", tmp, comm);
        itest_build_path("tests/integration/evmon-context-child", src, sizeof(src));
        snprintf(cmd, sizeof(cmd), "cp %s %s", src, prog);
        assert_int_equal(system(cmd), 0);
        (void) test_cgroup2_mount(cg_mount, sizeof(cg_mount));
        return 0;
}

static void cgroups_remove(void);

static int teardown(void **state) {
        char cmd[600];

        itest_daemon_cleanup(&daemon_);
        if (cg_root[0])
                cgroups_remove();
        snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
        return system(cmd) == 0 ? 0 : -1;
}

/* Runs the program with ARGS (NULL-terminated) from this process and
 * waits for it; returns its pid. */
static pid_t run_prog(const char *const *args) {
        const char *argv[16] = { prog };
        pid_t pid;
        int st;

        for (size_t i = 0; args[i] && i < 14; i++)
                argv[i + 1] = args[i];
        pid = itest_fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                execv(prog, (char *const *) argv);
                _exit(127);
        }
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
        return pid;
}

static struct itest_client *client_new(const char *subscribe) {
        struct itest_client *c = malloc(sizeof(*c));
        json_object *o;

        assert_non_null(c);
        assert_int_equal(itest_client_connect(c, daemon_.socket), 0);
        o = itest_client_expect(c, "hello", 5000);
        assert_non_null(o);
        json_object_put(o);
        if (subscribe) {
                assert_int_equal(itest_client_send(c, subscribe), 0);
                /* lines before the answer came before the subscription */
                while ((o = itest_client_next(c, 5000)) && (strcmp(itest_str(o, "type"), "event") == 0 ||
                                                             strcmp(itest_str(o, "type"), "schema") == 0))
                        json_object_put(o);
                assert_non_null(o);
                if (strcmp(itest_str(o, "type"), "subscribed") != 0)
                        fail_msg("subscribe %s: %s", subscribe, json_object_to_json_string(o));
                json_object_put(o);
        }
        return c;
}

static void client_free(struct itest_client *c) {
        itest_client_close(c);
        free(c);
}

static json_object *get(json_object *o, const char *path) {
        char key[64];
        const char *dot;

        while (o && (dot = strchr(path, '.'))) {
                snprintf(key, sizeof(key), "%.*s", (int) (dot - path), path);
                if (!json_object_object_get_ex(o, key, &o))
                        return NULL;
                path = dot + 1;
        }
        return o && json_object_object_get_ex(o, path, &o) ? o : NULL;
}

static const char *get_str(json_object *o, const char *path) {
        json_object *v = get(o, path);

        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static int64_t get_int(json_object *o, const char *path) {
        json_object *v = get(o, path);

        return v && json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : -1;
}

/* ---- the process ------------------------------------------------------- */

struct proc_check {
        pid_t pid;
        int main, thread, renamed, exec;
};

static void check_proc_line(json_object *o, void *ud) {
        struct proc_check *k = ud;
        const char *event = itest_str(o, "event");
        int64_t mark;

        if (strcmp(itest_str(o, "type"), "event") != 0 || itest_int(o, "pid") != k->pid)
                return;
        /* Every line of the program's: its executable, this test as its
         * parent, root's uid. */
        assert_string_equal(get_str(o, "proc.exe") ?: "(none)", prog);
        assert_int_equal(get_int(o, "proc.ppid"), getpid());
        assert_int_equal(get_int(o, "proc.uid"), 0);
        assert_non_null(get_str(o, "cgroup"));
        assert_null(get(o, "container"));
        if (strcmp(event, "sched:sched_process_exec") == 0) {
                assert_string_equal(get_str(o, "proc.comm"), comm);
                k->exec++;
                return;
        }
        assert_string_equal(event, GETPGID);
        mark = get_int(o, "fields.pid");
        if (mark == MARK_MAIN) {
                assert_int_equal(itest_int(o, "tid"), k->pid);
                assert_string_equal(get_str(o, "proc.comm"), comm);
                k->main++;
        } else if (mark == MARK_THREAD) {
                /* another thread, the same process */
                assert_int_not_equal(itest_int(o, "tid"), k->pid);
                assert_string_equal(get_str(o, "proc.comm"), comm);
                k->thread++;
        } else if (mark == MARK_RENAMED) {
                assert_string_equal(get_str(o, "proc.comm"), "evctx-renamed");
                k->renamed++;
        } else
                fail_msg("unexpected mark %" PRId64, mark);
}

static void test_process(void **state) {
        static const char config[] =
                "{\"events\": [{\"tracepoint\": \"sched:sched_process_exec\"},\n"
                "  {\"tracepoint\": \"" GETPGID "\", \"filter\": \"pid >= 2000000000 && pid < 2000001000\"}]}\n";
        static const char *const args[] = { "basic", NULL };
        struct proc_check k = {};
        struct itest_client *c;
        char *text;
        size_t len;

        assert_int_equal(itest_daemon_start(&daemon_, config), 0);
        c = client_new(NULL);
        k.pid = run_prog(args);
        text = itest_client_slurp(c, 500, 20000, &len);
        itest_for_each_line(text, len, check_proc_line, &k);
        free(text);
        fprintf(stderr, "pid %d: exec %d, main %d, thread %d, renamed %d\n", (int) k.pid, k.exec, k.main, k.thread,
                k.renamed);
        assert_int_equal(k.exec, 1);
        assert_int_equal(k.main, 3);
        assert_int_equal(k.thread, 3);
        assert_int_equal(k.renamed, 3);
        client_free(c);

        /* status: the table's size and bound */
        c = client_new(NULL);
        assert_int_equal(itest_client_send(c, "{\"type\":\"status\"}\n"), 0);
        {
                json_object *o = itest_client_expect(c, "status", 5000);

                assert_non_null(o);
                assert_true(get_int(o, "context.procs") > 10);
                assert_true(get_int(o, "context.hits") >= 10);
                assert_true(get_int(o, "context.bound_bytes") > 0);
                json_object_put(o);
        }
        client_free(c);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
        itest_daemon_cleanup(&daemon_);
}

/* "context": false: no context keys at all */
static void test_off(void **state) {
        static const char config[] =
                "{\"context\": false, \"events\": [{\"tracepoint\": \"" GETPGID "\", \"filter\": \"pid >= 2000000000 && pid < 2000001000\"}]}\n";
        static const char *const args[] = { "basic", NULL };
        struct itest_client *c;
        json_object *o;
        int n = 0;

        pid_t pid;

        assert_int_equal(itest_daemon_start(&daemon_, config), 0);
        c = client_new(NULL);
        pid = run_prog(args);
        while ((o = itest_client_expect(c, "event", 2000))) {
                assert_null(get(o, "proc"));
                assert_null(get(o, "cgroup"));
                n += itest_int(o, "pid") == pid;
                json_object_put(o);
        }
        assert_int_equal(n, 9);
        client_free(c);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
        itest_daemon_cleanup(&daemon_);
}

/* ---- containers ---------------------------------------------------------- */

#define ID_DOCKER "3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a"
#define ID_CTRD "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID_CRIO "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define ID_PODMAN "aaaabbbbccccddddeeeeffff0000111122223333444455556666777788889999"
#define ID_GHOST "5555666677778888999900001111222233334444555566667777888899990000"
#define POD "8d4e6f1a-2b3c-4d5e-8f9a-0b1c2d3e4f5a"

#define POD_SLICE "kubepods-besteffort-pod8d4e6f1a_2b3c_4d5e_8f9a_0b1c2d3e4f5a.slice/"

/* TOP: made at the cgroup2 root, where the runtime puts it; else below
 * the test's own subtree (cg_root), as anyone with a delegated subtree
 * could. UID: a rootless container's user, else -1. */
static const struct layout {
        const char *rel, *id, *pod;
        int64_t uid;
        bool top;
        /* What the runtime's state made below says (issue 31): VERIFIED
         * -1 when the line has no container_info. */
        int verified;
        const char *runtime, *name, *image, *pod_name, *pod_ns;
} layouts[] = {
        { "system.slice/docker-" ID_DOCKER ".scope", ID_DOCKER, NULL, -1, true, 1, "docker", "payments-api",
          "registry.example/payments/api:2.4.1", NULL, NULL },
        { "kubepods.slice/kubepods-besteffort.slice/" POD_SLICE "cri-containerd-" ID_CTRD ".scope", ID_CTRD, POD, -1,
          true, 1, "containerd", "api", "registry.example/web/api:1.0", "web-7d9f8-xk2lp", "prod" },
        { "kubepods/burstable/pod" POD "/crio-" ID_CRIO, ID_CRIO, POD, -1, true, 1, "cri-o", "coredns",
          "registry.k8s.io/coredns/coredns:v1.11.1", "coredns-5dd5756b68-4mtdm", "kube-system" },
        { "machine.slice/libpod-" ID_PODMAN ".scope", ID_PODMAN, NULL, -1, true, 1, "podman", "web",
          "docker.io/library/nginx:latest", NULL, NULL },
        { "machine.slice/systemd-nspawn@evtest.service", "evtest", NULL, -1, true, 1, "systemd-nspawn", "evtest",
          "/var/lib/machines/evtest", NULL, NULL },
        { "system.slice/plain.service", NULL, NULL, -1, false, -1 },
        /* spoofs: the same layouts below the test's subtree */
        { "kubepods.slice/kubepods-besteffort.slice/" POD_SLICE "cri-containerd-" ID_CTRD ".scope", NULL, NULL, -1,
          false, -1 },
        { "system.slice/docker-" ID_DOCKER ".scope", NULL, NULL, -1, false, -1 },
        /* rootless podman with the rootful one's id: the user's say,
         * never verified, though the rootful state names that id */
        { "user.slice/user-65534.slice/user@65534.service/app.slice/libpod-" ID_PODMAN ".scope", ID_PODMAN, NULL, 65534,
          true, 0, "podman" },
        { "lxc.payload.lxctest", "lxctest", NULL, -1, true, 1, "lxc", "lxctest", NULL, NULL, NULL },
        /* at docker's place, an id docker's state does not have */
        { "system.slice/docker-" ID_GHOST ".scope", ID_GHOST, NULL, -1, true, 0, "docker" },
};
static const char *docker_name = "payments-api";  /* the docker layout's, renamed below */
static char rt_root[512];
#define N_LAYOUTS (sizeof(layouts) / sizeof(layouts[0]))

struct cg_check {
        pid_t pid;
        int n[N_LAYOUTS];
        int other;
};

static void check_cg_line(json_object *o, void *ud) {
        struct cg_check *k = ud;
        int64_t mark;
        size_t i;
        char want[1024];

        if (strcmp(itest_str(o, "type"), "event") != 0 || itest_int(o, "pid") != k->pid ||
            strcmp(itest_str(o, "event"), GETPGID) != 0) {
                if (strcmp(itest_str(o, "type"), "event") == 0)
                        k->other++;
                return;
        }
        mark = get_int(o, "fields.pid");
        assert_true(mark >= MARK_CGROUP && mark < MARK_CGROUP + (int64_t) N_LAYOUTS);
        i = (size_t) (mark - MARK_CGROUP);
        snprintf(want, sizeof(want), "%s/%s", layouts[i].top ? "" : cg_root + strlen(cg_mount), layouts[i].rel);
        assert_string_equal(get_str(o, "cgroup") ?: "(none)", want);
        if (layouts[i].id)
                assert_string_equal(get_str(o, "container") ?: "(none)", layouts[i].id);
        else
                assert_null(get(o, "container"));
        if (layouts[i].uid >= 0)
                assert_int_equal(get_int(o, "container_uid"), layouts[i].uid);
        else
                assert_null(get(o, "container_uid"));
        if (layouts[i].pod)
                assert_string_equal(get_str(o, "pod") ?: "(none)", layouts[i].pod);
        else
                assert_null(get(o, "pod"));
        assert_string_equal(get_str(o, "proc.comm"), comm);
        if (layouts[i].verified < 0)
                assert_null(get(o, "container_info"));
        else {
                json_object *v = get(o, "container_info.verified");
                const char *name = i == 0 ? docker_name : layouts[i].name;

                assert_non_null(v);
                assert_int_equal(json_object_get_boolean(v), layouts[i].verified);
                assert_string_equal(get_str(o, "container_info.runtime") ?: "(none)", layouts[i].runtime);
                if (name)
                        assert_string_equal(get_str(o, "container_info.name") ?: "(none)", name);
                else
                        assert_null(get(o, "container_info.name"));
                if (layouts[i].image)
                        assert_string_equal(get_str(o, "container_info.image") ?: "(none)", layouts[i].image);
                else
                        assert_null(get(o, "container_info.image"));
                if (layouts[i].pod_name) {
                        assert_string_equal(get_str(o, "container_info.pod.name") ?: "(none)", layouts[i].pod_name);
                        assert_string_equal(get_str(o, "container_info.pod.namespace") ?: "(none)", layouts[i].pod_ns);
                        assert_string_equal(get_str(o, "container_info.pod.uid") ?: "(none)", layouts[i].pod);
                } else
                        assert_null(get(o, "container_info.pod"));
        }
        k->n[i]++;
}

/* The cgroups made at the root (outside cg_root), in order: removed
 * deepest first, and none that was there before. */
static char made[64][1024];
static size_t n_made;

static void mkdirs(const char *path) {
        char p[1024];

        snprintf(p, sizeof(p), "%s", path);
        for (char *s = p + strlen(cg_mount) + 1;; s++) {
                bool last = !(s = strchr(s, '/'));

                if (!last)
                        *s = 0;
                if (mkdir(p, 0755) == 0) {
                        if (strncmp(p, cg_root, strlen(cg_root)) != 0) {
                                assert_true(n_made < sizeof(made) / sizeof(made[0]));
                                snprintf(made[n_made++], sizeof(made[0]), "%s", p);
                        }
                } else if (errno != EEXIST)
                        fail_msg("mkdir %s: %m", p);
                if (last)
                        break;
                *s = '/';
        }
}

static void cgroups_remove(void) {
        char cmd[1200];

        while (n_made > 0)
                if (rmdir(made[--n_made]) < 0)
                        fprintf(stderr, "warning: could not remove %s: %m\n", made[n_made]);

        /* rmdir only (cgroupfs has no files to delete), deepest first */
        snprintf(cmd, sizeof(cmd), "find %s -depth -type d -exec rmdir {} + 2>/dev/null", cg_root);
        for (int i = 0; i < 50 && access(cg_root, F_OK) == 0; i++) {
                if (i == 49)
                        fprintf(stderr, "warning: could not remove %s\n", cg_root);
                (void) system(cmd);
                usleep(100000);
        }
}

static json_object *status(void);

/* A file of the runtimes' state under rt_root, written as they write
 * them: a temporary file renamed over. */
static void rt_put(const char *dir, const char *file, const char *text) {
        char p[1024], tmpf[1100];
        FILE *f;

        snprintf(p, sizeof(p), "%s/%s", rt_root, dir);
        for (char *s = p + strlen(rt_root) + 1;; s++) {
                bool last = !(s = strchr(s, '/'));

                if (!last)
                        *s = 0;
                if (mkdir(p, 0755) < 0 && errno != EEXIST)
                        fail_msg("mkdir %s: %m", p);
                if (last)
                        break;
                *s = '/';
        }
        snprintf(p, sizeof(p), "%s/%s/%s", rt_root, dir, file);
        snprintf(tmpf, sizeof(tmpf), "%s.tmp", p);
        assert_non_null(f = fopen(tmpf, "w"));
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(rename(tmpf, p), 0);
}

static void rt_docker(const char *name) {
        char text[1024];

        /* moby's config.v2.json: "Name" with a leading '/'. */
        snprintf(text, sizeof(text),
                 "{\"ID\":\"" ID_DOCKER "\",\"State\":{\"Running\":true},\"Config\":{\"Hostname\":\"3f2a1b9c8d7e\","
                 "\"Image\":\"registry.example/payments/api:2.4.1\"},\"Image\":\"sha256:" ID_CTRD "\","
                 "\"Name\":\"/%s\",\"Driver\":\"overlay2\"}", name);
        rt_put("var/lib/docker/containers/" ID_DOCKER, "config.v2.json", text);
}

/* Each runtime's state for the layouts above, at its place under
 * rt_root, which evmond takes for "/" (EVMON_TEST_RUNTIME_ROOT). */
static void rt_make(void) {
        if (rt_root[0])
                return;  /* made by an earlier test */
        snprintf(rt_root, sizeof(rt_root), "%s/rt", tmp);
        assert_int_equal(mkdir(rt_root, 0755), 0);
        rt_docker("payments-api");
        rt_put("run/containerd/io.containerd.runtime.v2.task/k8s.io/" ID_CTRD, "config.json",
               "{\"ociVersion\":\"1.1.0\",\"process\":{\"args\":[\"/app\"]},\"annotations\":{"
               "\"io.kubernetes.cri.container-type\":\"container\",\"io.kubernetes.cri.container-name\":\"api\","
               "\"io.kubernetes.cri.image-name\":\"registry.example/web/api:1.0\","
               "\"io.kubernetes.cri.sandbox-name\":\"web-7d9f8-xk2lp\",\"io.kubernetes.cri.sandbox-namespace\":\"prod\","
               "\"io.kubernetes.cri.sandbox-uid\":\"" POD "\"}}");
        rt_put("run/containers/storage/overlay-containers/" ID_CRIO "/userdata", "config.json",
               "{\"ociVersion\":\"1.0.2-dev\",\"annotations\":{\"io.container.manager\":\"cri-o\","
               "\"io.kubernetes.container.name\":\"coredns\",\"io.kubernetes.cri-o.ContainerID\":\"" ID_CRIO "\","
               "\"io.kubernetes.cri-o.ImageName\":\"registry.k8s.io/coredns/coredns:v1.11.1\","
               "\"io.kubernetes.pod.name\":\"coredns-5dd5756b68-4mtdm\",\"io.kubernetes.pod.namespace\":\"kube-system\","
               "\"io.kubernetes.pod.uid\":\"" POD "\"}}");
        rt_put("var/lib/containers/storage/overlay-containers", "containers.json",
               "[{\"id\":\"" ID_PODMAN "\",\"names\":[\"web\"],\"image\":\"" ID_CTRD "\",\"layer\":\"" ID_CRIO "\","
               "\"metadata\":\"{\\\"image-name\\\":\\\"docker.io/library/nginx:latest\\\",\\\"name\\\":\\\"web\\\"}\"}]");
        rt_put("run/systemd/machines", "evtest",
               "# This is private data. Do not parse.\nNAME=evtest\nSCOPE=systemd-nspawn@evtest.service\n"
               "ROOT=/var/lib/machines/evtest\nCLASS=container\n");
        rt_put("var/lib/lxc/lxctest", "config", "lxc.uts.name = lxctest\nlxc.rootfs.path = dir:/var/lib/lxc/lxctest/rootfs\n");
}

static void test_containers(void **state) {
        static const char config[] =
                "{\"ring\": {\"pages\": 256}, \"events\": [{\"tracepoint\": \"sched:sched_process_exec\"},\n"
                "  {\"tracepoint\": \"" GETPGID "\", \"filter\": \"pid >= 2000000000 && pid < 2000001000\"}]}\n";
        struct itest_client *all, *by_id[N_LAYOUTS], *none, *by_name[4];
        static const size_t by_name_layout[4] = { 0, 3, 1, 2 };
        char dirs[N_LAYOUTS][1024], line[512];
        const char *args[N_LAYOUTS + 2] = { "cgroups" };
        struct cg_check k = {};
        char *text;
        size_t len;

        if (!cg_mount[0])
                skip();  /* no cgroup2 mount here */
        snprintf(cg_root, sizeof(cg_root), "%s/evmon-ctx-%d", cg_mount, (int) getpid());
        rt_make();
        assert_int_equal(setenv("EVMON_TEST_RUNTIME_ROOT", rt_root, 1), 0);
        assert_int_equal(itest_daemon_start(&daemon_, config), 0);
        (void) unsetenv("EVMON_TEST_RUNTIME_ROOT");
        /* Made while evmond runs: it learns them from CGROUP records. */
        for (size_t i = 0; i < N_LAYOUTS; i++) {
                snprintf(dirs[i], sizeof(dirs[i]), "%s/%s", layouts[i].top ? cg_mount : cg_root, layouts[i].rel);
                mkdirs(dirs[i]);
                args[i + 1] = dirs[i];
        }
        all = client_new(NULL);
        for (size_t i = 0; i < N_LAYOUTS; i++) {
                by_id[i] = NULL;
                if (!layouts[i].id)
                        continue;
                /* docker's by its short id, as `docker ps` shows it; a
                 * rootless one's as "UID/ID" */
                if (layouts[i].uid >= 0)
                        snprintf(line, sizeof(line), "{\"type\":\"subscribe\",\"containers\":[\"%" PRId64 "/%s\"]}\n",
                                 layouts[i].uid, layouts[i].id);
                else
                        snprintf(line, sizeof(line), "{\"type\":\"subscribe\",\"containers\":[\"%.*s\"]}\n",
                                 i == 0 ? 12 : (int) strlen(layouts[i].id), layouts[i].id);
                by_id[i] = client_new(line);
        }
        none = client_new("{\"type\":\"subscribe\",\"containers\":[\"0000000000000000\"]}\n");
        /* By what the runtime calls them (issue 31): docker's by name,
         * podman's "web" by a pattern (the rootless cgroup with its id is
         * not verified, so not "web"), containerd's by its namespace. */
        by_name[0] = client_new("{\"type\":\"subscribe\",\"containers\":[\"payments-api\"]}\n");
        by_name[1] = client_new("{\"type\":\"subscribe\",\"containers\":[\"w?b\"]}\n");
        by_name[2] = client_new("{\"type\":\"subscribe\",\"namespaces\":[\"prod\"]}\n");
        by_name[3] = client_new("{\"type\":\"subscribe\",\"namespaces\":[\"kube-*\"],\"containers\":[\"core*\"]}\n");

        k.pid = run_prog(args);
        text = itest_client_slurp(all, 500, 20000, &len);
        itest_for_each_line(text, len, check_cg_line, &k);
        free(text);
        for (size_t i = 0; i < N_LAYOUTS; i++) {
                fprintf(stderr, "%s: %d events\n", layouts[i].rel, k.n[i]);
                assert_int_equal(k.n[i], 3);
        }
        /* Each container's subscriber: exactly its 3 events. */
        for (size_t i = 0; i < N_LAYOUTS; i++) {
                struct cg_check s = { .pid = k.pid };

                if (!by_id[i])
                        continue;
                text = itest_client_slurp(by_id[i], 300, 20000, &len);
                itest_for_each_line(text, len, check_cg_line, &s);
                free(text);
                for (size_t j = 0; j < N_LAYOUTS; j++)
                        assert_int_equal(s.n[j], i == j ? 3 : 0);
                assert_int_equal(s.other, 0);
                client_free(by_id[i]);
        }
        {
                struct cg_check s = { .pid = k.pid };

                text = itest_client_slurp(none, 300, 20000, &len);
                itest_for_each_line(text, len, check_cg_line, &s);
                free(text);
                for (size_t j = 0; j < N_LAYOUTS; j++)
                        assert_int_equal(s.n[j], 0);
                assert_int_equal(s.other, 0);
        }
        client_free(none);
        for (size_t i = 0; i < 4; i++) {
                struct cg_check s = { .pid = k.pid };

                text = itest_client_slurp(by_name[i], 300, 20000, &len);
                itest_for_each_line(text, len, check_cg_line, &s);
                free(text);
                for (size_t j = 0; j < N_LAYOUTS; j++)
                        assert_int_equal(s.n[j], j == by_name_layout[i] ? 3 : 0);
                assert_int_equal(s.other, 0);
                client_free(by_name[i]);
        }
        /* docker rename: the state file written anew is seen (looked at
         * again after a second), the other containers' names stay. */
        rt_docker("payments-api-v2");
        docker_name = "payments-api-v2";
        usleep(1200 * 1000);
        memset(&k, 0, sizeof(k));
        k.pid = run_prog(args);
        text = itest_client_slurp(all, 500, 20000, &len);
        itest_for_each_line(text, len, check_cg_line, &k);
        free(text);
        for (size_t i = 0; i < N_LAYOUTS; i++)
                assert_int_equal(k.n[i], 3);
        docker_name = "payments-api";
        {
                /* status counts them: 6 named by their runtime's state,
                 * the rootless one and docker's ghost not. */
                json_object *st = status();

                assert_int_equal(get_int(st, "context.containers.known"), 8);
                assert_int_equal(get_int(st, "context.containers.verified"), 6);
                assert_int_equal(get_int(st, "context.containers.unverified"), 2);
                json_object_put(st);
        }
        client_free(all);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
        itest_daemon_cleanup(&daemon_);
        cgroups_remove();
}

/* targets.containers and targets.namespaces (issue 31): every client
 * gets only what the config's containers and namespaces make, by the
 * names their runtimes give them; a reload changes them. */
static void test_container_targets(void **state) {
        static const char config[] =
                "{\"ring\": {\"pages\": 256}, \"targets\": {\"containers\": [\"payments-api\", \"w?b\"]},\n"
                "  \"events\": [{\"tracepoint\": \"" GETPGID "\", \"filter\": \"pid >= 2000000000 && pid < 2000001000\"}]}\n";
        static const char config_ns[] =
                "{\"ring\": {\"pages\": 256}, \"targets\": {\"namespaces\": [\"kube-*\"]},\n"
                "  \"events\": [{\"tracepoint\": \"" GETPGID "\", \"filter\": \"pid >= 2000000000 && pid < 2000001000\"}]}\n";
        char dirs[N_LAYOUTS][1024];
        const char *args[N_LAYOUTS + 2] = { "cgroups" };
        struct itest_client *c;
        json_object *o;

        if (!cg_mount[0])
                skip();  /* no cgroup2 mount here */
        snprintf(cg_root, sizeof(cg_root), "%s/evmon-ctx-%d", cg_mount, (int) getpid());
        rt_make();
        rt_docker("payments-api");      /* test_containers renamed it */
        assert_int_equal(setenv("EVMON_TEST_RUNTIME_ROOT", rt_root, 1), 0);
        assert_int_equal(itest_daemon_start(&daemon_, config), 0);
        (void) unsetenv("EVMON_TEST_RUNTIME_ROOT");
        for (size_t i = 0; i < N_LAYOUTS; i++) {
                snprintf(dirs[i], sizeof(dirs[i]), "%s/%s", layouts[i].top ? cg_mount : cg_root, layouts[i].rel);
                mkdirs(dirs[i]);
                args[i + 1] = dirs[i];
        }
        for (int round = 0; round < 2; round++) {
                struct cg_check k = {};
                char *text;
                size_t len;

                c = client_new(NULL);
                k.pid = run_prog(args);
                text = itest_client_slurp(c, 500, 20000, &len);
                itest_for_each_line(text, len, check_cg_line, &k);
                free(text);
                for (size_t i = 0; i < N_LAYOUTS; i++) {
                        /* docker's payments-api and podman's web; then
                         * CRI-O's pod in kube-system */
                        bool in = round == 0 ? i == 0 || i == 3 : i == 2;

                        fprintf(stderr, "round %d, %s: %d events\n", round, layouts[i].rel, k.n[i]);
                        assert_int_equal(k.n[i], in ? 3 : 0);
                }
                assert_int_equal(k.other, 0);
                if (round == 0) {
                        /* Not a restart key: a reload takes it. */
                        FILE *f = fopen(daemon_.config, "we");

                        assert_non_null(f);
                        fputs(config_ns, f);
                        assert_int_equal(fclose(f), 0);
                        assert_int_equal(itest_client_send(c, "{\"type\":\"reload\"}\n"), 0);
                        o = itest_client_expect(c, "reload", 10000);
                        assert_non_null(o);
                        if (!json_object_get_boolean(get(o, "ok")))
                                fail_msg("reload: %s", json_object_to_json_string(o));
                        json_object_put(o);
                }
                client_free(c);
        }
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
        itest_daemon_cleanup(&daemon_);
        cgroups_remove();
}

/* ---- symbols ---------------------------------------------------------------- */

struct names {
        char **v;
        size_t n, cap;
};

static void names_add(struct names *s, const char *name) {
        if (s->n == s->cap) {
                s->cap = s->cap ? s->cap * 2 : 1024;
                s->v = realloc(s->v, s->cap * sizeof(char *));
                assert_non_null(s->v);
        }
        s->v[s->n++] = strdup(name);
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static bool names_has(const struct names *s, const char *name) {
        return bsearch(&name, s->v, s->n, sizeof(char *), cmp_str) != NULL;
}

/* Text symbols (t, T, w, W) of `nm` output or /proc/kallsyms lines. */
static void names_read(struct names *s, FILE *f) {
        char line[1024], name[512], type;
        unsigned long long addr;

        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "%llx %c %511s", &addr, &type, name) == 3 && strchr("tTwW", type))
                        names_add(s, name);
        qsort(s->v, s->n, sizeof(char *), cmp_str);
}

struct sym_check {
        pid_t pid;
        const struct names *nm, *kallsyms;
        int samples, user_named, busy, kernel_named;
};

static void check_sym_line(json_object *o, void *ud) {
        struct sym_check *k = ud;
        json_object *cc = get(o, "sample.callchain");

        if (strcmp(itest_str(o, "type"), "event") != 0 || itest_int(o, "pid") != k->pid || !cc)
                return;
        k->samples++;
        for (size_t i = 0; i < json_object_array_length(cc); i++) {
                json_object *seg = json_object_array_get_idx(cc, i), *ips = get(seg, "ips"), *syms = get(seg, "syms");
                const char *ctx = get_str(seg, "context");

                assert_non_null(syms);
                assert_int_equal(json_object_array_length(syms), json_object_array_length(ips));
                for (size_t j = 0; j < json_object_array_length(syms); j++) {
                        json_object *f = json_object_array_get_idx(syms, j);
                        const char *sym = get_str(f, "sym"), *module = get_str(f, "module");
                        char name[512];
                        const char *plus;

                        if (!sym)
                                continue;
                        plus = strstr(sym, "+0x");
                        assert_non_null(plus);
                        snprintf(name, sizeof(name), "%.*s", (int) (plus - sym), sym);
                        if (strcmp(ctx, "kernel") == 0) {
                                if (!names_has(k->kallsyms, name))
                                        fail_msg("kernel frame %s is not in /proc/kallsyms", sym);
                                k->kernel_named++;
                        } else if (module && strcmp(module, prog) == 0) {
                                if (!names_has(k->nm, name))
                                        fail_msg("user frame %s is not in nm %s", sym, prog);
                                k->user_named++;
                                if (strncmp(name, "evctx_busy_", 11) == 0)
                                        k->busy++;
                        }
                }
        }
}

static void test_symbols(void **state) {
        static const char config[] =
                "{\"ring\": {\"pages\": 256}, \"events\": [{\"software\": \"cpu-clock\", \"period\": 1000000,\n"
                "  \"sample\": [\"callchain\"], \"symbols\": true}]}\n";
        static const char *const args[] = { "busy", "1500", NULL };
        struct names nm = {}, ks = {};
        struct sym_check k = { .nm = &nm, .kallsyms = &ks };
        struct itest_client *c;
        char cmd[600], *text;
        size_t len;
        FILE *f;

        f = fopen("/proc/kallsyms", "re");
        assert_non_null(f);
        names_read(&ks, f);
        fclose(f);
        if (ks.n == 0 || names_has(&ks, "0"))
                skip();
        snprintf(cmd, sizeof(cmd), "nm --defined-only %s", prog);
        f = popen(cmd, "re");
        assert_non_null(f);
        names_read(&nm, f);
        pclose(f);
        assert_true(names_has(&nm, "evctx_busy_inner"));

        assert_int_equal(itest_daemon_start(&daemon_, config), 0);
        /* Samples of every process come: this one's only, by its comm. */
        c = client_new("{\"type\":\"subscribe\",\"comms\":[\"evctx-*\"]}\n");
        k.pid = run_prog(args);
        text = itest_client_slurp(c, 500, 30000, &len);
        itest_for_each_line(text, len, check_sym_line, &k);
        free(text);
        fprintf(stderr, "%d samples: %d user frames named in %s (%d in evctx_busy_*), %d kernel frames\n", k.samples,
                k.user_named, comm, k.busy, k.kernel_named);
        assert_true(k.samples >= 100);
        assert_true(k.busy >= 50);
        assert_true(k.kernel_named >= 1);
        client_free(c);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
        itest_daemon_cleanup(&daemon_);
        for (size_t i = 0; i < nm.n; i++)
                free(nm.v[i]);
        for (size_t i = 0; i < ks.n; i++)
                free(ks.v[i]);
        free(nm.v);
        free(ks.v);
}

/* ---- churn: pid reuse and the memory bound -------------------------------- */

/* Processes the churn makes: EVMON_CHURN, else 100,000. */
static long churn_n = 100000;
#define MARK_CHURN 2100000000L

struct churn_check {
        int lines, named, wrong, no_proc;
};

static void check_churn_line(json_object *o, void *ud) {
        struct churn_check *k = ud;
        char want[24];
        int64_t mark;
        const char *name;

        if (strcmp(itest_str(o, "type"), "event") != 0)
                return;
        mark = get_int(o, "fields.pid");
        if (mark < MARK_CHURN || mark >= MARK_CHURN + churn_n)
                return;
        k->lines++;
        name = get_str(o, "proc.comm");
        if (!name) {
                k->no_proc++;
                return;
        }
        snprintf(want, sizeof(want), "c%ld", (long) (mark - MARK_CHURN));
        if (strcmp(name, want) != 0) {
                if (k->wrong < 5)
                        fprintf(stderr, "mix-up: event of %s (pid %" PRId64 ") says %s\n", want, itest_int(o, "pid"), name);
                k->wrong++;
        } else
                k->named++;
}

static int64_t rss_kib(pid_t pid) {
        char path[64], line[256];
        int64_t kib = -1;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        f = fopen(path, "re");
        assert_non_null(f);
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "VmRSS: %" SCNd64, &kib) == 1)
                        break;
        fclose(f);
        return kib;
}

static json_object *status(void) {
        struct itest_client *c = client_new(NULL);
        json_object *o;

        assert_int_equal(itest_client_send(c, "{\"type\":\"status\"}\n"), 0);
        o = itest_client_expect(c, "status", 5000);
        assert_non_null(o);
        client_free(c);
        return o;
}

/* 100,000 short-lived processes, each renaming itself "cSEQ" and then
 * making one getpgid(MARK_CHURN + SEQ): with pid_max at 32768 here (and
 * a few hundred in tests/vm/context.sh) every pid is reused, and each event must carry its own process's name, never
 * that of an earlier holder of its pid. evmond's RSS grows by less than
 * the table's bound and the table shrinks back. The children run on one
 * CPU, so their records and events share a ring and come in order. */
static void test_churn(void **state) {
        static const char config[] =
                "{\"ring\": {\"pages\": 1024}, \"clients\": {\"queue_kib\": 262144},\n"
                "  \"events\": [{\"tracepoint\": \"" GETPGID "\", \"filter\": \"pid >= 2100000000\"}]}\n";
        struct churn_check k = {};
        struct itest_client *c;
        int64_t rss0, rss1, procs0, procs1, bound;
        json_object *st;
        cpu_set_t one;
        pid_t runner;
        char *text;
        size_t len;
        int ws;

        assert_int_equal(itest_daemon_start(&daemon_, config), 0);
        st = status();
        procs0 = get_int(st, "context.procs");
        bound = get_int(st, "context.bound_bytes");
        json_object_put(st);
        rss0 = rss_kib(daemon_.pid);
        c = client_new(NULL);

        runner = itest_fork();
        assert_true(runner >= 0);
        if (runner == 0) {
                /* The last CPU: benchmarks pin their load to the first. */
                CPU_ZERO(&one);
                CPU_SET((int) sysconf(_SC_NPROCESSORS_ONLN) - 1, &one);
                (void) sched_setaffinity(0, sizeof(one), &one);
                for (long i = 0; i < churn_n; i++) {
                        pid_t p = fork();

                        if (p < 0) {
                                usleep(1000);
                                i--;
                                continue;
                        }
                        if (p == 0) {
                                char name[24];

                                snprintf(name, sizeof(name), "c%ld", i);
                                (void) prctl(PR_SET_NAME, name);
                                (void) syscall(SYS_getpgid, MARK_CHURN + i);
                                _exit(0);
                        }
                        (void) waitpid(p, NULL, 0);
                }
                _exit(0);
        }
        /* Read while they run: the client must keep up. */
        text = itest_client_slurp(c, 3000, 600000, &len);
        assert_int_equal(waitpid(runner, &ws, 0), runner);
        itest_for_each_line(text, len, check_churn_line, &k);
        free(text);
        client_free(c);

        st = status();
        procs1 = get_int(st, "context.procs");
        json_object_put(st);
        rss1 = rss_kib(daemon_.pid);
        fprintf(stderr, "%d events: %d named right, %d wrong, %d without proc; table %" PRId64 " -> %" PRId64
                " processes; RSS %" PRId64 " -> %" PRId64 " KiB (bound %" PRId64 " KiB)\n",
                k.lines, k.named, k.wrong, k.no_proc, procs0, procs1, rss0, rss1, bound / 1024);
        assert_int_equal(k.wrong, 0);
        assert_true(k.lines >= churn_n * 9 / 10);
        assert_true(k.named >= k.lines * 99 / 100);
        assert_true(procs1 < procs0 + 200);
        assert_true(rss1 - rss0 < bound / 1024);
        assert_int_equal(itest_daemon_stop(&daemon_), 0);
        itest_daemon_cleanup(&daemon_);
}

int main(int argc, char **argv) {
        const char *n = getenv("EVMON_CHURN");
        /* "churn": that test alone, a test of its own (context-churn, and
         * tests/vm/context.sh with a small pid_max) */
        const struct CMUnitTest churn[] = {
                cmocka_unit_test(test_churn),
        };
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_process),
                cmocka_unit_test(test_off),
                cmocka_unit_test(test_containers),
                cmocka_unit_test(test_container_targets),
                cmocka_unit_test(test_symbols),
        };

        if (n && atol(n) > 0)
                churn_n = atol(n);
        if (argc > 1 && strcmp(argv[1], "churn") == 0)
                return cmocka_run_group_tests(churn, setup, teardown);
        return cmocka_run_group_tests(tests, setup, teardown);
}
