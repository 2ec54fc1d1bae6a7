/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Container id → the runtime's state (src/context/runstate.c): each
 * runtime's files made under a test root the way the runtime writes them
 * (file names, JSON and annotations per its project), then looked up
 * through the cgroup paths container.c parses. Absent, mismatched,
 * rootless, linked and FIFO state is not verified; a renamed container
 * is seen. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evmon/context.h"

#define ID1 "3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a"
#define ID2 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID3 "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
#define ID4 "abababababababababababababababababababababababababababababababab"
#define POD "8d4e6f1a-2b3c-4d5e-8f9a-0b1c2d3e4f5a"
#define POD_ "8d4e6f1a_2b3c_4d5e_8f9a_0b1c2d3e4f5a"
#define POD2 "11111111-2222-4333-8444-555555555555"

static char root[256];

static void mkdirs(const char *rel) {
        char p[1024], *s;

        snprintf(p, sizeof(p), "%s/%s", root, rel);
        for (s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
                *s = 0;
                (void) mkdir(p, 0755);
                *s = '/';
        }
        (void) mkdir(p, 0755);
}

/* Written as the runtimes write theirs: a temporary file renamed over. */
static void put(const char *dir, const char *file, const char *text) {
        char p[1024], tmp[1100];
        FILE *f;

        mkdirs(dir);
        snprintf(p, sizeof(p), "%s/%s/%s", root, dir, file);
        snprintf(tmp, sizeof(tmp), "%s.tmp", p);
        f = fopen(tmp, "w");
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(rename(tmp, p), 0);
}

static const struct ctx_runstate_info *look(struct ctx_runstate *s, const char *cgroup, struct ctx_container *ct) {
        assert_int_equal(ctx_container_parse(cgroup, strlen(cgroup), ct), 1);
        return ctx_runstate_lookup(s, ct);
}

static int setup(void **state) {
        struct ctx_runstate *s;

        snprintf(root, sizeof(root), "/tmp/evmon-runstate-XXXXXX");
        assert_non_null(mkdtemp(root));
        assert_int_equal(ctx_runstate_new(&(struct ctx_runstate_opts) { .root = root, .max_containers = 16 }, &s), 0);
        *state = s;
        return 0;
}

static int teardown(void **state) {
        char cmd[300];

        ctx_runstate_free(*state);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        return system(cmd) == 0 ? 0 : -1;
}

static bool no_openat2;

static struct ctx_runstate *fresh(void) {
        struct ctx_runstate *s;

        /* recheck_ns 0: every lookup looks at the file (renames, below). */
        assert_int_equal(ctx_runstate_new(&(struct ctx_runstate_opts) { .root = root, .recheck_ns = 0,
                                                                        .no_openat2 = no_openat2 }, &s), 0);
        return s;
}

static void test_docker(void **state) {
        struct ctx_container ct;
        const struct ctx_runstate_info *i;

        (void) state;
        /* moby's container.toDisk(): config.v2.json, "Name" with a '/'. */
        put("var/lib/docker/containers/" ID1, "config.v2.json",
            "{\"StreamConfig\":{},\"State\":{\"Running\":true,\"Pid\":4242},\"ID\":\"" ID1 "\","
            "\"Created\":\"2026-11-27T10:00:00Z\",\"Path\":\"nginx\",\"Args\":[],"
            "\"Config\":{\"Hostname\":\"3f2a1b9c8d7e\",\"Image\":\"nginx:1.25\",\"Labels\":{\"maintainer\":\"x\"}},"
            "\"Image\":\"sha256:" ID2 "\",\"Name\":\"/payments-api\",\"Driver\":\"overlay2\"}");
        struct ctx_runstate *s = fresh();
        i = look(s, "/system.slice/docker-" ID1 ".scope", &ct);
        assert_non_null(i);
        assert_true(i->verified);
        assert_string_equal(i->name, "payments-api");
        assert_string_equal(i->image, "nginx:1.25");
        assert_string_equal(i->image_id, "sha256:" ID2);
        assert_null(i->pod_name);
        /* The cgroupfs driver names the same container. */
        i = look(s, "/docker/" ID1, &ct);
        assert_true(i->verified);
        assert_string_equal(i->name, "payments-api");
        /* An id docker does not keep: not verified, nothing named. */
        i = look(s, "/docker/" ID2, &ct);
        assert_false(i->verified);
        assert_null(i->name);
        ctx_runstate_free(s);
}

