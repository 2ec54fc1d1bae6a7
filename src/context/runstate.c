/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Container id → what its runtime says of it (name, image, pod), read
 * from the state each runtime keeps on the host, never from a daemon's
 * socket (a socket answers as slowly as its daemon, and a daemon a
 * container escaped from answers what it likes). Each layout follows the
 * runtime's own writer:
 *   docker      /var/lib/docker/containers/<id>/config.v2.json
 *               (moby daemon/container: Container's JSON: "ID", "Name"
 *               with a leading '/', "Config":{"Image","Labels"}, "Image"
 *               the image id "sha256:…"; dockershim and cri-dockerd put
 *               the pod in Config.Labels "io.kubernetes.pod.*")
 *   containerd  /run/containerd/io.containerd.runtime.v2.task/k8s.io/<id>/
 *               config.json, the OCI bundle the shim runs; the CRI plugin's
 *               annotations (containerd pkg/cri/annotations):
 *               io.kubernetes.cri.container-name, .sandbox-name,
 *               .sandbox-namespace, .sandbox-uid, .image-name
 *   CRI-O       /run/containers/storage/overlay-containers/<id>/userdata/
 *               config.json (CRI-O's runroot; pkg/annotations and
 *               internal/factory/container): io.kubernetes.cri-o.ContainerID,
 *               io.kubernetes.container.name, io.kubernetes.pod.name,
 *               io.kubernetes.pod.namespace, io.kubernetes.pod.uid,
 *               io.kubernetes.cri-o.ImageName, io.kubernetes.cri-o.ImageRef
 *   podman      /var/lib/containers/storage/overlay-containers/
 *               containers.json (containers/storage's container list:
 *               "id", "names", "image", and "metadata", libpod's
 *               RuntimeContainerMetadata as a string: "image-name",
 *               "image-id", "name")
 *   nspawn      /run/systemd/machines/<name> (systemd-machined's
 *               machine_save(): NAME=, SCOPE=, CLASS=, ROOT=)
 *   LXC         /var/lib/lxc/<name>/config (lxc.container.conf(5))
 * Rootless containers' state is the user's own: it proves nothing, and
 * is not read. Every file is opened beneath the root, no link followed
 * on the way (doc/security.md), refused unless a regular file owned by
 * root and at most a bounded size. */

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "evmon/context.h"
#include "evmon/io.h"

#define WAYS 8u
#define PTR_SLOTS 1024u
/* A container's state file is a few KiB (docker's config.v2.json, an
 * OCI config.json with its seccomp profile some tens). */
#define MAX_FILE (256u << 10)
/* State read again per second, all containers together: a runtime that
 * rewrites its files often (dockerd on every health probe), or many
 * containers changing at once, must not keep the loop parsing JSON.
 * Past it, what is known stays as it is until the next second. */
#define READ_BUDGET (4u << 20)
#define MAX_LIST (16u << 20)    /* containers.json: every podman container */

struct key {
        dev_t dev;
        ino_t ino;
        struct timespec mtim;
        off_t size;
};

struct entry {
        bool used;
        uint64_t inc;                   /* this occupant's number: the pointer cache checks it */
        enum ctx_runtime runtime;
        char id[CTX_CONTAINER_ID_MAX];
        char pod[CTX_POD_UID_MAX];
        bool rootless;
        bool have_key;
        uint64_t last_used;
        uint64_t checked_ns;
        struct key key;
        char *strings;
        struct ctx_runstate_info info;
};

struct ptr_slot {
        const struct ctx_container *ct;
        uint64_t serial, inc;           /* ct's and e's when cached */
        struct entry *e;
};

struct ctx_runstate {
        int rootfd;
        bool no_openat2;
        uid_t owner;
        unsigned n_sets;
        uint64_t recheck_ns;
        uint64_t tick, gen, inc;
        struct entry *entries;          /* n_sets × WAYS */
        struct ptr_slot *ptrs;          /* PTR_SLOTS: container pointer → entry, checked */
        struct ctx_runstate_stats stats;
        uint64_t budget_sec;            /* the second READ_BUDGET counts for */
        size_t budget_used;
};

static const char *env_root(void) {
        /* Tests only: a made-up host's state under this directory. */
        return getenv("EVMON_TEST_RUNTIME_ROOT");
}

