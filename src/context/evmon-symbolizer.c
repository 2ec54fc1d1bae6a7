/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* evmon-symbolizer: reads the symbol tables of ELF files for evmond, in a
 * sandbox, as systemd-coredump analyses an untrusted core apart from the
 * privileged process. The files are users' (any process's executable and
 * libraries): their parser runs here, never in the daemon's loop, where a
 * crafted file hung it (a FIFO for a debug link) and grew it by a GiB (an
 * xz bomb in .gnu_debugdata); issue 26, holes 6 and 7.
 *
 * Started by evmond with its socket at fd 3, /dev/null at 0 and 1, the
 * daemon's stderr at 2 (until the filter; then /dev/null too) and no
 * environment but the sanitizers' settings; before it
 * reads any request it gives up everything: root's uid (for nobody's,
 * where it still may), every capability, new privileges, dumpability (no ptrace by other
 * processes of nobody, which could take the files' fds), and all system
 * calls but the few reading an fd and answering need (seccomp). Its
 * memory is bounded by RLIMIT_AS, its CPU time by RLIMIT_CPU; evmond
 * bounds each answer's wall time and kills it past that. It opens no
 * file: evmond opens each one and passes the fd. */

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "evmon/context.h"
#include "evmon/io.h"
#include "symbolizer.h"

#define NOBODY 65534

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

#ifdef SANITIZED
/* LeakSanitizer's exit check needs ptrace and threads, which the filter
 * refuses; the sanitized tests check this code's leaks in-process
 * (test-symtab, fuzz-symtab). */
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void) {
        return 1;
}
#endif

#if defined(__x86_64__)
#define SECCOMP_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SECCOMP_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define SECCOMP_ARCH AUDIT_ARCH_I386
#endif

#define ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

static int sandbox_seccomp(void) {
#ifdef SECCOMP_ARCH
        struct sock_filter f[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_ARCH, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                ALLOW(SYS_read), ALLOW(SYS_write), ALLOW(SYS_writev), ALLOW(SYS_pread64),
                ALLOW(SYS_recvmsg), ALLOW(SYS_sendmsg), ALLOW(SYS_close), ALLOW(SYS_lseek),
#ifdef SYS_fstat
                ALLOW(SYS_fstat),
#endif
#ifdef SYS_newfstatat
                ALLOW(SYS_newfstatat),
#endif
                ALLOW(SYS_mmap), ALLOW(SYS_munmap), ALLOW(SYS_mremap), ALLOW(SYS_brk),
                ALLOW(SYS_madvise), ALLOW(SYS_mprotect), ALLOW(SYS_futex), ALLOW(SYS_getrandom),
                ALLOW(SYS_clock_gettime), ALLOW(SYS_rt_sigreturn), ALLOW(SYS_rt_sigprocmask),
                ALLOW(SYS_exit), ALLOW(SYS_exit_group),
                /* Everything else fails with EPERM: open, socket, kill,
                 * ptrace, execve, clone, ... */
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        };
        struct sock_fprog prog = { .len = (unsigned short) (sizeof(f) / sizeof(f[0])), .filter = f };

        if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
                return -errno;
        return 0;
#else
        return -EOPNOTSUPP;
#endif
}

static int sandbox(bool unwind) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct caps[2] = {};
        /* --unwind takes a process's mappings at once. */
        rlim_t n_files = unwind ? UNWIND_MAX_MAPS + 16 : 16;
        struct rlimit nofile = { n_files, n_files }, cpu = { 30, 31 }, zero = { 0, 0 };
        int r;

        /* The daemon's fds are O_CLOEXEC; this makes sure of it. */
        if (syscall(SYS_close_range, SYMBOLIZER_FD + 1, ~0U, 0) < 0)
                return -errno;
#ifndef SANITIZED
        /* The sanitizers' shadow memory is terabytes of address space. */
        struct rlimit as = { 512 << 20, 512 << 20 };

        if (setrlimit(RLIMIT_AS, &as) < 0)
                return -errno;
