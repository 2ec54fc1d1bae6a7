/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Stacks folded for flame graphs (evmonctl profile, decode --folded): a
 * tree of frames counted by samples, written as the folded lines that
 * flamegraph.pl, inferno and speedscope read ("comm;root;...;leaf N") or
 * drawn as a flame graph in SVG, in flamegraph.pl's layout. */

#include <stdint.h>
#include <stdio.h>

#include "evmon/cleanup.h"

/* A frame's name is cut here (bytes, before cleaning). */
#define FLAME_NAME_MAX 256
/* A stack deeper than this keeps its root-most frames only. */
#define FLAME_DEPTH_MAX 512
/* Nodes the tree holds; samples of stacks beyond it are counted, not kept. */
#define FLAME_NODES_MAX (1u << 20)

struct flame;

int flame_new(struct flame **ret);
struct flame *flame_free(struct flame *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct flame *, flame_free);

/* Adds COUNT samples of the stack FRAMES[0..N), root first (the comm
 * first, as stackcollapse writes it). Names are anyone's (comms, symbols
 * of any file): each is cut at FLAME_NAME_MAX bytes and cleaned, so that
 * it is one frame of one folded line and valid UTF-8: ';', control
 * characters (C0, DEL, C1) become '_', bytes that are not UTF-8 '?'; an
 * empty name is "[unknown]". 0, -ENOMEM, or -E2BIG when the tree is full
 * (FLAME_NODES_MAX; the samples are counted in flame_dropped()). */
int flame_add(struct flame *f, const char *const *frames, size_t n, uint64_t count);
/* Adds one folded line ("a;b;c 12", the count after the last space);
 * -EINVAL when it has no count. */
int flame_add_folded(struct flame *f, const char *line, size_t len);

uint64_t flame_total(const struct flame *f);
uint64_t flame_dropped(const struct flame *f);

/* Calls FN for each stack with samples of its own, in alphabetical order
 * (frame by frame, bytewise): its frames root first (valid until FN
 * returns) and its samples. Stops at FN's first non-zero return, which
 * it returns; else 0. */
typedef int (*flame_stack_fn)(const char *const *frames, size_t n, uint64_t count, void *userdata);
int flame_foreach(const struct flame *f, flame_stack_fn fn, void *userdata);

/* Writes each stack with samples of its own as a folded line, in
 * flame_foreach()'s order; 0 or -errno. */
int flame_write_folded(const struct flame *f, FILE *out);

/* One box of the flame graph: the frame NAME at DEPTH (0 is the root,
 * "all"), from sample START (of the total, left to right) for COUNT
 * samples. */
struct flame_box {
        const char *name;       /* owned by the flame */
        unsigned depth;
        uint64_t start, count;
};

/* The boxes in flamegraph.pl's layout: siblings side by side in
 * alphabetical order, each as wide as its samples (its own and its
 * callees'), children above their parent. Parents before children
 * (depth first). *RET is the caller's to free(); 0 or -ENOMEM. */
int flame_layout(const struct flame *f, struct flame_box **ret, size_t *ret_n, unsigned *ret_max_depth);

struct flame_svg_opts {
        const char *title;      /* NULL: "Flame Graph" */
        const char *subtitle;   /* NULL: none */
        unsigned width;         /* pixels; 0: 1200 */
};

/* Writes the flame graph as a self-contained SVG document (no external
 * reference), as flamegraph.pl draws it: 16-pixel frames, warm colours
 * from each name's hash, a <title> per frame with its samples and share,
 * its name clipped to its box; an inline script zooms to a frame clicked
 * ("Reset Zoom" goes back). 0 or -errno. */
int flame_write_svg(const struct flame *f, const struct flame_svg_opts *o, FILE *out);