int ctx_runstate_new(const struct ctx_runstate_opts *opts, struct ctx_runstate **ret) {
        struct ctx_runstate_opts o = opts ? *opts : (struct ctx_runstate_opts) { .recheck_ns = UINT64_MAX };
        struct ctx_runstate *s;
        const char *root = o.root ?: env_root() ?: "/";
        unsigned max = o.max_containers ?: 4096;
        struct stat st;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->n_sets = (max + WAYS - 1) / WAYS;
        s->no_openat2 = o.no_openat2;
        s->recheck_ns = o.recheck_ns == UINT64_MAX ? 1000000000ull : o.recheck_ns;
        s->entries = calloc((size_t) s->n_sets * WAYS, sizeof(*s->entries));
        s->ptrs = calloc(PTR_SLOTS, sizeof(*s->ptrs));
        s->rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (!s->entries || !s->ptrs || s->rootfd < 0 || fstat(s->rootfd, &st) < 0) {
                int r = s->entries && s->ptrs ? -errno : -ENOMEM;
                ctx_runstate_free(s);
                return r;
        }
        /* The real root's state is root's; a test's made-up root is its
         * owner's. */
        s->owner = strcmp(root, "/") == 0 ? 0 : st.st_uid;
        *ret = s;
        return 0;
}

struct ctx_runstate *ctx_runstate_free(struct ctx_runstate *s) {
        if (!s)
                return NULL;
        if (s->entries)
                for (size_t i = 0; i < (size_t) s->n_sets * WAYS; i++)
                        free(s->entries[i].strings);
        free(s->entries);
        free(s->ptrs);
        if (s->rootfd >= 0)
                close(s->rootfd);
        free(s);
        return NULL;
}

/* PATH beneath the root, no symbolic link followed anywhere on the way:
 * openat2()'s RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS (Linux 5.6), else one
 * O_NOFOLLOW component at a time. O_NONBLOCK: a FIFO put there does not
 * stop the loop. */
