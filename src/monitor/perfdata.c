/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* perf.data as `perf record` writes it. Layout
 * (tools/perf/Documentation/perf.data-file-format.txt, util/header.c):
 *
 *   file mode: struct perf_file_header   magic "PERFILE2", sections, feature bitmap
 *              attrs section             { struct perf_event_attr; section of u64 ids }[]
 *              data section              the records, as the kernel and perf wrote them
 *              feature table             one section per set feature bit, after the data
 *   pipe mode: { magic, size = 16 }, then records only: the attrs come as
 *              HEADER_ATTR, the tracing data as HEADER_TRACING_DATA, the
 *              features as HEADER_FEATURE records (util/header.c
 *              perf_event__synthesize_*).
 *
 * Everything is read in place from the mapped (or read) file through
 * bounds-checked cursors; a record is copied only when it is not 8-byte
 * aligned, must be byte-swapped, or waits in the time-order queue after
 * coming out of a compressed record.
 *
 * A pipe-mode stream that cannot be mapped (perf record -o - | ...) is
 * read as it arrives: the records up to the first kernel record (attrs,
 * tracing data, features) make the header, the rest goes through a window
 * that holds the record being read and what read() brought after it; a
 * record waiting in the time-order queue is copied out of it. Memory is
 * the header, the largest record and the time-order queue, not the
 * input. */


#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "evmon/io.h"
#include "perfdata-int.h"

bool perfdata_has_feature(const struct perfdata *pd, unsigned feature) {
        if (!pd || feature >= PERFDATA_FEAT_MAX)
                return false;
        return pd->features[feature / 64] & (1ULL << (feature % 64));
}

static void set_feature(struct perfdata *pd, unsigned feature) {
        pd->features[feature / 64] |= 1ULL << (feature % 64);
}

const char *perfdata_unsupported(const void *head, size_t size) {
        const uint8_t *h = head;

        if (size >= 8 && memcmp(head, MAGIC1, 8) == 0)
                return "the old perf.data layout (\"PERFFILE\"); record it again with a newer perf";
        /* HEADER_DIR_FORMAT in struct perf_file_header's feature bitmap
         * (bit 24 of the u64 at byte 72), in either byte order. */
        if (size >= sizeof(struct file_header) && (load_u64(h) == MAGIC2 || load_u64(h) == bswap_64(MAGIC2))) {
                uint64_t w = load_u64(h + offsetof(struct file_header, features));

                if (load_u64(h) != MAGIC2)
                        w = bswap_64(w);
                if (w & (1ULL << PERFDATA_FEAT_DIR_FORMAT))
                        return "a perf record --threads header file read from standard input (its samples "
                               "are in the data.N files beside it: name the directory or its data file)";
        }
        return NULL;
}

/* ---- opening ---------------------------------------------------------- */

/* Pipe mode: the attrs, tracing data, event names and features come as
 * records before the data they describe. Take them all in first, so that
 * the header is whole before the first record is handed out. A damaged
 * stream stops this quietly: reading the records finds the damage. */
