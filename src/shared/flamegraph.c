/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Folded stacks and flame graphs (include/evmon/flamegraph.h).
 *
 * The stacks are kept as a tree (a trie of frame names, root first), each
 * node with its samples and its children sorted by name: folding a sample
 * is one walk down, the folded lines come out of a depth-first walk in
 * the order stackcollapse sorts them, and the flame graph's layout is the
 * same walk. The layout and the drawing are flamegraph.pl's
 * (https://github.com/brendangregg/FlameGraph, flamegraph.pl): a frame's
 * width is its share of the samples, siblings alphabetical, a parent's own
 * samples left of its children (its folded line sorts before theirs). */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "evmon/flamegraph.h"

struct flame_node {
        char *name;
        uint64_t total;         /* its samples and its callees' */
        uint64_t self;          /* samples that ended here */
        uint32_t *kids;         /* indexes, sorted by name */
        uint32_t n_kids, cap_kids;
};

struct flame {
        struct flame_node *nodes;       /* [0] is the root, "all" */
        uint32_t n_nodes, cap_nodes;
        uint64_t dropped;
};

int flame_new(struct flame **ret) {
        struct flame *f = calloc(1, sizeof(*f));

        if (!f)
                return -ENOMEM;
        f->cap_nodes = 64;
        f->nodes = calloc(f->cap_nodes, sizeof(*f->nodes));
        if (!f->nodes) {
                free(f);
                return -ENOMEM;
        }
        f->nodes[0].name = strdup("all");
        if (!f->nodes[0].name) {
                free(f->nodes);
                free(f);
                return -ENOMEM;
        }
        f->n_nodes = 1;
        *ret = f;
        return 0;
}

struct flame *flame_free(struct flame *f) {
        if (!f)
                return NULL;
        for (uint32_t i = 0; i < f->n_nodes; i++) {
                free(f->nodes[i].name);
                free(f->nodes[i].kids);
        }
        free(f->nodes);
        free(f);
        return NULL;
}

uint64_t flame_total(const struct flame *f) {
        return f->nodes[0].total;
}

uint64_t flame_dropped(const struct flame *f) {
        return f->dropped;
}

/* The length of the UTF-8 sequence at S (N bytes left), 0 when it is not
 * one (overlong, a surrogate, above U+10FFFF, cut short). */
static size_t utf8_len(const unsigned char *s, size_t n) {
        unsigned char c = s[0];
        size_t len;
        unsigned char lo = 0x80, hi = 0xbf;

        if (c < 0x80)
                return 1;
        if (c >= 0xc2 && c <= 0xdf)
                len = 2;
        else if (c >= 0xe0 && c <= 0xef) {
                len = 3;
                if (c == 0xe0)
                        lo = 0xa0;
                else if (c == 0xed)
                        hi = 0x9f;
        } else if (c >= 0xf0 && c <= 0xf4) {
                len = 4;
                if (c == 0xf0)
                        lo = 0x90;
                else if (c == 0xf4)
                        hi = 0x8f;
        } else
                return 0;
        if (n < len || s[1] < lo || s[1] > hi)
                return 0;
        for (size_t i = 2; i < len; i++)
                if (s[i] < 0x80 || s[i] > 0xbf)
                        return 0;
        return len;
}

/* NAME (its first N bytes) cleaned into OUT (FLAME_NAME_MAX + 1 bytes):
 * one frame of one folded line, valid UTF-8, nothing a terminal obeys. */
static void clean_name(const char *name, size_t n, char *out) {
        const unsigned char *s = (const unsigned char *) name;
        size_t o = 0;

        if (n > FLAME_NAME_MAX)
                n = FLAME_NAME_MAX;
        for (size_t i = 0; i < n;) {
                size_t len = utf8_len(s + i, n - i);

                if (len == 0) {
                        out[o++] = '?';
                        i++;
                } else if (len == 1) {
                        out[o++] = s[i] < 0x20 || s[i] == 0x7f || s[i] == ';' ? '_' : (char) s[i];
                        i++;
                } else if (len == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0) {
                        /* C1 controls, U+0080..U+009F: U+009B is CSI. */
                        out[o++] = '_';
                        i += 2;
                } else {
                        memcpy(out + o, s + i, len);
                        o += len;
                        i += len;
                }
        }
        if (o == 0) {
                strcpy(out, "[unknown]");
                return;
        }
        out[o] = 0;
}

/* The index of PARENT's child NAME, or where it would go as -1 - index. */
static int64_t kid_find(const struct flame *f, const struct flame_node *parent, const char *name) {
        uint32_t lo = 0, hi = parent->n_kids;

        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                int c = strcmp(f->nodes[parent->kids[mid]].name, name);

                if (c == 0)
                        return mid;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1 - (int64_t) lo;
}

/* The child NAME of node P, made when missing: its index, or -ENOMEM,
 * -E2BIG. */
static int64_t kid_get(struct flame *f, uint32_t p, const char *name) {
        int64_t k = kid_find(f, &f->nodes[p], name);
        struct flame_node *parent;
        uint32_t at, id;

        if (k >= 0)
                return f->nodes[p].kids[k];
        if (f->n_nodes >= FLAME_NODES_MAX)
                return -E2BIG;
        if (f->n_nodes == f->cap_nodes) {
                struct flame_node *grown = reallocarray(f->nodes, f->cap_nodes * 2, sizeof(*grown));

                if (!grown)
                        return -ENOMEM;
                f->nodes = grown;
                f->cap_nodes *= 2;
        }
        parent = &f->nodes[p];
        if (parent->n_kids == parent->cap_kids) {
                uint32_t cap = parent->cap_kids ? parent->cap_kids * 2 : 4;
                uint32_t *grown = reallocarray(parent->kids, cap, sizeof(*grown));

                if (!grown)
                        return -ENOMEM;
                parent->kids = grown;
                parent->cap_kids = cap;
        }
        id = f->n_nodes;
        f->nodes[id] = (struct flame_node) { .name = strdup(name) };
        if (!f->nodes[id].name)
                return -ENOMEM;
        f->n_nodes++;
        at = (uint32_t) (-1 - k);
        memmove(parent->kids + at + 1, parent->kids + at, (parent->n_kids - at) * sizeof(*parent->kids));
        parent->kids[at] = id;
        parent->n_kids++;
        return id;
}

int flame_add(struct flame *f, const char *const *frames, size_t n, uint64_t count) {
        static const char *const unknown[] = { "[unknown]" };
        uint32_t path[FLAME_DEPTH_MAX];
        char name[FLAME_NAME_MAX + 1];
        uint32_t at = 0;

        if (n == 0) {
                frames = unknown;
                n = 1;
        }
        if (n > FLAME_DEPTH_MAX)
                n = FLAME_DEPTH_MAX;
        /* Made first, counted after: a stack that does not fit leaves no
         * count behind (its new nodes stay, with none). */
        for (size_t i = 0; i < n; i++) {
                int64_t k;

                clean_name(frames[i], frames[i] ? strlen(frames[i]) : 0, name);
                k = kid_get(f, at, name);
                if (k < 0) {
                        if (k == -E2BIG)
                                f->dropped += count;
                        return (int) k;
                }
                at = (uint32_t) k;
                path[i] = at;
        }
        f->nodes[0].total += count;
        for (size_t i = 0; i < n; i++)
                f->nodes[path[i]].total += count;
        f->nodes[at].self += count;
        return 0;
}

int flame_add_folded(struct flame *f, const char *line, size_t len) {
        const char *frames[FLAME_DEPTH_MAX];
        char *copy, *p, *end, *save = NULL;
        uint64_t count;
        size_t n = 0;
        int r;

        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
                len--;
        copy = strndup(line, len);
        if (!copy)
                return -ENOMEM;
        p = strrchr(copy, ' ');
        if (!p || p == copy || p[1] < '0' || p[1] > '9') {
                free(copy);
                return -EINVAL;
        }
        *p++ = 0;
        errno = 0;
        count = strtoull(p, &end, 10);
        if (errno != 0 || *end != 0) {
                free(copy);
                return -EINVAL;
        }
        for (char *t = strtok_r(copy, ";", &save); t && n < FLAME_DEPTH_MAX; t = strtok_r(NULL, ";", &save))
                frames[n++] = t;
        r = flame_add(f, frames, n, count);
        free(copy);
        return r;
}

/* Calls FN for node I's stack (PATH holds the names above it) and its
 * children's. */
static int foreach_node(const struct flame *f, uint32_t i, const char **path, size_t depth, flame_stack_fn fn,
                        void *userdata) {
        const struct flame_node *node = &f->nodes[i];

        if (i != 0)
                path[depth++] = node->name;
        if (node->self > 0 && depth > 0) {
                int r = fn(path, depth, node->self, userdata);

                if (r != 0)
                        return r;
        }
        for (uint32_t k = 0; k < node->n_kids; k++) {
                int r = foreach_node(f, node->kids[k], path, depth, fn, userdata);

                if (r != 0)
                        return r;
        }
        return 0;
}

int flame_foreach(const struct flame *f, flame_stack_fn fn, void *userdata) {
        const char *path[FLAME_DEPTH_MAX + 1];

        return foreach_node(f, 0, path, 0, fn, userdata);
}

static int put_folded(const char *const *frames, size_t n, uint64_t count, void *userdata) {
        FILE *out = userdata;

        for (size_t k = 0; k < n; k++) {
                if (k > 0)
                        fputc(';', out);
                fputs(frames[k], out);
        }
        fprintf(out, " %" PRIu64 "\n", count);
        return ferror(out) ? -EIO : 0;
}

int flame_write_folded(const struct flame *f, FILE *out) {
        return flame_foreach(f, put_folded, out);
}

struct layout {
        struct flame_box *boxes;
        size_t n, cap;
        unsigned max_depth;
};

static int layout_node(const struct flame *f, uint32_t i, unsigned depth, uint64_t start, struct layout *l) {
        const struct flame_node *node = &f->nodes[i];
        uint64_t x;

        if (l->n == l->cap) {
                size_t cap = l->cap ? l->cap * 2 : 64;
                struct flame_box *grown = reallocarray(l->boxes, cap, sizeof(*grown));

                if (!grown)
                        return -ENOMEM;
                l->boxes = grown;
                l->cap = cap;
        }
        l->boxes[l->n++] = (struct flame_box) {
                .name = node->name, .depth = depth, .start = start, .count = node->total,
        };
        if (depth > l->max_depth)
                l->max_depth = depth;
        /* The parent's own samples first, as flamegraph.pl lays out the
         * sorted folded lines ("a 5" before "a;b 3"). */
        x = start + node->self;
        for (uint32_t k = 0; k < node->n_kids; k++) {
                int r;

                if (f->nodes[node->kids[k]].total == 0)
                        continue;       /* made for a stack that did not fit */
                r = layout_node(f, node->kids[k], depth + 1, x, l);
                if (r < 0)
                        return r;
                x += f->nodes[node->kids[k]].total;
        }
        return 0;
}

int flame_layout(const struct flame *f, struct flame_box **ret, size_t *ret_n, unsigned *ret_max_depth) {
        struct layout l = {};
        int r = layout_node(f, 0, 0, 0, &l);

        if (r < 0) {
                free(l.boxes);
                return r;
        }
        *ret = l.boxes;
        *ret_n = l.n;
        if (ret_max_depth)
                *ret_max_depth = l.max_depth;
        return 0;
}

/* Writes S (clean UTF-8) for XML text or an attribute; at most MAX_CHARS
 * characters (SIZE_MAX: all). */
static void put_xml(FILE *out, const char *s, size_t max_chars) {
        size_t chars = 0;

        for (const unsigned char *p = (const unsigned char *) s; *p && chars < max_chars; p++) {
                if ((*p & 0xc0) != 0x80)
                        chars++;
                switch (*p) {
                case '&':
                        fputs("&amp;", out);
                        break;
                case '<':
                        fputs("&lt;", out);
                        break;
                case '>':
                        fputs("&gt;", out);
                        break;
                case '"':
                        fputs("&quot;", out);
                        break;
                case '\'':
                        fputs("&apos;", out);
                        break;
                default:
                        fputc(*p, out);
                }
                /* The rest of a multi-byte character. */
                while ((p[1] & 0xc0) == 0x80) {
                        fputc(*++p, out);
                }
        }
}

static size_t utf8_chars(const char *s) {
        size_t n = 0;

        for (; *s; s++)
                n += (*s & 0xc0) != 0x80;
        return n;
}

/* flamegraph.pl's "hot" palette: red 205..254, green 0..229, blue 0..54,
 * here from a hash of the name (its --hash), so a function keeps its
 * colour from one graph to the next. */
static void hot_colour(const char *name, unsigned *r, unsigned *g, unsigned *b) {
        uint64_t h = 1469598103934665603ULL;

        for (const unsigned char *p = (const unsigned char *) name; *p; p++) {
                h ^= *p;
                h *= 1099511628211ULL;
        }
        *r = 205 + (unsigned) (h % 50);
        *g = (unsigned) ((h >> 16) % 230);
        *b = (unsigned) ((h >> 32) % 55);
}

/* A count with thousands separators, as flamegraph.pl writes it. */
static void put_count(FILE *out, uint64_t v) {
        char d[32];
        int n = snprintf(d, sizeof(d), "%" PRIu64, v);

        for (int i = 0; i < n; i++) {
                if (i > 0 && (n - i) % 3 == 0)
                        fputc(',', out);
                fputc(d[i], out);
        }
}

/* Click a frame to zoom to it (its callees widened to the whole width, its
 * callers kept below it, dimmed, the rest hidden), "Reset Zoom" to go
 * back: flamegraph.pl's zoom, shorter. It reads names from the titles'
 * text, never as markup. Viewers that run no script (an <img>) show the
 * graph as drawn. */
static const char zoom_script[] =
        "<script type=\"text/ecmascript\"><![CDATA[\n"
        "(function () {\n"
        "  var svg = document.documentElement, unzoom = document.getElementById('unzoom');\n"
        "  var W = +svg.getAttribute('width'), XPAD = 10, CHAR = 12 * 0.59, E = 1e-6;\n"
        "  var gs = Array.prototype.slice.call(document.querySelectorAll('#frames > g'));\n"
        "  function name(g) { var t = g.querySelector('title').textContent; return t.substring(0, t.lastIndexOf(' (')); }\n"
        "  function place(g, x, w) {\n"
        "    var r = g.querySelector('rect'), t = g.querySelector('text'), n = Array.from(name(g));\n"
        "    var fit = Math.floor(w / CHAR);\n"
        "    r.setAttribute('x', x.toFixed(2)); r.setAttribute('width', w.toFixed(2));\n"
        "    t.setAttribute('x', (x + 3).toFixed(2));\n"
        "    t.textContent = fit < 3 ? '' : n.length <= fit ? n.join('') : n.slice(0, fit - 2).join('') + '..';\n"
        "  }\n"
        "  function at(g, k) { return +g.getAttribute(k); }\n"
        "  function zoom(z) {\n"
        "    var zx = at(z, 'data-x'), zw = at(z, 'data-w'), zy = at(z, 'data-y'), k = (W - 2 * XPAD) / zw;\n"
        "    gs.forEach(function (g) {\n"
        "      var x = at(g, 'data-x'), w = at(g, 'data-w'), y = at(g, 'data-y');\n"
        "      if (y > zy && x <= zx + E && x + w >= zx + zw - E) {\n"
        "        g.style.display = ''; g.style.opacity = '0.5'; place(g, XPAD, W - 2 * XPAD);\n"
        "      } else if (y <= zy && x >= zx - E && x + w <= zx + zw + E) {\n"
        "        g.style.display = ''; g.style.opacity = ''; place(g, XPAD + (x - zx) * k, w * k);\n"
        "      } else\n"
        "        g.style.display = 'none';\n"
        "    });\n"
        "    unzoom.style.opacity = '1';\n"
        "  }\n"
        "  gs.forEach(function (g) {\n"
        "    var r = g.querySelector('rect');\n"
        "    g.setAttribute('data-x', r.getAttribute('x')); g.setAttribute('data-w', r.getAttribute('width'));\n"
        "    g.setAttribute('data-y', r.getAttribute('y')); g.style.cursor = 'pointer';\n"
        "    g.addEventListener('click', function () { zoom(g); });\n"
        "  });\n"
        "  unzoom.addEventListener('click', function () {\n"
        "    gs.forEach(function (g) { g.style.display = ''; g.style.opacity = ''; place(g, at(g, 'data-x'), at(g, 'data-w')); });\n"
        "    unzoom.style.opacity = '0';\n"
        "  });\n"
        "})();\n"
        "]]></script>\n";

int flame_write_svg(const struct flame *f, const struct flame_svg_opts *o, FILE *out) {
        /* flamegraph.pl's defaults. */
        const double frame_height = 16, font_size = 12, font_width = 0.59, min_width = 0.1, xpad = 10;
        const double ypad1 = font_size * 3, ypad2 = font_size * 2 + 10;
        const unsigned width = o && o->width ? o->width : 1200;
        const char *title = o && o->title ? o->title : "Flame Graph";
        const char *subtitle = o ? o->subtitle : NULL;
        char clean[FLAME_NAME_MAX + 1];
        struct flame_box *boxes = NULL;
        size_t n = 0;
        unsigned max_depth = 0;
        double height, per_sample, top;
        uint64_t total = flame_total(f);
        int r;

        r = flame_layout(f, &boxes, &n, &max_depth);
        if (r < 0)
                return r;
        top = ypad1 + (subtitle ? font_size * 2 : 0);
        height = (max_depth + 1) * frame_height + top + ypad2;
        per_sample = total > 0 ? (width - 2 * xpad) / (double) total : 0;

        fprintf(out,
                "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
                "<svg version=\"1.1\" width=\"%u\" height=\"%.0f\" viewBox=\"0 0 %u %.0f\" "
                "xmlns=\"http://www.w3.org/2000/svg\">\n"
                "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
                "<stop stop-color=\"#eeeeee\" offset=\"5%%\"/><stop stop-color=\"#eeeeb0\" offset=\"95%%\"/>"
                "</linearGradient></defs>\n"
                "<style type=\"text/css\">text { font-family: Verdana, sans-serif; font-size: %.0fpx; fill: #000; }"
                " .title { font-size: %.0fpx; text-anchor: middle; } rect { rx: 2px; ry: 2px; }</style>\n"
                "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%.0f\" fill=\"url(#background)\"/>\n",
                width, height, width, height, font_size, font_size + 5, width, height);
        clean_name(title, strlen(title), clean);
        fprintf(out, "<text class=\"title\" x=\"%.1f\" y=\"%.0f\">", width / 2.0, font_size * 2);
        put_xml(out, clean, SIZE_MAX);
        fputs("</text>\n", out);
        if (subtitle) {
                clean_name(subtitle, strlen(subtitle), clean);
                fprintf(out, "<text class=\"subtitle\" x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" "
                        "fill=\"#a0a0a0\">", width / 2.0, font_size * 4);
                put_xml(out, clean, SIZE_MAX);
                fputs("</text>\n", out);
        }
        fprintf(out, "<text id=\"unzoom\" x=\"%.1f\" y=\"%.0f\" style=\"cursor: pointer\" opacity=\"0\">"
                "Reset Zoom</text>\n", xpad, font_size * 2);
        fputs("<g id=\"frames\">\n", out);
        for (size_t i = 0; i < n; i++) {
                const struct flame_box *b = &boxes[i];
                double x1 = xpad + (double) b->start * per_sample;
                double w = (double) b->count * per_sample;
                double y1 = height - ypad2 - (b->depth + 1) * frame_height + 1;
                double y2 = height - ypad2 - b->depth * frame_height;
                size_t fits = (size_t) (w / (font_size * font_width)), chars;
                unsigned cr, cg, cb;

                if (w < min_width)
                        continue;
                hot_colour(b->name, &cr, &cg, &cb);
                fputs("<g><title>", out);
                put_xml(out, b->name, SIZE_MAX);
                fputs(" (", out);
                put_count(out, b->count);
                fprintf(out, " sample%s, %.2f%%)</title>", b->count == 1 ? "" : "s",
                        total > 0 ? 100.0 * (double) b->count / (double) total : 0.0);
                fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"rgb(%u,%u,%u)\"/>",
                        x1, y1, w, y2 - y1, cr, cg, cb);
                /* flamegraph.pl: no text under 3 characters; a name that
                 * does not fit is cut, with "..", to the box. */
                fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", x1 + 3, 3 + (y1 + y2) / 2);
                chars = utf8_chars(b->name);
                if (fits >= 3 && chars <= fits)
                        put_xml(out, b->name, SIZE_MAX);
                else if (fits >= 3) {
                        put_xml(out, b->name, fits - 2);
                        fputs("..", out);
                }
                fputs("</text></g>\n", out);
        }
        fputs("</g>\n", out);
        fputs(zoom_script, out);
        fputs("</svg>\n", out);
        free(boxes);
        if (fflush(out) == EOF || ferror(out))
                return errno > 0 ? -errno : -EIO;
        return 0;
}
