/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A stand-in for evmon-symbolizer that takes 40 ms per file and finds no
 * ELF in it: what a user's crafted files (each just under the loop's
 * wait) make of the real one. test-symbols counts how long the loop
 * waits for a callchain of such files. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "symbolizer.h"

int main(void) {
        for (;;) {
                union {
                        struct cmsghdr h;
                        char buf[CMSG_SPACE(sizeof(int) * 4)];
                } control = {};
                struct symbolizer_request req;
                struct symbolizer_reply rep = { .magic = SYMBOLIZER_MAGIC, .error = -ENOEXEC };
                struct iovec iov = { &req, sizeof(req) };
                struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control,
                                     .msg_controllen = sizeof(control) };
                ssize_t n = recvmsg(SYMBOLIZER_FD, &mh, MSG_CMSG_CLOEXEC);

                if (n <= 0)
                        return 0;
                for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                                int fd;

                                memcpy(&fd, CMSG_DATA(c), sizeof(fd));
                                close(fd);
                        }
                nanosleep(&(struct timespec) { 0, 40 * 1000 * 1000 }, NULL);
                rep.id = req.id;
                if (write(SYMBOLIZER_FD, &rep, sizeof(rep)) != (ssize_t) sizeof(rep))
                        return 1;
        }
}