static int pipe_prescan(struct perfdata *pd) {
        uint64_t pos = pd->data_start;
        int r;

        while (pos < pd->size && pd->size - pos >= sizeof(struct perf_event_header)) {
                struct perf_event_header h;
                const uint8_t *p = pd->base + pos, *body;
                uint64_t extra, left = pd->size - pos;
                struct pcur c;

                read_header(pd, p, &h);
                if (h.size < sizeof(h) || h.size > left)
                        break;
                if (record_payload(pd, &h, p, &extra) < 0 || extra > left - h.size)
                        break;
                body = p + sizeof(h);
                c = pcur_make(body, h.size - sizeof(h), pd->swap);
                switch (h.type) {
                case PERFDATA_RECORD_HEADER_ATTR: {
                        struct perf_event_attr attr;
                        uint32_t asz;

                        if (h.size - sizeof(h) < PERF_ATTR_SIZE_VER0)
                                return 0;
                        if (read_attr(pd, body, h.size - sizeof(h), &attr) < 0)
                                return 0;
                        memcpy(&asz, body + 4, 4);
                        asz = pd->swap ? bswap_32(asz) : asz;
                        asz = asz ? asz : PERF_ATTR_SIZE_VER0;
                        r = add_event(pd, &attr, body + asz, (h.size - sizeof(h) - asz) / 8);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0)
                                return 0;
                        break;
                }
                case PERFDATA_RECORD_HEADER_TRACING_DATA:
                        r = read_tracing_data(pd, p + h.size, extra);
                        if (r == -ENOMEM)
                                return r;
                        break;
                case PERFDATA_RECORD_EVENT_UPDATE: {
                        uint64_t type, id;
                        struct perfdata_event *ev;

                        if (pcur_u64(&c, &type) < 0 || pcur_u64(&c, &id) < 0)
                                break;
                        ev = event_by_id(pd, id);
                        if (type != 2 || !ev || ev->name)
                                break;
                        ev->name = strndup((const char *) c.c.p, cursor_left(&c.c));
                        if (!ev->name)
                                return -ENOMEM;
                        break;
                }
                case PERFDATA_RECORD_HEADER_FEATURE: {
                        uint64_t feat;

                        /* An empty one (HEADER_LAST_FEATURE) ends the list
                         * (header.c perf_event__synthesize_features). */
                        if (pcur_u64(&c, &feat) < 0 || feat >= PERFDATA_FEAT_MAX || cursor_left(&c.c) == 0)
                                break;
                        set_feature(pd, (unsigned) feat);
                        pd->feat[feat].p = c.c.p;
                        pd->feat[feat].size = cursor_left(&c.c);
                        break;
                }
                }
                pos += h.size + extra;
        }
        return 0;
}

/* Whether what follows a data section of size 0 at OFFSET is a record
 * (perf record killed before it wrote the size) rather than the feature
 * table of a file without records, whose first u64 is an offset past the
 * header, which read as a record header has a type no record has. */
static bool killed_recording(const struct perfdata *pd, uint64_t offset) {
        struct perf_event_header h;

        if (pd->size - offset < sizeof(h))
                return false;
        read_header(pd, pd->base + offset, &h);
        return h.type != 0 && h.type < 2 * PERFDATA_RECORD_USER_TYPE_START && h.size >= sizeof(h) &&
                h.size <= pd->size - offset;
}

static int perfdata_parse(struct perfdata *pd) {
        struct file_header h;
        uint64_t magic, hsize;
        int r;

        if (pd->size < 16)
                return -EBADMSG;
        if (memcmp(pd->base, MAGIC1, 8) == 0)
                return -EPROTONOSUPPORT;
        magic = load_u64(pd->base);
        if (magic == bswap_64(MAGIC2))
                pd->swap = true;
        else if (magic != MAGIC2)
                return -EBADMSG;
        hsize = file_u64(pd, pd->base + 8);
        pd->rbase = pd->base;

        pd->bounce = aligned_alloc(8, BOUNCE_SIZE);
        if (!pd->bounce)
                return -ENOMEM;
        pd->cur_chunk = -1;

        if (hsize == PIPE_HEADER_SIZE) {
                pd->pipe = true;
                pd->data_start = pd->pos = PIPE_HEADER_SIZE;
                pd->data_end = pd->size;
                r = pipe_prescan(pd);
                if (r < 0)
                        return r;
        } else {
                if (pd->size < sizeof(h))
                        return -EBADMSG;
                memcpy(&h, pd->base, sizeof(h));
                if (pd->swap) {
                        uint64_t *w = (uint64_t *) &h;

                        for (size_t i = 0; i < sizeof(h) / 8; i++)
                                w[i] = bswap_64(w[i]);
                }
                if (h.size < sizeof(h) || h.size > pd->size)
                        return -EBADMSG;
                memcpy(pd->features, h.features, sizeof(pd->features));
                if (h.data.offset < h.size || h.data.offset > pd->size)
                        return -EBADMSG;
                pd->data_start = pd->pos = h.data.offset;
                pd->data_end = h.data.offset + h.data.size;
                if (h.data.size > pd->size - h.data.offset) {
                        /* Cut short (a copy interrupted): the records that
                         * are there, then the error at the end of what is
                         * there. */
                        pd->data_end = pd->size;
                        pd->truncated = true;
                } else if (h.data.size == 0 && killed_recording(pd, h.data.offset)) {
                        /* perf record writes the data size, and the feature
                         * sections after the data, when it finishes: one
                         * killed (SIGKILL, the machine down) left 0 there
                         * and its records up to the end of the file (perf
                         * report: "data size field is 0"). The same. */
                        pd->data_end = pd->size;
                        pd->truncated = true;
                }
                pd->data_offset = h.data.offset;
                pd->data_size = h.data.size;
                if (pd->truncated)
                        memset(pd->features, 0, sizeof(pd->features));
                else {
                        r = read_feature_table(pd, &h);
                        if (r < 0)
                                return r;
                }
                r = read_attrs(pd, &h);
                if (r < 0)
                        return r;
        }
        setup_id_positions(pd);
        if (pd->layout_bad)
                return -EBADMSG;
        r = use_features(pd);
        if (r < 0)
                return r;
        return build_header(pd);
}