static void test_docker_renamed(void **state) {
        struct ctx_container ct;
        const struct ctx_runstate_info *i;
        struct ctx_runstate *s = fresh();
        uint64_t gen;

        (void) state;
        put("var/lib/docker/containers/" ID3, "config.v2.json",
            "{\"ID\":\"" ID3 "\",\"Config\":{\"Image\":\"redis:7\"},\"Image\":\"sha256:" ID2 "\",\"Name\":\"/cache\"}");
        i = look(s, "/docker/" ID3, &ct);
        assert_string_equal(i->name, "cache");
        gen = i->gen;
        /* Unchanged: the same entry, the same gen. */
        i = look(s, "/docker/" ID3, &ct);
        assert_int_equal(i->gen, gen);
        /* docker rename: the file written anew. */
        put("var/lib/docker/containers/" ID3, "config.v2.json",
            "{\"ID\":\"" ID3 "\",\"Config\":{\"Image\":\"redis:7\"},\"Image\":\"sha256:" ID2 "\",\"Name\":\"/sessions\"}");
        i = look(s, "/docker/" ID3, &ct);
        assert_true(i->verified);
        assert_string_equal(i->name, "sessions");
        assert_true(i->gen != gen);
        /* docker rm: gone, no longer verified. */
        char p[1024];
        snprintf(p, sizeof(p), "%s/var/lib/docker/containers/" ID3 "/config.v2.json", root);
        assert_int_equal(unlink(p), 0);
        i = look(s, "/docker/" ID3, &ct);
        assert_false(i->verified);
        assert_null(i->name);
        ctx_runstate_free(s);
}

static void test_containerd(void **state) {
        struct ctx_container ct;
        const struct ctx_runstate_info *i;

        (void) state;
        /* The shim's bundle: an OCI runtime spec with the CRI plugin's
         * annotations (containerd internal/cri/annotations). */
        put("run/containerd/io.containerd.runtime.v2.task/k8s.io/" ID1, "config.json",
            "{\"ociVersion\":\"1.1.0\",\"process\":{\"args\":[\"/app\"]},\"root\":{\"path\":\"rootfs\"},"
            "\"annotations\":{\"io.kubernetes.cri.container-type\":\"container\","
            "\"io.kubernetes.cri.container-name\":\"api\","
            "\"io.kubernetes.cri.image-name\":\"registry.example/payments/api:2.4.1\","
            "\"io.kubernetes.cri.sandbox-id\":\"" ID2 "\","
            "\"io.kubernetes.cri.sandbox-name\":\"payments-api-7d9f8-xk2lp\","
            "\"io.kubernetes.cri.sandbox-namespace\":\"prod\","
            "\"io.kubernetes.cri.sandbox-uid\":\"" POD "\"}}");
        struct ctx_runstate *s = fresh();
        i = look(s, "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" POD_ ".slice/cri-containerd-" ID1
                    ".scope", &ct);
        assert_true(i->verified);
        assert_string_equal(i->name, "api");
        assert_string_equal(i->pod_container, "api");
        assert_string_equal(i->image, "registry.example/payments/api:2.4.1");
        assert_string_equal(i->pod_name, "payments-api-7d9f8-xk2lp");
        assert_string_equal(i->pod_namespace, "prod");
        assert_string_equal(i->pod_uid, POD);
        /* cgroupfs driver: a bare id under the pod, found in containerd's. */
        i = look(s, "/kubepods/burstable/pod" POD "/" ID1, &ct);
        assert_true(i->verified);
        assert_string_equal(i->pod_namespace, "prod");
        /* The same id under another pod's cgroup: the state says otherwise. */
        i = look(s, "/kubepods/burstable/pod" POD2 "/" ID1, &ct);
        assert_false(i->verified);
        assert_null(i->pod_name);
        ctx_runstate_free(s);
}

