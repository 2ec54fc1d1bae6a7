/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The client side of evmond's socket: see evmon/connect.h. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "evmon/cleanup.h"
#include "evmon/connect.h"
#include "evmon/protocol.h"

const char *evmon_socket_path(const char *arg) {
        const char *path = arg ?: getenv("EVMON_SOCKET");

        return path && *path ? path : EVMON_SOCKET_PATH_DEFAULT;
}

int evmon_connect(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_(closep) int fd = -1;

        if (!path)
                return -EINVAL;
        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return negative_errno();
        return TAKE_FD(fd);
}