static int open_beneath(int rootfd, const char *path, bool no_openat2) {
        struct open_how how = {
                .flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        char buf[PATH_MAX];
        int fd, dfd;
        char *p, *slash;

        if (!no_openat2) {
                fd = (int) syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
                if (fd >= 0)
                        return fd;
                if (errno != ENOSYS && errno != EPERM)
                        return -errno;
        }
        if (strlen(path) >= sizeof(buf))
                return -ENAMETOOLONG;
        strcpy(buf, path);
        dfd = rootfd;
        for (p = buf;; p = slash + 1) {
                int nfd;

                slash = strchr(p, '/');
                if (slash)
                        *slash = 0;
                if (!*p || strcmp(p, ".") == 0 || strcmp(p, "..") == 0) {
                        fd = -EINVAL;
                        break;
                }
                nfd = slash ? openat(dfd, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                            : openat(dfd, p, (int) how.flags);
                if (dfd != rootfd)
                        close(dfd);
                if (nfd < 0)
                        return -errno;
                if (!slash)
                        return nfd;
                dfd = nfd;
        }
        if (dfd != rootfd)
                close(dfd);
        return fd;
}

/* Opens PATH as a runtime's state file: regular, root's, at most MAX
 * bytes. Fills *RET_KEY. The fd, or -errno (-EPERM: refused). */
static int open_state(struct ctx_runstate *s, const char *path, size_t max, struct key *ret_key) {
        struct stat st;
        int fd = open_beneath(s->rootfd, path, s->no_openat2);

        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != s->owner || (uint64_t) st.st_size > max) {
                close(fd);
                s->stats.refused++;
                return -EPERM;
        }
        *ret_key = (struct key) { st.st_dev, st.st_ino, st.st_mtim, st.st_size };
        return fd;
}

static int read_state(struct ctx_runstate *s, const char *path, size_t max, char **ret, size_t *ret_len,
                      struct key *ret_key) {
        int fd = open_state(s, path, max, ret_key);
        int r;

        if (fd < 0)
                return fd;
        r = read_full(fd, max, ret, ret_len);
        close(fd);
        s->stats.reads++;
        return r;
}

/* What one state file says, before it is packed into an entry. */
struct found {
        const char *name, *image, *image_id, *pod_name, *pod_namespace, *pod_uid, *pod_container;
};

static const char *jstr(json_object *o, const char *k) {
        json_object *v;

        if (!o || !json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        /* "\u0000" in the JSON would cut the value short unseen. */
        if (strlen(json_object_get_string(v)) != (size_t) json_object_get_string_len(v))
                return NULL;
        return json_object_get_string(v);
}

static json_object *jobj(json_object *o, const char *k) {
        json_object *v;

        if (!o || !json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_object))
                return NULL;
        return v;
}

static json_object *parse_json(const char *buf, size_t len) {
        json_tokener *t = json_tokener_new_ex(64);
        json_object *o;

        if (!t)
                return NULL;
        o = json_tokener_parse_ex(t, buf, (int) len);
        if (json_tokener_get_error(t) != json_tokener_success) {
                json_object_put(o);
                o = NULL;
        }
        json_tokener_free(t);
        return o;
}

static bool same(const char *a, const char *b) {
        return a && b && strcmp(a, b) == 0;
}

/* docker's config.v2.json: verified when its "ID" is the cgroup's. */
static bool docker_found(json_object *o, const char *id, struct found *f) {
        json_object *cfg = jobj(o, "Config"), *labels = jobj(cfg, "Labels");
        const char *name = jstr(o, "Name");

        if (!same(jstr(o, "ID"), id))
                return false;
        f->name = name && name[0] == '/' ? name + 1 : name;
        f->image = jstr(cfg, "Image");
        f->image_id = jstr(o, "Image");
        f->pod_name = jstr(labels, "io.kubernetes.pod.name");
        f->pod_namespace = jstr(labels, "io.kubernetes.pod.namespace");
        f->pod_uid = jstr(labels, "io.kubernetes.pod.uid");
        f->pod_container = jstr(labels, "io.kubernetes.container.name");
        return true;
}

/* containerd's OCI bundle with the CRI plugin's annotations: the path
 * holds the id, so any bundle there is the container. */
static bool containerd_found(json_object *o, struct found *f) {
        json_object *a = jobj(o, "annotations");

        if (!o)
                return false;
        f->pod_container = jstr(a, "io.kubernetes.cri.container-name");
        f->name = f->pod_container;
        f->image = jstr(a, "io.kubernetes.cri.image-name");
        f->pod_name = jstr(a, "io.kubernetes.cri.sandbox-name");
        f->pod_namespace = jstr(a, "io.kubernetes.cri.sandbox-namespace");
        f->pod_uid = jstr(a, "io.kubernetes.cri.sandbox-uid");
        return true;
}

static bool crio_found(json_object *o, const char *id, struct found *f) {
        json_object *a = jobj(o, "annotations");

        if (!same(jstr(a, "io.kubernetes.cri-o.ContainerID"), id))
                return false;
        f->pod_container = jstr(a, "io.kubernetes.container.name");
        f->name = f->pod_container;
        f->image = jstr(a, "io.kubernetes.cri-o.ImageName");
        f->image_id = jstr(a, "io.kubernetes.cri-o.ImageRef");
        f->pod_name = jstr(a, "io.kubernetes.pod.name");
        f->pod_namespace = jstr(a, "io.kubernetes.pod.namespace");
        f->pod_uid = jstr(a, "io.kubernetes.pod.uid");
        return true;
}

/* containers/storage's list: the entry whose "id" is the cgroup's;
 * libpod keeps the image's name in "metadata", a JSON string. The
 * parsed metadata is handed back in *RET_META for the caller to put. */
static bool podman_found(json_object *o, const char *id, struct found *f, json_object **ret_meta) {
        size_t n;

        if (!o || !json_object_is_type(o, json_type_array))
                return false;
        n = json_object_array_length(o);
        for (size_t i = 0; i < n; i++) {
                json_object *c = json_object_array_get_idx(o, i), *names, *meta;
                const char *m;

                if (!same(jstr(c, "id"), id))
                        continue;
                if (json_object_object_get_ex(c, "names", &names) && json_object_is_type(names, json_type_array) &&
                    json_object_array_length(names) > 0 &&
                    json_object_is_type(json_object_array_get_idx(names, 0), json_type_string))
                        f->name = json_object_get_string(json_object_array_get_idx(names, 0));
                f->image_id = jstr(c, "image");
                m = jstr(c, "metadata");
                meta = m ? parse_json(m, strlen(m)) : NULL;
                f->image = jstr(meta, "image-name");
                if (!f->name)
                        f->name = jstr(meta, "name");
                *ret_meta = meta;
                return true;
        }
        return false;
}

/* KEY=VALUE lines (machined's state file, LXC's config with " = "): the
 * value of KEY in TEXT, copied into BUF. */
static const char *kv(const char *text, const char *key, char *buf, size_t size) {
        size_t kl = strlen(key);

        for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
                const char *v, *end;

                while (*l == ' ' || *l == '\t')
                        l++;
                if (strncmp(l, key, kl) != 0)
                        continue;
                v = l + kl;
                while (*v == ' ' || *v == '\t')
                        v++;
                if (*v != '=')
                        continue;
                v++;
                while (*v == ' ' || *v == '\t')
                        v++;
                end = strchrnul(v, '\n');
                while (end > v && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
                        end--;
                if ((size_t) (end - v) >= size)
                        return NULL;
                memcpy(buf, v, (size_t) (end - v));
                buf[end - v] = 0;
                return buf;
        }
        return NULL;
}

/* Packs F into *INFO, its strings in one allocation into *STRINGS
 * (freed first); nothing but the verdict when not VERIFIED. */
static int info_set(struct ctx_runstate_info *info, char **strings, bool verified, const struct found *f) {
        const char *const *src[] = { &f->name, &f->image, &f->image_id, &f->pod_name, &f->pod_namespace,
                                     &f->pod_uid, &f->pod_container };
        const char **dst[] = { &info->name, &info->image, &info->image_id, &info->pod_name,
                               &info->pod_namespace, &info->pod_uid, &info->pod_container };
        size_t total = 0;
        char *p;

        free(*strings);
        *strings = NULL;
        *info = (struct ctx_runstate_info) { .verified = verified };
        if (!verified)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(src); i++)
                if (*src[i])
                        total += strnlen(*src[i], 1024) + 1;
        /* One allocation per container state read, never per event. */
        p = *strings = total ? malloc(total) : NULL;
        if (total && !p)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(src); i++) {
                size_t n;

                if (!*src[i] || !(*src[i])[0])
                        continue;
                n = strnlen(*src[i], 1023);
                memcpy(p, *src[i], n);
                p[n] = 0;
                *dst[i] = p;
                p += n + 1;
        }
        return 0;
}