static void test_crio(void **state) {
        struct ctx_container ct;
        const struct ctx_runstate_info *i;

        (void) state;
        put("run/containers/storage/overlay-containers/" ID2 "/userdata", "config.json",
            "{\"ociVersion\":\"1.0.2-dev\",\"annotations\":{\"io.container.manager\":\"cri-o\","
            "\"io.kubernetes.container.name\":\"coredns\","
            "\"io.kubernetes.cri-o.ContainerID\":\"" ID2 "\","
            "\"io.kubernetes.cri-o.ContainerType\":\"container\","
            "\"io.kubernetes.cri-o.ImageName\":\"registry.k8s.io/coredns/coredns:v1.11.1\","
            "\"io.kubernetes.cri-o.ImageRef\":\"sha256:" ID3 "\","
            "\"io.kubernetes.cri-o.SandboxID\":\"" ID1 "\","
            "\"io.kubernetes.pod.name\":\"coredns-5dd5756b68-4mtdm\","
            "\"io.kubernetes.pod.namespace\":\"kube-system\","
            "\"io.kubernetes.pod.uid\":\"" POD "\"}}");
        struct ctx_runstate *s = fresh();
        i = look(s, "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" POD_ ".slice/crio-" ID2 ".scope",
                 &ct);
        assert_true(i->verified);
        assert_string_equal(i->name, "coredns");
        assert_string_equal(i->image, "registry.k8s.io/coredns/coredns:v1.11.1");
        assert_string_equal(i->image_id, "sha256:" ID3);
        assert_string_equal(i->pod_name, "coredns-5dd5756b68-4mtdm");
        assert_string_equal(i->pod_namespace, "kube-system");
        ctx_runstate_free(s);
}

