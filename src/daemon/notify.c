/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <systemd/sd-daemon.h>

#include "notify.h"

/* sd_notify() is a no-op outside systemd (no NOTIFY_SOCKET), so these can
 * be called unconditionally. */

void notify_ready(const char *status) {
        (void) sd_notifyf(0, "READY=1\nSTATUS=%s", status);
}

void notify_status(const char *status) {
        (void) sd_notifyf(0, "STATUS=%s", status);
}

void notify_reloading(void) {
        (void) sd_notify(0, "RELOADING=1\nSTATUS=Reloading the config");
}

void notify_reloaded(const char *status) {
        (void) sd_notifyf(0, "READY=1\nSTATUS=%s", status);
}

void notify_stopping(void) {
        (void) sd_notify(0, "STOPPING=1\nSTATUS=Stopping");
}
