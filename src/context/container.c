/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgroup path → container id. Each runtime names the cgroup of a container
 * in its own way; the layouts recognized here are those the runtimes
 * write (docker's and containerd's cgroup drivers, CRI-O's and libpod's
 * systemd scopes, systemd-machined's units, LXC's payload cgroups), one
 * path component at a time, so a nested container's innermost id wins. */

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

int ctx_container_parse(const char *path, size_t len, struct ctx_container *ret) {
        struct ctx_container r = { .runtime = CTX_RUNTIME_NONE };
        bool under_docker = false, under_libpod = false, under_pod = false, lxc_next = false;
        size_t i = 0;

        if (!path)
                len = 0;
        while (i < len) {
                struct comp c, id, rest;
                char name[CTX_CONTAINER_ID_MAX];

                while (i < len && path[i] == '/')
                        i++;
                if (i >= len)
                        break;
                c.s = path + i;
                while (i < len && path[i] != '/')
                        i++;
                c.n = (size_t) (path + i - c.s);

                if (lxc_next) {
                        /* "/lxc/NAME" (LXC 1-3) and "/lxc.payload/NAME". */
                        lxc_next = false;
                        if (plain_name(c, name, sizeof(name))) {
                                r.runtime = CTX_RUNTIME_LXC;
                                strcpy(r.id, name);
                                continue;
                        }
                }
                if (pod_uid(c, r.pod)) {
                        under_pod = true;
                        continue;
                }
                if (has_prefix(c, "crio-conmon-", NULL) || has_prefix(c, "libpod-conmon-", NULL))
                        continue;  /* the runtime's monitor process, outside the container */
                if (prefixed_id(c, "docker-", &id))
                        set_id(&r, CTX_RUNTIME_DOCKER, id);
                else if (prefixed_id(c, "cri-containerd-", &id))
                        set_id(&r, CTX_RUNTIME_CONTAINERD, id);
                else if (prefixed_id(c, "crio-", &id))
                        set_id(&r, CTX_RUNTIME_CRIO, id);
                else if (prefixed_id(c, "libpod-", &id))
                        set_id(&r, CTX_RUNTIME_PODMAN, id);
                else if (is_hex_id(c.s, c.n))
                        set_id(&r, under_docker   ? CTX_RUNTIME_DOCKER
                                   : under_libpod ? CTX_RUNTIME_PODMAN
                                   : under_pod    ? CTX_RUNTIME_KUBERNETES
                                                  : CTX_RUNTIME_DOCKER,
                               c);
                else if (is(c, "docker"))
                        under_docker = true;
                else if (is(c, "libpod_parent"))
                        under_libpod = true;
                else if (is(c, "lxc") || is(c, "lxc.payload"))
                        lxc_next = true;
                else if (has_prefix(c, "lxc.payload.", &rest) && plain_name(rest, name, sizeof(name))) {
                        r.runtime = CTX_RUNTIME_LXC;
                        strcpy(r.id, name);
                } else if (has_prefix(c, "systemd-nspawn@", &rest) && has_suffix(rest, ".service", &rest) &&
                           unit_unescape(rest, name, sizeof(name))) {
                        r.runtime = CTX_RUNTIME_NSPAWN;
                        strcpy(r.id, name);
                } else if (has_prefix(c, "machine-", &rest) && has_suffix(rest, ".scope", &rest) &&
                           unit_unescape(rest, name, sizeof(name)) && strncmp(name, "qemu-", 5) != 0) {
                        /* systemd-machined's scope of a registered machine;
                         * libvirt's "qemu-N-NAME" ones are VMs, not containers. */
                        r.runtime = CTX_RUNTIME_NSPAWN;
                        strcpy(r.id, name);
                }
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