static void entry_set(struct ctx_runstate *s, struct entry *e, bool verified, const struct found *f) {
        (void) info_set(&e->info, &e->strings, verified, f);
        e->info.gen = ++s->gen;
}

/* Reads the state of E's container (or, when KEY matches what was read
 * last time, nothing). */
/* Where runtime RT keeps the state of container ID, below the state root,
 * and how big that file may be; false for a runtime without one. */
static bool state_path(enum ctx_runtime rt, const char *id, char *path, size_t size, size_t *max) {
        int n = -1;

        *max = MAX_FILE;
        switch (rt) {
        case CTX_RUNTIME_DOCKER:
                n = snprintf(path, size, "var/lib/docker/containers/%s/config.v2.json", id);
                break;
        case CTX_RUNTIME_CONTAINERD:
                n = snprintf(path, size, "run/containerd/io.containerd.runtime.v2.task/k8s.io/%s/config.json", id);
                break;
        case CTX_RUNTIME_CRIO:
                n = snprintf(path, size, "run/containers/storage/overlay-containers/%s/userdata/config.json", id);
                break;
        case CTX_RUNTIME_PODMAN:
                n = snprintf(path, size, "var/lib/containers/storage/overlay-containers/containers.json");
                *max = MAX_LIST;
                break;
        case CTX_RUNTIME_NSPAWN:
                n = snprintf(path, size, "run/systemd/machines/%s", id);
                break;
        case CTX_RUNTIME_LXC:
                n = snprintf(path, size, "var/lib/lxc/%s/config", id);
                break;
        default:
                return false;
        }
        /* A name is one path component: container.c refuses '/', and
         * "." and ".." would name a directory. */
        return n > 0 && (size_t) n < size && strcmp(id, ".") != 0 && strcmp(id, "..") != 0 && !strchr(id, '/');
}