#endif
        if (setrlimit(RLIMIT_CPU, &cpu) < 0 || setrlimit(RLIMIT_NOFILE, &nofile) < 0 ||
            setrlimit(RLIMIT_FSIZE, &zero) < 0 || setrlimit(RLIMIT_CORE, &zero) < 0)
                return -errno;
        /* The bounding set too, while CAP_SETPCAP may be there (under
         * evmond it is not: evmond cleared its own). */
        for (int c = 0; c < 64; c++)
                (void) prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
        /* Root's uid for nobody's where that may be done: evmond starts
         * the helper after its own drop, which kept no CAP_SETUID (and
         * its unit's filter refuses setresuid), so there the helper stays
         * uid 0 without a capability, where the filter below leaves it no
         * call that names a file or another process. */
        if (getuid() == 0 || geteuid() == 0 || getgid() == 0 || getegid() == 0) {
                if ((setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
                     setresuid(NOBODY, NOBODY, NOBODY) < 0) && errno != EPERM)
                        return -errno;
        }
        /* A non-root daemon's ambient or inherited capabilities go too. */
        (void) prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
        if (syscall(SYS_capset, &h, caps) < 0)
                return -errno;
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                return -errno;
        /* libelf's and malloc's set-up before the filter. */
        if (ctx_symtab_init() < 0)
                return -ENOTSUP;
        /* stderr is the daemon's (the journal, or a root-owned log) for
         * a failed set-up up to here; a helper a user's file took over
         * must not write there. fd 0 is /dev/null. */
        if (dup2(STDIN_FILENO, STDERR_FILENO) < 0)
                return -errno;
        r = sandbox_seccomp();
        if (r < 0)
                return r;
        return 0;
}

/* One request: 0 with *ret_fd, 0 with -1 at the end, or -errno. */
static int receive(struct symbolizer_request *req, int *ret_fd) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * 4)];
        } control = {};
        struct iovec iov = { req, sizeof(*req) };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof(control) };
        ssize_t n;
        int fd = -1;

        do
                n = recvmsg(SYMBOLIZER_FD, &mh, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        if (n == 0) {
                *ret_fd = -1;
                return 0;
        }
        if (n < 0)
                return -errno;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
                        int x;

                        memcpy(&x, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                        if (fd < 0)
                                fd = x;
                        else
                                close(x);
                }
        }
        if ((size_t) n != sizeof(*req) || req->magic != SYMBOLIZER_MAGIC || fd < 0) {
                if (fd >= 0)
                        close(fd);
                return -EBADMSG;
        }
        *ret_fd = fd;
        return 0;
}

static int answer(uint32_t id, int error, const struct ctx_symtab *t) {
        struct symbolizer_reply rep = { .magic = SYMBOLIZER_MAGIC, .id = id, .error = error };
        int r;

        if (t) {
                rep.flags = t->flags;
                rep.n_segs = t->n_segs;
                memcpy(rep.segs, t->segs, sizeof(rep.segs));
                memcpy(rep.build_id, t->build_id, sizeof(rep.build_id));
                rep.build_id_len = t->build_id_len;
                rep.n_syms = t->n_syms;
                rep.names_len = t->names_len;
        }
        r = loop_write(SYMBOLIZER_FD, &rep, sizeof(rep));
        if (r >= 0 && t && t->n_syms)
                r = loop_write(SYMBOLIZER_FD, t->syms, (size_t) t->n_syms * sizeof(*t->syms));
        if (r >= 0 && t && t->names_len)
                r = loop_write(SYMBOLIZER_FD, t->names, (size_t) t->names_len);
        return r;
}

/* ---- --unwind ---------------------------------------------------------- */

struct unwind_ctx {
        const struct unwind_request *req;
        const uint8_t *stack;
        struct unwind_reply *rep;
};

static int no_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base, char **file_name,
                  Elf **elfp) {
        return -1;
}

static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                        const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                        char **debuginfo_file_name) {
        return -1;
}

static pid_t unwind_next_thread(Dwfl *dwfl, void *arg, void **thread_argp) {
        if (*thread_argp)
                return 0;
        *thread_argp = arg;
        return 1;
}

/* Memory is the sampled stack's bytes, nothing else: no other process's
 * memory is read (the helper could not), and a frame that needs more
 * ends the unwinding. */
static bool unwind_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg) {
        const struct unwind_ctx *u = arg;
        uint64_t sp = u->req->sp;

        if (addr < sp || addr - sp > u->req->stack_len || u->req->stack_len - (addr - sp) < sizeof(*result))
                return false;
        memcpy(result, u->stack + (addr - sp), sizeof(*result));
        return true;
}

static bool unwind_set_initial_registers(Dwfl_Thread *thread, void *arg) {
        const struct unwind_ctx *u = arg;

        dwfl_thread_state_register_pc(thread, u->req->regs[UNWIND_NREGS - 1]);
        return dwfl_thread_state_registers(thread, 0, UNWIND_NREGS, u->req->regs);
}

/* As perf's frame_callback() (util/unwind-libdw.c): a caller's pc is its
 * return address less one, inside the call. */
static int unwind_frame(Dwfl_Frame *state, void *arg) {
        struct unwind_ctx *u = arg;
        Dwarf_Addr pc;
        bool activation;

        if (!dwfl_frame_pc(state, &pc, &activation))
                return DWARF_CB_ABORT;
        if (!activation)
                pc--;
        u->rep->pcs[u->rep->n++] = pc;
        return u->rep->n >= u->req->max_frames || u->rep->n >= UNWIND_MAX_FRAMES ? DWARF_CB_ABORT : DWARF_CB_OK;
}