int perfdata_new(const void *data, size_t size, struct perfdata **ret) {
        _cleanup_(perfdata_freep) struct perfdata *pd = NULL;
        int r;

        if (!data || !ret)
                return -EINVAL;
        pd = calloc(1, sizeof(*pd));
        if (!pd)
                return -ENOMEM;
        pd->base = data;
        pd->size = size;
        r = perfdata_parse(pd);
        if (r < 0)
                return r;
        /* The data.N files of a --threads directory are not in memory:
         * refuse, rather than give the few records "data" holds. */
        if (!pd->pipe && perfdata_has_feature(pd, PERFDATA_FEAT_DIR_FORMAT))
                return -EPROTONOSUPPORT;
        *ret = TAKE_PTR(pd);
        return 0;
}

static void dir_closep(DIR **d) {
        if (*d)
                closedir(*d);
}

/* perf record --threads: after the data section, every data.N file in
 * DIR_FD (perf takes each regular "data.*" file, a symlink to one too,
 * util/data.c perf_data__open_dir, and leaves out empty ones), in the
 * order readdir() gives them, as perf takes them, not in N's: perf reads
 * them in turn in that order, and its queue gives records of one time in
 * the order it read them (ordered-events.c queue_event()), so two samples
 * of one time in data.0 and data.1 came out the other way round than in
 * `perf script` where readdir() gave data.1 first (ext4 hashes names).
 * The directory may be anyone's: a data.N that is a FIFO would
 * block open() for good and a device would be read without end, so each
 * is opened with O_NONBLOCK and anything but a regular file (after the
 * link) is refused with -EBADFD, its name in *RET_FAULT. */
static int open_dir_files(struct perfdata *pd, int dir_fd, char **ret_fault) {
        _cleanup_(dir_closep) DIR *d = NULL;
        struct dirent *de;
        int fd;

        fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                int r = -errno;

                close(fd);
                return r;
        }
        pd->srcs = calloc(1, sizeof(*pd->srcs));
        if (!pd->srcs)
                return -ENOMEM;
        pd->srcs[0] = (struct source) {
                .base = pd->base, .start = pd->data_start, .end = pd->data_end,
                .pos = pd->data_start, .truncated = pd->truncated,
        };
        pd->n_srcs = 1;
        while ((errno = 0, de = readdir(d))) {
                _cleanup_(closep) int ffd = -1;
                struct source *srcs, *src;
                struct stat st;
                char *end;
                unsigned long n;

                if (strncmp(de->d_name, "data.", 5) != 0 || de->d_name[5] < '0' || de->d_name[5] > '9')
                        continue;
                errno = 0;
                n = strtoul(de->d_name + 5, &end, 10);
                if (*end || errno || n > UINT32_MAX)
                        continue;
                ffd = openat(dir_fd, de->d_name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
                if (ffd < 0) {
                        *ret_fault = strdup(de->d_name);
                        return -errno;
                }
                if (fstat(ffd, &st) < 0)
                        return -errno;
                if (!S_ISREG(st.st_mode)) {
                        *ret_fault = strdup(de->d_name);
                        return -EBADFD;
                }
                if (st.st_size == 0)
                        continue;
                if ((uint64_t) st.st_size > SIZE_MAX)
                        return -EFBIG;
                if (pd->n_srcs > DIR_MAX_FILES)
                        return -E2BIG;
                srcs = reallocarray(pd->srcs, pd->n_srcs + 1, sizeof(*srcs));
                if (!srcs)
                        return -ENOMEM;
                pd->srcs = srcs;
                src = &pd->srcs[pd->n_srcs];
                *src = (struct source) { .end = (uint64_t) st.st_size, .n = (unsigned) n };
                src->map = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, ffd, 0);
                if (src->map == MAP_FAILED)
                        return -errno;
                src->map_size = (size_t) st.st_size;
                src->base = src->map;
                pd->n_srcs++;
        }
        if (errno != 0)
                return -errno;
        return 0;
}

