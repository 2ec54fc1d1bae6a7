/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The wire protocol between evmond and its clients, named once: JSON lines
 * over a Unix stream socket (DESIGN.md "Wire protocol", doc/protocol.md).
 * src/encode/ builds every line with these names; evmond and evmonctl read
 * them with these names. */

/* The "version" of the hello line. */
#define EVMON_PROTOCOL_VERSION 1

/* Where evmond listens unless told otherwise (config socket.path,
 * --socket, evmonctl's $EVMON_SOCKET). */
#define EVMON_SOCKET_PATH_DEFAULT "/run/evmon/evmond.sock"

/* Line types evmond writes ("type"). */
#define EVMON_LINE_HELLO "hello"
#define EVMON_LINE_SUBSCRIBED "subscribed"
#define EVMON_LINE_EVENT "event"
#define EVMON_LINE_RECORD "record"
#define EVMON_LINE_LOST "lost"
#define EVMON_LINE_DROPPED "dropped"
#define EVMON_LINE_ERROR "error"
#define EVMON_LINE_STATUS "status"
#define EVMON_LINE_RELOAD "reload"
#define EVMON_LINE_CONFIG "config"
#define EVMON_LINE_RESULT "result"
#define EVMON_LINE_SCHEMA "schema"
#define EVMON_LINE_PROBE "probe"
#define EVMON_LINE_COUNTER "counter"
/* evmonctl decode: a perf.data file's header, first. */
#define EVMON_LINE_HEADER "header"
/* The line evmon-forward adds to what it publishes, and the "source" of
 * the dropped lines it says for its own buffer. */
#define EVMON_LINE_FORWARDER "forwarder"
#define EVMON_SOURCE_FORWARDER "evmon-forward"
#define EVMON_LINE_GAP "gap"

/* The longest request line evmond reads, its newline not counted: a
 * longer one gets an error line and is skipped (doc/protocol.md). */
#define EVMON_REQUEST_MAX_BYTES 65535u

/* Requests a client sends ("type"). */
#define EVMON_REQUEST_SUBSCRIBE "subscribe"
#define EVMON_REQUEST_STATUS "status"
#define EVMON_REQUEST_RELOAD "reload"
#define EVMON_REQUEST_AGGREGATE "aggregate"
#define EVMON_REQUEST_FLUSH "flush"
/* Runtime control, for root and socket.admin_group. */
#define EVMON_REQUEST_ADD "add"
#define EVMON_REQUEST_REMOVE "remove"
#define EVMON_REQUEST_ENABLE "enable"
#define EVMON_REQUEST_DISABLE "disable"
#define EVMON_REQUEST_FILTER "filter"