static void unwind_one(const struct unwind_request *req, const uint8_t *stack, const int *fds,
                       struct unwind_reply *rep) {
        static char *debuginfo_path;
        static const Dwfl_Callbacks cbs = { .find_elf = no_elf, .find_debuginfo = no_debuginfo,
                                            .debuginfo_path = &debuginfo_path };
        static const Dwfl_Thread_Callbacks tcbs = { .next_thread = unwind_next_thread,
                                                    .memory_read = unwind_memory_read,
                                                    .set_initial_registers = unwind_set_initial_registers };
        struct unwind_ctx u = { req, stack, rep };
        Dwfl *dwfl = dwfl_begin(&cbs);

        if (!dwfl) {
                rep->error = -ENOMEM;
                return;
        }
        dwfl_report_begin(dwfl);
        for (uint32_t i = 0; i < req->n_maps; i++)
                /* Its load bias: where its file offset 0 is. */
                (void) dwfl_report_elf(dwfl, "m", "m", fds[i], req->maps[i].start - req->maps[i].pgoff, false);
        dwfl_report_end(dwfl, NULL, NULL);
        if (!dwfl_attach_state(dwfl, NULL, 1, &tcbs, &u))
                rep->error = -ENOEXEC;
        else if (dwfl_getthread_frames(dwfl, 1, unwind_frame, &u) < 0 && rep->n == 0)
                rep->error = -ENOENT;
        dwfl_end(dwfl);
}

static int read_exact(int fd, void *buf, size_t n) {
        for (size_t got = 0; got < n;) {
                ssize_t k = read(fd, (uint8_t *) buf + got, n - got);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? -errno : -EPIPE;
                got += (size_t) k;
        }
        return 0;
}

/* One unwind request: its header (with the fds), then its stack. 1, 0 at
 * the end, -errno. */
static int unwind_receive(struct unwind_request *req, int *fds, uint8_t *stack) {
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int) * UNWIND_MAX_MAPS)];
        } control = {};
        struct iovec iov = { req, sizeof(*req) };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof(control) };
        size_t n_fds = 0;
        ssize_t n;
        int r;

        do
                n = recvmsg(SYMBOLIZER_FD, &mh, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        if (n == 0)
                return 0;
        if (n < 0)
                return -errno;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
                        for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
                                int x;

                                memcpy(&x, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                                if (n_fds < UNWIND_MAX_MAPS)
                                        fds[n_fds++] = x;
                                else
                                        close(x);
                        }
        r = read_exact(SYMBOLIZER_FD, (uint8_t *) req + n, sizeof(*req) - (size_t) n);
        if (r >= 0 && (req->magic != UNWIND_MAGIC || req->n_maps != n_fds || req->stack_len > UNWIND_MAX_STACK))
                r = -EBADMSG;
        if (r >= 0)
                r = read_exact(SYMBOLIZER_FD, stack, req->stack_len);
        if (r < 0) {
                for (size_t i = 0; i < n_fds; i++)
                        close(fds[i]);
                return r;
        }
        return 1;
}

static int unwind_main(void) {
        static uint8_t stack[UNWIND_MAX_STACK];

        for (;;) {
                struct unwind_request req;
                struct unwind_reply rep = { .magic = UNWIND_MAGIC };
                int fds[UNWIND_MAX_MAPS], r;

                r = unwind_receive(&req, fds, stack);
                if (r <= 0)
                        return r < 0 ? 1 : 0;
                rep.id = req.id;
                unwind_one(&req, stack, fds, &rep);
                for (uint32_t i = 0; i < req.n_maps; i++)
                        close(fds[i]);
                if (loop_write(SYMBOLIZER_FD, &rep, sizeof(rep)) < 0)
                        return 1;
        }
}

int main(int argc, char **argv) {
        bool unwind = argc > 1 && strcmp(argv[1], "--unwind") == 0;
        int r = sandbox(unwind);

        if (r < 0) {
                fprintf(stderr, "evmon-symbolizer: cannot set up its sandbox: %s\n", strerror(-r));
                return 1;
        }
        if (unwind)
                return unwind_main();
        for (;;) {
                _cleanup_(ctx_symtab_freep) struct ctx_symtab *t = NULL;
                struct symbolizer_request req;
                int fd = -1;

                r = receive(&req, &fd);
                if (r < 0)
                        return 1;
                if (fd < 0)
                        return 0;
                r = ctx_symtab_read(fd, NULL, 0, NULL, &t);
                close(fd);
                if (answer(req.id, r < 0 ? r : 0, t) < 0)
                        return 1;
        }
}
