/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgroup path → container id (src/context/container.c) on the paths each
 * runtime writes: docker with the systemd and cgroupfs drivers, containerd
 * and CRI-O under the kubelet (both drivers, every QoS class), podman
 * rootful, rootless and with its cgroupfs manager, systemd-nspawn through
 * systemd-machined, LXC 1-3 and 4+ (LXD), and paths that name none. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "evmon/context.h"

#define ID1 "3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a"
#define ID2 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define POD "8d4e6f1a-2b3c-4d5e-8f9a-0b1c2d3e4f5a"
#define POD_ "8d4e6f1a_2b3c_4d5e_8f9a_0b1c2d3e4f5a"

static const struct row {
        const char *path;
        enum ctx_runtime runtime;
        const char *id, *pod;
        int64_t uid;            /* rootless: the delegating uid; 0 here means rootful */
} rows[] = {
        /* docker: systemd driver, cgroupfs driver, docker-in-docker */
        { "/system.slice/docker-" ID1 ".scope", CTX_RUNTIME_DOCKER, ID1, "" },
        { "/docker/" ID1, CTX_RUNTIME_DOCKER, ID1, "" },
        { "/docker/" ID1 "/docker/" ID2, CTX_RUNTIME_DOCKER, ID1, "" },
        /* the daemon itself is no container */
        { "/system.slice/docker.service", CTX_RUNTIME_NONE, "", "" },
        { "/system.slice/containerd.service", CTX_RUNTIME_NONE, "", "" },
        /* kubelet + containerd, systemd driver, each QoS class */
        { "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" POD_ ".slice/cri-containerd-" ID1 ".scope",
          CTX_RUNTIME_CONTAINERD, ID1, POD },
        { "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" POD_ ".slice/cri-containerd-" ID2 ".scope",
          CTX_RUNTIME_CONTAINERD, ID2, POD },
        { "/kubepods.slice/kubepods-pod" POD_ ".slice/cri-containerd-" ID1 ".scope", CTX_RUNTIME_CONTAINERD, ID1, POD },
        /* kubelet, cgroupfs driver (containerd or dockershim): a bare id */
        { "/kubepods/besteffort/pod" POD "/" ID1, CTX_RUNTIME_KUBERNETES, ID1, POD },
        { "/kubepods/pod" POD "/" ID2, CTX_RUNTIME_KUBERNETES, ID2, POD },
        /* the pod's own cgroup: a pod uid and no container */
        { "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" POD_ ".slice", CTX_RUNTIME_NONE, "", POD },
        /* docker under the kubelet, systemd driver */
        { "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" POD_ ".slice/docker-" ID1 ".scope",
          CTX_RUNTIME_DOCKER, ID1, POD },
        /* CRI-O: the container, and conmon beside it (not in it) */
        { "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" POD_ ".slice/crio-" ID1 ".scope",
          CTX_RUNTIME_CRIO, ID1, POD },
        { "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" POD_ ".slice/crio-conmon-" ID1 ".scope",
          CTX_RUNTIME_NONE, "", POD },
        { "/kubepods/besteffort/pod" POD "/crio-" ID2, CTX_RUNTIME_CRIO, ID2, POD },
        /* podman: rootful, rootless, a sub-cgroup inside, conmon, cgroupfs */
        { "/machine.slice/libpod-" ID1 ".scope", CTX_RUNTIME_PODMAN, ID1, "" },
        { "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID2 ".scope", CTX_RUNTIME_PODMAN, ID2,
          "", 1000 },
        { "/machine.slice/libpod-" ID1 ".scope/container", CTX_RUNTIME_PODMAN, ID1, "" },
        { "/machine.slice/libpod-conmon-" ID1 ".scope", CTX_RUNTIME_NONE, "", "" },
        { "/libpod_parent/libpod-" ID1, CTX_RUNTIME_PODMAN, ID1, "" },
        { "/libpod_parent/" ID2, CTX_RUNTIME_PODMAN, ID2, "" },
        /* systemd-nspawn: as a unit, registered by machined, escaped names */
        { "/machine.slice/systemd-nspawn@web.service", CTX_RUNTIME_NSPAWN, "web", "" },
        { "/machine.slice/systemd-nspawn@web.service/payload", CTX_RUNTIME_NSPAWN, "web", "" },
        { "/machine.slice/machine-build\\x2dbox.scope", CTX_RUNTIME_NSPAWN, "build-box", "" },
        { "/machine.slice/machine-qemu\\x2d1\\x2dvm1.scope", CTX_RUNTIME_NONE, "", "" },
        /* LXC 1-3, LXC 4+ and LXD, and the monitor beside the payload */
        { "/lxc/web01", CTX_RUNTIME_LXC, "web01", "" },
        { "/lxc.payload.web01", CTX_RUNTIME_LXC, "web01", "" },
        { "/lxc.payload.web01/system.slice/cron.service", CTX_RUNTIME_LXC, "web01", "" },
        { "/lxc.payload/web01", CTX_RUNTIME_LXC, "web01", "" },
        { "/lxc.monitor.web01", CTX_RUNTIME_NONE, "", "" },
        /* a runtime inside a container (docker in LXD, kind's kubelet in
         * docker): the outermost wins. The inner cgroups are the outer
         * container's root's to make, and LXD's or nspawn's root is no
         * root on the host: it could name any other container's id. */
        { "/lxc.payload.web01/docker/" ID1, CTX_RUNTIME_LXC, "web01", "" },
        { "/lxc.payload.web01/system.slice/docker-" ID2 ".scope", CTX_RUNTIME_LXC, "web01", "" },
        { "/machine.slice/systemd-nspawn@web.service/payload/docker/" ID2, CTX_RUNTIME_NSPAWN, "web", "" },
        { "/machine.slice/systemd-nspawn@web.service/docker/" ID2, CTX_RUNTIME_NSPAWN, "web", "" },
        { "/docker/" ID1 "/kubepods/besteffort/pod" POD "/" ID2, CTX_RUNTIME_DOCKER, ID1, "" },
        { "/system.slice/docker-" ID1 ".scope/kubepods.slice/kubepods-pod" POD_ ".slice/cri-containerd-" ID2 ".scope",
          CTX_RUNTIME_DOCKER, ID1, "" },
        /* nothing */
        { "/", CTX_RUNTIME_NONE, "", "" },
        { "", CTX_RUNTIME_NONE, "", "" },
        { "/user.slice/user-1000.slice/session-3.scope", CTX_RUNTIME_NONE, "", "" },
        { "/system.slice/nginx.service", CTX_RUNTIME_NONE, "", "" },
        /* near misses: short, long, upper-case ids; a pod uid too short */
        { "/docker/" "3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1", CTX_RUNTIME_NONE, "", "" },
        { "/docker/" ID1 "0", CTX_RUNTIME_NONE, "", "" },
        { "/system.slice/docker-3F2A1B9C8D7E6F5A4B3C2D1E0F9A8B7C6D5E4F3A2B1C0D9E8F7A6B5C4D3E2F1A.scope",
          CTX_RUNTIME_NONE, "", "" },
        { "/kubepods/pod8d4e6f1a-2b3c-4d5e-8f9a", CTX_RUNTIME_NONE, "", "" },
        { "/system.slice/docker-.scope", CTX_RUNTIME_NONE, "", "" },
        { "/machine.slice/systemd-nspawn@.service", CTX_RUNTIME_NONE, "", "" },
        /* podman: a container in a pod (systemd and cgroupfs managers) */
        { "/machine.slice/machine-libpod_pod_" ID2 ".slice/libpod-" ID1 ".scope", CTX_RUNTIME_PODMAN, ID1, "" },
        { "/libpod_parent/libpod_pod_" ID2 "/libpod-" ID1, CTX_RUNTIME_PODMAN, ID1, "" },
        /* rootless docker (systemd driver, and its cgroupfs layout) and
         * podman in a user's own slice: marked with the user's uid */
        { "/user.slice/user-1000.slice/user@1000.service/user.slice/docker-" ID1 ".scope", CTX_RUNTIME_DOCKER, ID1,
          "", 1000 },
        { "/user.slice/user-1001.slice/user@1001.service/app.slice/docker.service/docker/" ID2, CTX_RUNTIME_DOCKER,
          ID2, "", 1001 },
        { "/user.slice/user-1000.slice/user@1000.service/app.slice/libpod-conmon-" ID1 ".scope", CTX_RUNTIME_NONE,
          "", "" },

        /* Spoofs (issue 26): a user with a delegated subtree makes any
         * path below it; a layout there names no rootful container and
         * no pod. Under user@UID.service, with a kubelet's path: */
        { "/user.slice/user-1000.slice/user@1000.service/app.slice/kubepods-besteffort-pod" POD_
          ".slice/cri-containerd-" ID1 ".scope",
          CTX_RUNTIME_NONE, "", "" },
        { "/user.slice/user-1000.slice/user@1000.service/app.slice/kubepods/pod" POD "/" ID1, CTX_RUNTIME_NONE, "",
          "" },
        { "/user.slice/user-1000.slice/user@1000.service/kubepods.slice/kubepods-pod" POD_ ".slice/crio-" ID1 ".scope",
          CTX_RUNTIME_NONE, "", "" },
        /* ... rootful-looking docker, nspawn and LXC names there are the
         * user's rootless claims at most (docker) or nothing */
        { "/user.slice/user-1000.slice/user@1000.service/app.slice/system.slice/docker-" ID1 ".scope",
          CTX_RUNTIME_DOCKER, ID1, "", 1000 },
        { "/user.slice/user-1000.slice/user@1000.service/machine.slice/systemd-nspawn@web.service", CTX_RUNTIME_NONE,
          "", "" },
        { "/user.slice/user-1000.slice/user@1000.service/lxc.payload.web01", CTX_RUNTIME_NONE, "", "" },
        /* a user slice whose uids disagree is no user's manager */
        { "/user.slice/user-1000.slice/user@0.service/user.slice/docker-" ID1 ".scope", CTX_RUNTIME_NONE, "", "" },
        /* a service with Delegate=yes, and a session scope */
        { "/system.slice/evil.service/kubepods.slice/kubepods-pod" POD_ ".slice/cri-containerd-" ID1 ".scope",
          CTX_RUNTIME_NONE, "", "" },
        { "/system.slice/evil.service/docker/" ID1, CTX_RUNTIME_NONE, "", "" },
        { "/system.slice/evil.service/system.slice/docker-" ID1 ".scope", CTX_RUNTIME_NONE, "", "" },
        { "/user.slice/user-1000.slice/session-3.scope/docker/" ID1, CTX_RUNTIME_NONE, "", "" },
        { "/user.slice/user-1000.slice/session-3.scope/lxc.payload.web01", CTX_RUNTIME_NONE, "", "" },
        { "/init.scope/machine.slice/libpod-" ID1 ".scope", CTX_RUNTIME_NONE, "", "" },
        /* kubepods in the wrong driver's shape, or a pod below a container
         * of the wrong kind */
        { "/kubepods/kubepods-pod" POD_ ".slice/" ID1, CTX_RUNTIME_NONE, "", "" },
        { "/kubepods.slice/pod" POD "/" ID1, CTX_RUNTIME_NONE, "", "" },
        /* inside a container, its root's claims start at its cgroup
         * (nested runtimes), not deeper under a service of its own */
        { "/system.slice/docker-" ID1 ".scope/system.slice/evil.service/docker/" ID2, CTX_RUNTIME_DOCKER, ID1, "" },
};