static uint64_t now_coarse(void) {
        struct timespec ts;

        /* The vDSO's, no syscall: a recheck is due at most once a second. */
        (void) clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* Whether this second's READ_BUDGET is spent. */
static bool budget_spent(struct ctx_runstate *s) {
        uint64_t sec = now_coarse() / 1000000000ull;

        if (sec != s->budget_sec) {
                s->budget_sec = sec;
                s->budget_used = 0;
        }
        if (s->budget_used < READ_BUDGET)
                return false;
        s->stats.deferred++;
        return true;
}

/* Reads E's state file into BUF: 0, or 1 when the file is unchanged
 * since the last read (E's key), or a negative errno (-ENOENT: no runtime
 * keeps it; -EBUSY: this second's READ_BUDGET is spent). A bare id in a pod's cgroup is looked for with each runtime
 * that may keep it, and E takes the one that does. */
static int state_read(struct ctx_runstate *s, struct entry *e, char **buf, size_t *len, struct key *key) {
        enum ctx_runtime rts[3];
        size_t n_rts = 0, max;
        char path[PATH_MAX];
        int r = -ENOENT;

        if (e->runtime == CTX_RUNTIME_KUBERNETES) {
                rts[n_rts++] = CTX_RUNTIME_CONTAINERD;
                rts[n_rts++] = CTX_RUNTIME_CRIO;
                rts[n_rts++] = CTX_RUNTIME_DOCKER;
        } else
                rts[n_rts++] = e->runtime;
        for (size_t i = 0; i < n_rts && r == -ENOENT; i++) {
                if (!state_path(rts[i], e->id, path, sizeof(path), &max))
                        continue;
                if (e->have_key) {
                        int fd = open_state(s, path, max, key);

                        if (fd >= 0) {
                                close(fd);
                                if (memcmp(key, &e->key, sizeof(*key)) == 0)
                                        return 1;
                        }
                }
                if (budget_spent(s))
                        return -EBUSY;
                r = read_state(s, path, max, buf, len, key);
                if (r >= 0) {
                        s->budget_used += *len;
                        e->runtime = e->runtime == CTX_RUNTIME_KUBERNETES ? rts[i] : e->runtime;
                        return 0;
                }
        }
        return r;
}

/* Room for what a key=value state file says (F points into it). */
struct state_text {
        char name[CTX_CONTAINER_ID_MAX], image[PATH_MAX], class[32];
};

/* Whether the state in BUF is container ID's (of runtime RT), and what
 * it says of it in F, which points into *O, *META (the caller puts them)
 * or T. */
static bool state_judge(enum ctx_runtime rt, const char *id, const char *buf, size_t len, struct found *f,
                        json_object **o, json_object **meta, struct state_text *t) {
        switch (rt) {
        case CTX_RUNTIME_DOCKER:
                return docker_found(*o = parse_json(buf, len), id, f);
        case CTX_RUNTIME_CONTAINERD:
                return containerd_found(*o = parse_json(buf, len), f);
        case CTX_RUNTIME_CRIO:
                return crio_found(*o = parse_json(buf, len), id, f);
        case CTX_RUNTIME_PODMAN:
                return podman_found(*o = parse_json(buf, len), id, f, meta);
        case CTX_RUNTIME_NSPAWN:
                /* machined registers the machine by the name its scope or
                 * service carries. */
                f->name = id;
                f->image = kv(buf, "ROOT", t->image, sizeof(t->image));
                return same(kv(buf, "NAME", t->name, sizeof(t->name)), id) &&
                       same(kv(buf, "CLASS", t->class, sizeof(t->class)), "container");
        case CTX_RUNTIME_LXC:
                f->name = id;
                return true;
        default:
                return false;
        }
}

int ctx_runstate_parse(enum ctx_runtime rt, const char *id, const char *pod, const char *buf, size_t len,
                       struct ctx_runstate_info *ret, char **ret_strings) {
        json_object *o = NULL, *meta = NULL;
        struct state_text t;
        struct found f = {};
        bool verified = state_judge(rt, id, buf, len, &f, &o, &meta, &t);
        int r;

        /* The kubelet's cgroup names the pod: its state must name the
         * same one. Outside a pod's cgroup, labels that say "pod" are
         * anybody's (docker run -l): no pod then. */
        if (verified && pod[0] && !same(f.pod_uid, pod))
                verified = false;
        if (!pod[0])
                f.pod_name = f.pod_namespace = f.pod_uid = f.pod_container = NULL;
        r = info_set(ret, ret_strings, verified, &f);
        json_object_put(meta);
        json_object_put(o);
        return r < 0 ? r : verified;
}

static void entry_load(struct ctx_runstate *s, struct entry *e) {
        struct found f = {};
        struct key key;
        char *buf = NULL;
        size_t len = 0;
        int r;

        if (e->rootless) {
                /* The user's own state, named by the user: it verifies nothing. */
                if (!e->have_key)
                        entry_set(s, e, false, &f);
                e->have_key = true;
                return;
        }
        r = state_read(s, e, &buf, &len, &key);
        if (r == 1)
                return;  /* unchanged */
        if (r == -EBUSY) {
                /* What is known stays; a container first seen now is
                 * unverified until a later second reads it. */
                if (!e->have_key)
                        entry_set(s, e, false, &f);
                e->have_key = true;
                e->key = (struct key) {};
                return;
        }
        if (r >= 0) {
                (void) ctx_runstate_parse(e->runtime, e->id, e->pod, buf, len, &e->info, &e->strings);
                e->info.gen = ++s->gen;
        } else if (!e->have_key || e->info.verified)
                entry_set(s, e, false, &f);
        free(buf);
        e->have_key = r >= 0;
        e->key = r >= 0 ? key : (struct key) {};
        if (r < 0)
                e->have_key = true;  /* absent is known too: checked again after recheck_ns */
}

static uint64_t hash(const struct ctx_container *ct) {
        uint64_t h = 1469598103934665603ull ^ (uint64_t) ct->runtime ^ ((uint64_t) ct->rootless << 8);

        for (const char *p = ct->id; *p; p++)
                h = (h ^ (uint8_t) *p) * 1099511628211ull;
        for (const char *p = ct->pod; *p; p++)
                h = (h ^ (uint8_t) *p) * 1099511628211ull;
        return h;
}

static bool matches(const struct entry *e, const struct ctx_container *ct) {
        return e->used && e->rootless == ct->rootless && strcmp(e->id, ct->id) == 0 && strcmp(e->pod, ct->pod) == 0 &&
               (e->runtime == ct->runtime || ct->runtime == CTX_RUNTIME_KUBERNETES);
}

/* The entry of CT, found in its set or made there (the set's least
 * recently used goes), and remembered in pointer slot PS. Apart from the
 * lookup so that the common path stays small. */
static __attribute__((noinline)) struct entry *entry_find(struct ctx_runstate *s, struct ptr_slot *ps,
                                                          const struct ctx_container *ct) {
        struct entry *e = NULL, *set = &s->entries[(hash(ct) % s->n_sets) * WAYS];

        for (unsigned w = 0; w < WAYS && !e; w++)
                if (matches(&set[w], ct))
                        e = &set[w];
        if (!e) {
                e = &set[0];
                for (unsigned w = 1; w < WAYS; w++)
                        if (!set[w].used || (e->used && set[w].last_used < e->last_used))
                                e = &set[w];
                if (e->used)
                        s->stats.evicted++;
                free(e->strings);
                *e = (struct entry) { .used = true, .inc = ++s->inc, .runtime = ct->runtime, .rootless = ct->rootless };
                strcpy(e->id, ct->id);
                strcpy(e->pod, ct->pod);
        }
        *ps = (struct ptr_slot) { ct, ct->serial, e->inc, e };
        return e;
}

static __attribute__((noinline)) void entry_refresh(struct ctx_runstate *s, struct entry *e, uint64_t now) {
        e->checked_ns = now;
        entry_load(s, e);
}

const struct ctx_runstate_info *ctx_runstate_lookup(struct ctx_runstate *s, const struct ctx_container *ct) {
        struct ptr_slot *ps;
        struct entry *e;
        uint64_t now = 0;

        if (!s || !ct || !ct->id[0])
                return NULL;
        ps = &s->ptrs[((uintptr_t) ct >> 4) % PTR_SLOTS];
        /* The process table numbers its containers (serial): the same
         * address and number is the same container, and the same entry
         * occupant (inc) holds it still. Others go the long way. */
        if (ps->ct == ct && ct->serial && ps->serial == ct->serial && ps->e->inc == ps->inc)
                e = ps->e;
        else
                e = entry_find(s, ps, ct);
        e->last_used = ++s->tick;
        if (s->recheck_ns) {
                now = now_coarse();
                if (e->have_key && now - e->checked_ns < s->recheck_ns)
                        return &e->info;
        }
        entry_refresh(s, e, now);
        return &e->info;
}

void ctx_runstate_stats(const struct ctx_runstate *s, struct ctx_runstate_stats *ret) {
        struct ctx_runstate_stats st = s->stats;

        for (size_t i = 0; i < (size_t) s->n_sets * WAYS; i++) {
                const struct entry *e = &s->entries[i];

                if (!e->used)
                        continue;
                st.known++;
                if (e->info.verified)
                        st.verified++;
                else
                        st.unverified++;
        }
        *ret = st;
}