/* What cannot be mapped. Pipe mode is read as it comes: its magic at
 * once (400 MB of zeros failed after all of it was read, 411 MB), the
 * records up to the first kernel record as the header, the rest as the
 * reader asks. A file-mode perf.data needs its feature table at its end:
 * read whole, as before. FD stays the caller's. */
int stream_open(struct perfdata *pd, int fd) {
        uint64_t magic, pos;
        int r;

        pd->in_fd = fd;
        pd->stream = true;
        pd->win_hold = true;
        r = stream_want(pd, PIPE_HEADER_SIZE);
        if (r < 0)
                return r;
        if (pd->win_len < PIPE_HEADER_SIZE)
                return -EBADMSG;
        if (memcmp(pd->win, MAGIC1, 8) == 0)
                return -EPROTONOSUPPORT;
        magic = load_u64(pd->win);
        if (magic == bswap_64(MAGIC2))
                pd->swap = true;
        else if (magic != MAGIC2)
                return -EBADMSG;
        if (file_u64(pd, pd->win + 8) != PIPE_HEADER_SIZE) {
                /* File mode: all of it. */
                while (!pd->in_eof) {
                        if (pd->win_len > SIZE_MAX / 2)
                                return -EFBIG;
                        r = stream_want(pd, pd->win_len + 1);
                        if (r < 0)
                                return r;
                }
                pd->stream = false;
                pd->in_fd = -1;
                pd->buf = TAKE_PTR(pd->win);
                pd->base = pd->buf;
                pd->size = pd->win_len;
                pd->win_len = pd->win_cap = 0;
                return 0;
        }

        /* The header: perf's own records before the first kernel record
         * (util/header.c perf_event__synthesize_for_pipe writes the attrs,
         * event names, tracing data and features first). */
        for (pos = PIPE_HEADER_SIZE;;) {
                struct perf_event_header h;
                uint64_t extra;

                pd->pos = pos;
                r = stream_record(pd);
                if (r < 0)
                        return r;
                if (pd->data_end - pos < sizeof(h))
                        break;
                read_header(pd, pd->win + pos, &h);
                /* perf's header records end where the records begin (and
                 * a live perf may wait long after FINISHED_INIT). */
                if (h.type < PERFDATA_RECORD_USER_TYPE_START || h.type == PERFDATA_RECORD_FINISHED_ROUND ||
                    h.type == PERFDATA_RECORD_FINISHED_INIT || h.size < sizeof(h) || h.size > pd->data_end - pos ||
                    record_payload(pd, &h, pd->win + pos, &extra) < 0 || extra > pd->data_end - pos - h.size)
                        break;
                pos += h.size + extra;
                if (pos > STREAM_HEADER_MAX)
                        return -EFBIG;
        }
        pd->buf = malloc(pos);
        if (!pd->buf)
                return -ENOMEM;
        memcpy(pd->buf, pd->win, pos);
        pd->base = pd->buf;
        pd->size = pos;
        pd->pos = 0;
        pd->win_hold = false;
        return 0;
}

int perfdata_open(const char *path, struct perfdata **ret) {
        _cleanup_(freep) char *fault = NULL;

        return perfdata_open_full(path, ret, &fault);
}