static void test_podman(void **state) {
        struct ctx_container ct;
        const struct ctx_runstate_info *i;

        (void) state;
        /* containers/storage's containers.json, libpod's metadata inside. */
        put("var/lib/containers/storage/overlay-containers", "containers.json",
            "[{\"id\":\"" ID2 "\",\"names\":[\"other\"],\"image\":\"" ID1 "\",\"layer\":\"x\",\"metadata\":\"{}\"},"
            "{\"id\":\"" ID3 "\",\"names\":[\"web\"],\"image\":\"" ID1 "\",\"layer\":\"" ID2 "\","
            "\"metadata\":\"{\\\"image-name\\\":\\\"docker.io/library/nginx:latest\\\",\\\"image-id\\\":\\\"" ID1
            "\\\",\\\"name\\\":\\\"web\\\",\\\"created-at\\\":1764230400}\","
            "\"created\":\"2026-11-27T10:00:00Z\",\"flags\":{\"MountLabel\":\"\"}}]");
        struct ctx_runstate *s = fresh();
        i = look(s, "/machine.slice/libpod-" ID3 ".scope", &ct);
        assert_true(i->verified);
        assert_string_equal(i->name, "web");
        assert_string_equal(i->image, "docker.io/library/nginx:latest");
        assert_string_equal(i->image_id, ID1);
        /* Rootless: a user's own cgroup naming a rootful container's id
         * is not that container. */
        i = look(s, "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID3 ".scope", &ct);
        assert_true(ct.rootless);
        assert_false(i->verified);
        assert_null(i->name);
        ctx_runstate_free(s);
}

static void test_nspawn_lxc(void **state) {
        struct ctx_container ct;
        const struct ctx_runstate_info *i;

        (void) state;
        /* machined's machine_save(). */
        put("run/systemd/machines", "debian-build",
            "# This is private data. Do not parse.\nNAME=debian-build\nSCOPE=systemd-nspawn@debian\\x2dbuild.service\n"
            "SERVICE=systemd-nspawn\nROOT=/var/lib/machines/debian-build\nCLASS=container\nLEADER=4242\n");
        put("run/systemd/machines", "vm1", "NAME=vm1\nCLASS=vm\n");
        put("var/lib/lxc/web1", "config",
            "# Template used to create this container: /usr/share/lxc/templates/lxc-download\n"
            "lxc.include = /usr/share/lxc/config/common.conf\nlxc.rootfs.path = dir:/var/lib/lxc/web1/rootfs\n"
            "lxc.uts.name = web1\n");
        struct ctx_runstate *s = fresh();
        i = look(s, "/machine.slice/systemd-nspawn@debian\\x2dbuild.service", &ct);
        assert_true(i->verified);
        assert_string_equal(i->name, "debian-build");
        assert_string_equal(i->image, "/var/lib/machines/debian-build");
        i = look(s, "/machine.slice/machine-vm1.scope", &ct);
        assert_false(i->verified);
        i = look(s, "/lxc.payload.web1", &ct);
        assert_true(i->verified);
        assert_string_equal(i->name, "web1");
        i = look(s, "/lxc.payload.web2", &ct);
        assert_false(i->verified);
        ctx_runstate_free(s);
}

/* doc/security.md: a link on the way, a FIFO, a file too large are
 * refused, never followed, never blocking. */
static void test_hostile(void **state) {
        struct ctx_container ct;
        const struct ctx_runstate_info *i;
        struct ctx_runstate_stats st;
        char p[1024], t[1024];

        (void) state;
        /* A link in place of the container's directory. */
        put("elsewhere", "config.v2.json", "{\"ID\":\"" ID2 "\",\"Name\":\"/evil\"}");
        mkdirs("var/lib/docker/containers");
        snprintf(p, sizeof(p), "%s/var/lib/docker/containers/" ID2, root);
        snprintf(t, sizeof(t), "%s/elsewhere", root);
        assert_int_equal(symlink(t, p), 0);
        /* A FIFO as CRI-O's config.json. */
        mkdirs("run/containers/storage/overlay-containers/" ID3 "/userdata");
        snprintf(p, sizeof(p), "%s/run/containers/storage/overlay-containers/" ID3 "/userdata/config.json", root);
        assert_int_equal(mkfifo(p, 0644), 0);
        struct ctx_runstate *s = fresh();
        i = look(s, "/system.slice/docker-" ID2 ".scope", &ct);
        assert_false(i->verified);
        assert_null(i->name);
        i = look(s, "/kubepods/pod" POD "/crio-" ID3, &ct);
        assert_false(i->verified);
        ctx_runstate_stats(s, &st);
        assert_int_equal(st.known, 2);
        assert_int_equal(st.unverified, 2);
        assert_true(st.refused >= 1);
        ctx_runstate_free(s);
}

/* The same without openat2() (kernels before 5.6): one component at a
 * time, none of them a link. */
static void test_hostile_walk(void **state) {
        struct ctx_container ct;
        const struct ctx_runstate_info *i;
        char p[1024], t[1024];

        no_openat2 = true;
        /* A link one level up: CRI-O's userdata directory elsewhere. */
        put("elsewhere2", "config.json",
            "{\"annotations\":{\"io.kubernetes.cri-o.ContainerID\":\"" ID1 "\",\"io.kubernetes.container.name\":\"evil\"}}");
        mkdirs("run/containers/storage/overlay-containers/" ID1);
        snprintf(p, sizeof(p), "%s/run/containers/storage/overlay-containers/" ID1 "/userdata", root);
        snprintf(t, sizeof(t), "%s/elsewhere2", root);
        assert_int_equal(symlink(t, p), 0);
        struct ctx_runstate *s = fresh();
        i = look(s, "/kubepods/pod" POD "/crio-" ID1, &ct);
        assert_false(i->verified);
        assert_null(i->name);
        /* The real files of test_docker and test_crio still read. */
        i = look(s, "/system.slice/docker-" ID1 ".scope", &ct);
        assert_true(i->verified);
        assert_string_equal(i->name, "payments-api");
        i = look(s, "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" POD_ ".slice/crio-" ID2 ".scope",
                 &ct);
        assert_true(i->verified);
        assert_string_equal(i->pod_namespace, "kube-system");
        /* The links and the FIFO of test_hostile are refused here too. */
        i = look(s, "/system.slice/docker-" ID2 ".scope", &ct);
        assert_false(i->verified);
        i = look(s, "/kubepods/pod" POD "/crio-" ID3, &ct);
        assert_false(i->verified);
        /* A file of another user's at docker's place (root only can
         * give it away). */
        if (geteuid() == 0) {
                put("var/lib/docker/containers/" ID3, "config.v2.json", "{\"ID\":\"" ID3 "\",\"Name\":\"/evil\"}");
                snprintf(p, sizeof(p), "%s/var/lib/docker/containers/" ID3 "/config.v2.json", root);
                assert_int_equal(chown(p, 65534, 65534), 0);
                i = look(s, "/docker/" ID3, &ct);
                assert_false(i->verified);
                assert_null(i->name);
        }
        ctx_runstate_free(s);
        no_openat2 = false;
}

/* Labels are whoever runs the container's: outside a pod's cgroup
 * "io.kubernetes.pod.*" labels name no pod, and in one, a pod whose
 * uid the state does not give is not verified. A "\u0000" in a value
 * names nothing rather than a shorter name. */
static void test_forged_labels(void **state) {
        struct ctx_container ct;
        const struct ctx_runstate_info *i;
        struct ctx_runstate *s = fresh();

        (void) state;
        /* docker run -l io.kubernetes.pod.namespace=kube-system ... */
        put("var/lib/docker/containers/" ID4, "config.v2.json",
            "{\"ID\":\"" ID4 "\",\"Config\":{\"Image\":\"x\",\"Labels\":{"
            "\"io.kubernetes.pod.name\":\"coredns-x\",\"io.kubernetes.pod.namespace\":\"kube-system\","
            "\"io.kubernetes.container.name\":\"coredns\"}},\"Name\":\"/a\\u0000b\"}");
        i = look(s, "/docker/" ID4, &ct);
        assert_true(i->verified);
        assert_null(i->pod_name);
        assert_null(i->pod_namespace);
        assert_null(i->name);
        /* The same labels, the container put in a pod's cgroup
         * (--cgroup-parent): no pod uid in its state, not verified. */
        i = look(s, "/kubepods/besteffort/pod" POD "/" ID4, &ct);
        assert_false(i->verified);
        assert_null(i->pod_name);
        ctx_runstate_free(s);
}

/* Bounded: past max_containers the least recently used go. */
static void test_bounded(void **state) {
        struct ctx_runstate *s = *state;
        struct ctx_runstate_stats st;
        struct ctx_container ct;
        char path[128];

        for (unsigned k = 0; k < 100; k++) {
                snprintf(path, sizeof(path), "/docker/%064x", k);
                (void) look(s, path, &ct);
        }
        ctx_runstate_stats(s, &st);
        assert_true(st.known <= 16);
        assert_true(st.evicted >= 84);
}

/* The pure core the fuzz target drives: the state's own words decide,
 * and only what they say of this id and this pod is taken. */
static void test_parse(void **state) {
        static const char pod[] = "8d1e0c3a-6f11-4b58-9a3c-2f4d5e6a7b8c";
        struct ctx_runstate_info i;
        char *strings = NULL;
        const char *oci = "{\"annotations\":{\"io.kubernetes.cri.container-name\":\"web\","
                          "\"io.kubernetes.cri.sandbox-uid\":\"8d1e0c3a-6f11-4b58-9a3c-2f4d5e6a7b8c\"}}";
        const char *nul = "{\"ID\":\"" ID1 "\",\"Name\":\"/a\\u0000b\",\"Config\":{\"Image\":\"x\"}}";

        (void) state;
        assert_int_equal(ctx_runstate_parse(CTX_RUNTIME_CONTAINERD, ID1, pod, oci, strlen(oci), &i, &strings), 1);
        assert_string_equal(i.pod_container, "web");
        assert_string_equal(i.pod_uid, pod);
        /* Another pod's cgroup: not this container. */
        assert_int_equal(ctx_runstate_parse(CTX_RUNTIME_CONTAINERD, ID1, "00000000-0000-0000-0000-000000000000", oci,
                                            strlen(oci), &i, &strings), 0);
        assert_null(i.name);
        /* A NUL inside a value would cut it short unseen: left out. */
        assert_int_equal(ctx_runstate_parse(CTX_RUNTIME_DOCKER, ID1, "", nul, strlen(nul), &i, &strings), 1);
        assert_null(i.name);
        assert_string_equal(i.image, "x");
        assert_int_equal(ctx_runstate_parse(CTX_RUNTIME_DOCKER, ID3, "", nul, strlen(nul), &i, &strings), 0);
        free(strings);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_docker),   cmocka_unit_test(test_docker_renamed), cmocka_unit_test(test_containerd),
                cmocka_unit_test(test_crio),     cmocka_unit_test(test_podman),         cmocka_unit_test(test_nspawn_lxc),
                cmocka_unit_test(test_hostile),  cmocka_unit_test(test_hostile_walk),
                cmocka_unit_test(test_bounded),  cmocka_unit_test(test_forged_labels),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