static void test_table(void **state) {
        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                const struct row *w = &rows[i];
                struct ctx_container c;
                int r = ctx_container_parse(w->path, strlen(w->path), &c);

                print_message("%s\n", w->path);
                assert_int_equal(r, w->runtime != CTX_RUNTIME_NONE || *w->pod);
                assert_int_equal(c.runtime, w->runtime);
                assert_string_equal(c.id, w->id);
                assert_string_equal(c.pod, w->pod);
                assert_int_equal(c.rootless, w->uid != 0);
                assert_int_equal((int64_t) c.uid, w->uid != 0 ? w->uid : (int64_t) (uid_t) -1);
        }
}

static void test_length_bounds(void **state) {
        struct ctx_container c;
        const char *p = "/docker/" ID1 "/trailing";

        /* Only LEN bytes count: cut inside the id, it is no id. */
        assert_int_equal(ctx_container_parse(p, strlen("/docker/") + 10, &c), 0);
        assert_int_equal(ctx_container_parse(p, strlen("/docker/" ID1), &c), 1);
        assert_string_equal(c.id, ID1);
        assert_int_equal(ctx_container_parse(NULL, 0, &c), 0);
        assert_string_equal(ctx_runtime_to_string(CTX_RUNTIME_CRIO), "cri-o");
        assert_string_equal(ctx_runtime_to_string(CTX_RUNTIME_NSPAWN), "systemd-nspawn");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_table),
                cmocka_unit_test(test_length_bounds),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