int perfdata_open_full(const char *path, struct perfdata **ret, char **ret_fault) {
        _cleanup_(perfdata_freep) struct perfdata *pd = NULL;
        _cleanup_(closep) int fd = -1, dir_fd = -1;
        struct stat st;
        int r;

        if (!path || !ret || !ret_fault)
                return -EINVAL;
        *ret_fault = NULL;
        if (strcmp(path, "-") == 0) {
                fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
                if (fd < 0)
                        return -errno;
        } else {
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        return -errno;
        }
        if (fstat(fd, &st) < 0)
                return -errno;
        if (S_ISDIR(st.st_mode)) {
                /* perf record --threads or --kcore: a directory, whose
                 * header and first records are in "data". */
                dir_fd = TAKE_FD(fd);
                /* Named by the directory, not by the person: a FIFO or
                 * device there is refused as a data.N is. */
                fd = openat(dir_fd, "data", O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
                if (fd < 0)
                        return errno == ENOENT ? -EISDIR : -errno;
                if (fstat(fd, &st) < 0)
                        return -errno;
                if (!S_ISREG(st.st_mode)) {
                        *ret_fault = strdup("data");
                        return -EBADFD;
                }
        }

        pd = calloc(1, sizeof(*pd));
        if (!pd)
                return -ENOMEM;
        pd->in_fd = -1;
        if (S_ISREG(st.st_mode) && st.st_size > 0) {
                if ((uint64_t) st.st_size > SIZE_MAX)
                        return -EFBIG;
                pd->map = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
                if (pd->map == MAP_FAILED) {
                        pd->map = NULL;
                        return -errno;
                }
                pd->map_size = (size_t) st.st_size;
                pd->base = pd->map;
                pd->size = pd->map_size;
        } else {
                /* What cannot be mapped (a pipe, standard input). */
                r = stream_open(pd, fd);
                if (r < 0)
                        return r;
                if (pd->stream) {
                        pd->in_fd = TAKE_FD(fd);
                        pd->in_fd_owned = true;
                }
        }

        r = perfdata_parse(pd);
        if (r < 0)
                return r;
        if (pd->stream) {
                /* Read on from the window, which holds the stream from its
                 * start: the header's records are given as records too. */
                pd->rbase = pd->win;
                pd->rbase_off = pd->win_off;
                pd->data_end = pd->win_off + pd->win_len;
        }
        if (!pd->pipe && perfdata_has_feature(pd, PERFDATA_FEAT_DIR_FORMAT)) {
                /* The samples are in the data.N files beside "data":
                 * read them too, also when "data" itself was named. */
                if (dir_fd < 0) {
                        _cleanup_(freep) char *copy = NULL;

                        if (!S_ISREG(st.st_mode) || strcmp(path, "-") == 0)
                                return -EPROTONOSUPPORT;
                        copy = strdup(path);
                        if (!copy)
                                return -ENOMEM;
                        dir_fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        if (dir_fd < 0)
                                return -errno;
                }
                r = open_dir_files(pd, dir_fd, ret_fault);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(pd);
        return 0;
}

struct perfdata *perfdata_free(struct perfdata *pd) {
        if (!pd)
                return NULL;
        for (size_t i = 0; i < pd->n_events; i++) {
                if (!pd->events[i])
                        continue;
                free(pd->events[i]->ids);
                free(pd->events[i]->name);
                free(pd->events[i]);
        }
        free(pd->events);
        free(pd->ids);
        for (size_t i = 0; i < pd->n_formats; i++)
                format_free(pd->formats[i]);
        free(pd->formats);
        free(pd->bounce);
        tree_done(&pd->header);
        tree_done(&pd->user);
        if (pd->zstd)
                ZSTD_freeDStream(pd->zstd);
        free(pd->dbuf);
        for (size_t i = 0; i < pd->n_chunks; i++)
                free(pd->chunks[i].mem);
        free(pd->chunks);
        free(pd->slots);
        free(pd->free_slots);
        free(pd->pend);
        for (size_t i = 0; i < pd->n_srcs; i++) {
                if (pd->srcs[i].map && pd->srcs[i].map != MAP_FAILED)
                        munmap(pd->srcs[i].map, pd->srcs[i].map_size);
                if (pd->srcs[i].zstd)
                        ZSTD_freeDStream(pd->srcs[i].zstd);
        }
        free(pd->srcs);
        if (pd->map)
                munmap(pd->map, pd->map_size);
        free(pd->buf);
        free(pd->win);
        if (pd->in_fd_owned)
                safe_close(pd->in_fd);
        free(pd);
        return NULL;
}

void perfdata_set_wait(struct perfdata *pd, perfdata_wait_t wait, void *userdata) {
        if (!pd)
                return;
        pd->wait = wait;
        pd->wait_userdata = userdata;
}

size_t perfdata_n_events(const struct perfdata *pd) {
        return pd ? pd->n_events : 0;
}

const struct perfdata_event *perfdata_event(const struct perfdata *pd, size_t i) {
        if (!pd || i >= pd->n_events)
                return NULL;
        return pd->events[i];
}

int perfdata_clock(const struct perfdata *pd, struct perfdata_clock *ret) {
        if (!pd || !ret)
                return -EINVAL;
        if (!pd->has_clock)
                return -ENODATA;
        *ret = pd->clock;
        return 0;
}

size_t perfdata_n_bad_formats(const struct perfdata *pd) {
        return pd ? pd->n_bad_formats : 0;
}

bool perfdata_swapped(const struct perfdata *pd) {
        return pd && pd->swap;
}

bool perfdata_pipe(const struct perfdata *pd) {
        return pd && pd->pipe;
}

struct perfdata_tree perfdata_header(const struct perfdata *pd) {
        return pd ? tree_get(&pd->header) : (struct perfdata_tree) {};
}

uint64_t perfdata_feature_damage(const struct perfdata *pd) {
        return pd ? pd->feature_damage : 0;
}

static const char *const user_type_table[] = {
        [64 - PERFDATA_RECORD_USER_TYPE_START] = "HEADER_ATTR",
        [65 - PERFDATA_RECORD_USER_TYPE_START] = "HEADER_EVENT_TYPE",
        [66 - PERFDATA_RECORD_USER_TYPE_START] = "HEADER_TRACING_DATA",
        [67 - PERFDATA_RECORD_USER_TYPE_START] = "HEADER_BUILD_ID",
        [68 - PERFDATA_RECORD_USER_TYPE_START] = "FINISHED_ROUND",
        [69 - PERFDATA_RECORD_USER_TYPE_START] = "ID_INDEX",
        [70 - PERFDATA_RECORD_USER_TYPE_START] = "AUXTRACE_INFO",
        [71 - PERFDATA_RECORD_USER_TYPE_START] = "AUXTRACE",
        [72 - PERFDATA_RECORD_USER_TYPE_START] = "AUXTRACE_ERROR",
        [73 - PERFDATA_RECORD_USER_TYPE_START] = "THREAD_MAP",
        [74 - PERFDATA_RECORD_USER_TYPE_START] = "CPU_MAP",
        [75 - PERFDATA_RECORD_USER_TYPE_START] = "STAT_CONFIG",
        [76 - PERFDATA_RECORD_USER_TYPE_START] = "STAT",
        [77 - PERFDATA_RECORD_USER_TYPE_START] = "STAT_ROUND",
        [78 - PERFDATA_RECORD_USER_TYPE_START] = "EVENT_UPDATE",
        [79 - PERFDATA_RECORD_USER_TYPE_START] = "TIME_CONV",
        [80 - PERFDATA_RECORD_USER_TYPE_START] = "HEADER_FEATURE",
        [81 - PERFDATA_RECORD_USER_TYPE_START] = "COMPRESSED",
        [82 - PERFDATA_RECORD_USER_TYPE_START] = "FINISHED_INIT",
        [83 - PERFDATA_RECORD_USER_TYPE_START] = "COMPRESSED2",
};

const char *perfdata_record_type_to_string(uint32_t type) {
        if (type < PERFDATA_RECORD_USER_TYPE_START)
                return record_type_to_string(type);
        type -= PERFDATA_RECORD_USER_TYPE_START;
        if (type >= ELEMENTSOF(user_type_table))
                return NULL;
        return user_type_table[type];
}
