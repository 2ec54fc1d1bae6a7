/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgroup path → container id. Each runtime names the cgroup of a container
 * in its own way, at its own place in the tree; the layouts recognized
 * here are those the runtimes write (docker's and containerd's cgroup
 * drivers, CRI-O's and libpod's systemd scopes, systemd-machined's units,
 * LXC's payload cgroups), and only there: the outermost container wins
 * (what is below it is its root's to name), and rootless ones are marked
 * with the uid whose subtree named them. */

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "evmon/context.h"

#define HEX_ID_LEN 64

struct comp {
        const char *s;
        size_t n;
};

static bool is_hex_id(const char *s, size_t n) {
        if (n != HEX_ID_LEN)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return true;
}

static bool has_prefix(struct comp c, const char *p, struct comp *ret_rest) {
        size_t n = strlen(p);

        if (c.n < n || memcmp(c.s, p, n) != 0)
                return false;
        if (ret_rest)
                *ret_rest = (struct comp) { c.s + n, c.n - n };
        return true;
}

static bool has_suffix(struct comp c, const char *p, struct comp *ret_rest) {
        size_t n = strlen(p);

        if (c.n < n || memcmp(c.s + c.n - n, p, n) != 0)
                return false;
        if (ret_rest)
                *ret_rest = (struct comp) { c.s, c.n - n };
        return true;
}

static bool is(struct comp c, const char *s) {
        return c.n == strlen(s) && memcmp(c.s, s, c.n) == 0;
}

/* "PREFIX<64 hex>" with an optional ".scope": the systemd driver's scope
 * unit, or the cgroupfs driver's plain directory. */
static bool prefixed_id(struct comp c, const char *prefix, struct comp *ret_id) {
        struct comp rest;

        if (!has_prefix(c, prefix, &rest))
                return false;
        (void) has_suffix(rest, ".scope", &rest);
        if (!is_hex_id(rest.s, rest.n))
                return false;
        *ret_id = rest;
        return true;
}

static int unhex(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* A unit name part as systemd escapes it (unit_name_escape(): "\x2d" for
 * '-'), unescaped into BUF. False when empty, too long, or holding a '/'
 * or NUL once unescaped. */
static bool unit_unescape(struct comp c, char *buf, size_t size) {
        size_t k = 0;

        if (c.n == 0)
                return false;
        for (size_t i = 0; i < c.n; i++) {
                char ch = c.s[i];

                if (ch == '\\' && i + 3 < c.n && c.s[i + 1] == 'x' && unhex(c.s[i + 2]) >= 0 &&
                    unhex(c.s[i + 3]) >= 0) {
                        ch = (char) (unhex(c.s[i + 2]) << 4 | unhex(c.s[i + 3]));
                        i += 3;
                }
                if (ch == 0 || ch == '/' || k + 1 >= size)
                        return false;
                buf[k++] = ch;
        }
        buf[k] = 0;
        return true;
}

static bool plain_name(struct comp c, char *buf, size_t size) {
        if (c.n == 0 || c.n >= size || memchr(c.s, 0, c.n))
                return false;
        memcpy(buf, c.s, c.n);
        buf[c.n] = 0;
        return true;
}

/* A pod uid as the kubelet writes it: "pod<uid>" (cgroupfs driver) or
 * "kubepods[-<qos>]-pod<uid with '_' for '-'>.slice" (systemd driver). */
static bool pod_uid(struct comp c, char *buf) {
        struct comp u;

        if (has_prefix(c, "kubepods", NULL) && has_suffix(c, ".slice", &u)) {
                const char *p = NULL;

                for (size_t i = 0; i + 4 <= u.n; i++)
                        if (memcmp(u.s + i, "-pod", 4) == 0)
                                p = u.s + i + 4;
                if (!p)
                        return false;
                u = (struct comp) { p, (size_t) (u.s + u.n - p) };
        } else if (!has_prefix(c, "pod", &u))
                return false;
        if (u.n != CTX_POD_UID_MAX - 1)
                return false;
        for (size_t i = 0; i < u.n; i++) {
                char ch = u.s[i];
                bool dash = i == 8 || i == 13 || i == 18 || i == 23;

                if (dash) {
                        if (ch != '-' && ch != '_')
                                return false;
                        buf[i] = '-';
                } else if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))
                        buf[i] = ch;
                else
                        return false;
        }
        buf[u.n] = 0;
        return true;
}

static void set_id(struct ctx_container *r, enum ctx_runtime rt, struct comp id) {
        r->runtime = rt;
        memcpy(r->id, id.s, id.n);
        r->id[id.n] = 0;
}

static void set_name(struct ctx_container *r, enum ctx_runtime rt, const char *name) {
        r->runtime = rt;
        strcpy(r->id, name);
}

#define COMPS_MAX 64u

/* The '/'-separated components of PATH[0..LEN), at most COMPS_MAX (the
 * rest is left out: no layout is that deep). */
static size_t split(const char *path, size_t len, struct comp *comps) {
        size_t n = 0, i = 0;

        while (i < len && n < COMPS_MAX) {
                while (i < len && path[i] == '/')
                        i++;
                if (i >= len)
                        break;
                comps[n].s = path + i;
                while (i < len && path[i] != '/')
                        i++;
                comps[n].n = (size_t) (path + i - comps[n].s);
                n++;
        }
        return n;
}

/* A kubelet container cgroup inside a pod's: the runtime's prefix, or a
 * bare id (cgroupfs driver); conmon's is beside the container, not it. */
static bool pod_container(struct comp c, struct ctx_container *r) {
        struct comp id;

        if (prefixed_id(c, "docker-", &id))
                set_id(r, CTX_RUNTIME_DOCKER, id);
        else if (prefixed_id(c, "cri-containerd-", &id))
                set_id(r, CTX_RUNTIME_CONTAINERD, id);
        else if (prefixed_id(c, "crio-", &id))
                set_id(r, CTX_RUNTIME_CRIO, id);
        else if (is_hex_id(c.s, c.n))
                set_id(r, CTX_RUNTIME_KUBERNETES, c);
        else
                return false;
        return true;
}

/* The kubelet's tree: "kubepods[/QOS]/pod<uid>/<id>" (cgroupfs driver) or
 * "kubepods.slice[/kubepods-QOS.slice]/kubepods[-QOS]-pod<uid>.slice/
 * <runtime>-<id>.scope" (systemd driver), from C[0]. The number of
 * components taken, 0 when C is not one. */
static size_t kubepods(const struct comp *c, size_t n, struct ctx_container *r) {
        bool systemd = is(c[0], "kubepods.slice");
        char pod[CTX_POD_UID_MAX];
        size_t k = 1;

        if (!systemd && !is(c[0], "kubepods"))
                return 0;
        if (k < n && (systemd ? is(c[k], "kubepods-burstable.slice") || is(c[k], "kubepods-besteffort.slice")
                              : is(c[k], "burstable") || is(c[k], "besteffort")))
                k++;
        if (k >= n || has_prefix(c[k], "kubepods", NULL) != systemd || !pod_uid(c[k], pod))
                return 0;
        strcpy(r->pod, pod);
        k++;
        if (k < n && pod_container(c[k], r))
                k++;
        return k;
}

/* A container at the place its runtime puts it, the components from C[0]
 * on (the cgroup root). The number of components taken, 0 when none
 * starts there. */
static size_t at_place(const struct comp *c, size_t n, struct ctx_container *r) {
        struct comp id, rest;
        char name[CTX_CONTAINER_ID_MAX];
        size_t k;

        if (n == 0)
                return 0;
        k = kubepods(c, n, r);
        if (k > 0)
                return k;
        /* LXC 4+ and LXD: "lxc.payload.NAME"; LXC 1-3: "lxc/NAME". */
        if (has_prefix(c[0], "lxc.payload.", &rest) && plain_name(rest, name, sizeof(name))) {
                set_name(r, CTX_RUNTIME_LXC, name);
                return 1;
        }
        if (n < 2)
                return 0;
        if ((is(c[0], "lxc") || is(c[0], "lxc.payload")) && plain_name(c[1], name, sizeof(name))) {
                set_name(r, CTX_RUNTIME_LXC, name);
                return 2;
        }
        /* docker's cgroupfs driver, and its systemd driver. */
        if (is(c[0], "docker") && is_hex_id(c[1].s, c[1].n)) {
                set_id(r, CTX_RUNTIME_DOCKER, c[1]);
                return 2;
        }
        if (is(c[0], "system.slice") && prefixed_id(c[1], "docker-", &id)) {
                set_id(r, CTX_RUNTIME_DOCKER, id);
                return 2;
        }
        /* podman's cgroupfs manager, a container or one in a pod. */
        if (is(c[0], "libpod_parent")) {
                k = 1;
                if (has_prefix(c[1], "libpod_pod_", NULL) && n > 2)
                        k = 2;
                if (prefixed_id(c[k], "libpod-", &id))
                        set_id(r, CTX_RUNTIME_PODMAN, id);
                else if (is_hex_id(c[k].s, c[k].n))
                        set_id(r, CTX_RUNTIME_PODMAN, c[k]);
                else
                        return 0;
                return k + 1;
        }
        /* machined's slice: rootful podman (alone or in a pod's slice),
         * systemd-nspawn's unit and registered machines' scopes. */
        if (is(c[0], "machine.slice")) {
                k = 1;
                if (has_prefix(c[1], "machine-libpod_pod_", NULL) && has_suffix(c[1], ".slice", NULL) && n > 2)
                        k = 2;
                if (prefixed_id(c[k], "libpod-", &id)) {
                        set_id(r, CTX_RUNTIME_PODMAN, id);
                        return k + 1;
                }
                if (k > 1)
                        return 0;
                if (has_prefix(c[1], "systemd-nspawn@", &rest) && has_suffix(rest, ".service", &rest) &&
                    unit_unescape(rest, name, sizeof(name))) {
                        set_name(r, CTX_RUNTIME_NSPAWN, name);
                        return 2;
                }
                /* libvirt's "qemu-N-NAME" machines are VMs, not containers. */
                if (has_prefix(c[1], "machine-", &rest) && has_suffix(rest, ".scope", &rest) &&
                    unit_unescape(rest, name, sizeof(name)) && strncmp(name, "qemu-", 5) != 0) {
                        set_name(r, CTX_RUNTIME_NSPAWN, name);
                        return 2;
                }
        }
        return 0;
}

/* The uid N of "user-N.slice" or "user@N.service". */
static bool unit_uid(struct comp c, const char *prefix, const char *suffix, uid_t *ret) {
        struct comp u;
        uint64_t v = 0;

        if (!has_prefix(c, prefix, &u) || !has_suffix(u, suffix, &u) || u.n == 0 || u.n > 10)
                return false;
        for (size_t i = 0; i < u.n; i++) {
                if (u.s[i] < '0' || u.s[i] > '9' || (i == 0 && u.s[i] == '0' && u.n > 1))
                        return false;
                v = v * 10 + (uint64_t) (u.s[i] - '0');
        }
        if (v >= (uid_t) -1)
                return false;
        *ret = (uid_t) v;
        return true;
}

/* Rootless podman and docker put their containers in the user's own
 * manager (systemd delegates "user@UID.service" to UID), wherever that
 * user likes: any component below names one, as the user chose it. */
static bool rootless(const struct comp *c, size_t n, struct ctx_container *r) {
        struct comp id;

        r->runtime = CTX_RUNTIME_NONE;
        for (size_t k = 0; k < n; k++) {
                if (has_prefix(c[k], "libpod-conmon-", NULL))
                        continue;
                if (prefixed_id(c[k], "libpod-", &id))
                        set_id(r, CTX_RUNTIME_PODMAN, id);
                else if (prefixed_id(c[k], "docker-", &id))
                        set_id(r, CTX_RUNTIME_DOCKER, id);
                else if (k > 0 && is(c[k - 1], "docker") && is_hex_id(c[k].s, c[k].n))
                        set_id(r, CTX_RUNTIME_DOCKER, c[k]);
        }
        return r->runtime != CTX_RUNTIME_NONE;
}

int ctx_container_parse(const char *path, size_t len, struct ctx_container *ret) {
        struct ctx_container r = { .runtime = CTX_RUNTIME_NONE, .uid = (uid_t) -1 };
        struct comp c[COMPS_MAX];
        uid_t u1, u2;
        size_t n;

        n = split(path, path ? len : 0, c);
        /* A cgroup is a container's only at the place its runtime puts it
         * (issue 26: a user with a delegated subtree, "user@UID.service"
         * or a service's Delegate=yes, makes any path below it: a
         * ".../kubepods-pod<uid>.slice/cri-containerd-<id>.scope" there
         * must not pass for that container). A container's own subtree
         * is delegated to it in turn: its root (LXD's or nspawn's with a
         * user namespace is no root on the host) makes any path below,
         * "/lxc.payload.c1/docker/<another container's id>" among them,
         * so a runtime inside a container (docker-in-docker, LXD's
         * nested docker, kind's kubelet) names nothing: the line is the
         * outer container's, as the host's runtime says, and its cgroup
         * path shows the rest. */
        (void) at_place(c, n, &r);
        if (r.runtime == CTX_RUNTIME_NONE && !r.pod[0] && n >= 3 && is(c[0], "user.slice") &&
            unit_uid(c[1], "user-", ".slice", &u1) && unit_uid(c[2], "user@", ".service", &u2) && u1 == u2 &&
            rootless(c + 3, n - 3, &r)) {
                r.rootless = true;
                r.uid = u1;
        }
        *ret = r;
        return r.runtime != CTX_RUNTIME_NONE || r.pod[0] ? 1 : 0;
}

const char *ctx_runtime_to_string(enum ctx_runtime r) {
        static const char *const names[] = {
                [CTX_RUNTIME_NONE] = "none",         [CTX_RUNTIME_DOCKER] = "docker",
                [CTX_RUNTIME_CONTAINERD] = "containerd", [CTX_RUNTIME_CRIO] = "cri-o",
                [CTX_RUNTIME_PODMAN] = "podman",     [CTX_RUNTIME_NSPAWN] = "systemd-nspawn",
                [CTX_RUNTIME_LXC] = "lxc",           [CTX_RUNTIME_KUBERNETES] = "cri",
        };
        return (unsigned) r < ELEMENTSOF(names) ? names[r] : "unknown";
}
