/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* src/basic/connect.c: a client's connection to evmond's Unix socket,
 * for evmonctl, evmon-forward, bench/ and tests/. */

#include <sys/un.h>

/* The longest Unix socket path, in bytes without its NUL (107 on Linux). */
#define EVMON_SOCKET_PATH_MAX (sizeof(((struct sockaddr_un *) 0)->sun_path) - 1)

/* The socket a client of evmond talks to: ARG (--socket), else
 * $EVMON_SOCKET, else EVMON_SOCKET_PATH_DEFAULT; an empty one (ARG or the
 * variable) means the default. */
const char *evmon_socket_path(const char *arg);

/* Connects a blocking, close-on-exec stream socket to the Unix socket at
 * PATH. The fd, -ENAMETOOLONG when PATH does not fit sun_path (108 bytes
 * with the NUL), or the -errno of socket() or connect() (-ENOENT and
 * -ECONNREFUSED: nothing listens there). The caller owns the fd. */
int evmon_connect(const char *path);
