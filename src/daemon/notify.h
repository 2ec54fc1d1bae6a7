/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* systemd service notifications (Type=notify). WATCHDOG=1 is sent by the
 * sd-event loop itself (sd_event_set_watchdog). */

void notify_ready(const char *status);
void notify_status(const char *status);
void notify_reloading(void);
void notify_reloaded(const char *status);
void notify_stopping(void);
