/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The schema line: what an event's lines carry, sent to a subscriber
 * before its first line of the event (doc/protocol.md "schema"). One per
 * event and definition, built once with json-c. */

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include "evmon/encode-perf.h"
#include "evmon/encode.h"
#include "evmon/jsonc.h"
#include "evmon/protocol.h"

static bool add(json_object *o, const char *key, json_object *v) {
        return v && json_object_object_add(o, key, v) == 0;
}

static bool array_add(json_object *a, json_object *v) {
        return v && json_object_array_add(a, v) == 0;
}

static json_object *hex_new(uint64_t v) {
        char s[2 + 16 + 1];

        snprintf(s, sizeof(s), "0x%llx", (unsigned long long) v);
        return json_object_new_string(s);
}

/* The fields of "sample", in the order the kernel writes them (and the
 * sample object shows them), with the kind of their value. */
static const struct {
        uint64_t bit;
        const char *name, *type, *kind;
} sample_fields[] = {
        { PERF_SAMPLE_IP, "ip", "PERF_SAMPLE_IP", "hex" },
        { PERF_SAMPLE_ID, "id", "PERF_SAMPLE_ID", "int" },
        { PERF_SAMPLE_STREAM_ID, "stream_id", "PERF_SAMPLE_STREAM_ID", "int" },
        { PERF_SAMPLE_ADDR, "addr", "PERF_SAMPLE_ADDR", "hex" },
        { PERF_SAMPLE_PERIOD, "period", "PERF_SAMPLE_PERIOD", "int" },
        { PERF_SAMPLE_READ, "read", "PERF_SAMPLE_READ", "object" },
        { PERF_SAMPLE_CALLCHAIN, "callchain", "PERF_SAMPLE_CALLCHAIN", "array" },
        { PERF_SAMPLE_RAW, "raw", "PERF_SAMPLE_RAW", "hexbytes" },
        { PERF_SAMPLE_BRANCH_STACK, "branch_stack", "PERF_SAMPLE_BRANCH_STACK", "object" },
        { PERF_SAMPLE_REGS_USER, "regs_user", "PERF_SAMPLE_REGS_USER", "object" },
        { PERF_SAMPLE_STACK_USER, "stack_user", "PERF_SAMPLE_STACK_USER", "object" },
        { PERF_SAMPLE_WEIGHT, "weight", "PERF_SAMPLE_WEIGHT", "int" },
        { PERF_SAMPLE_WEIGHT_STRUCT, "weight", "PERF_SAMPLE_WEIGHT_STRUCT", "object" },
        { PERF_SAMPLE_DATA_SRC, "data_src", "PERF_SAMPLE_DATA_SRC", "object" },
        { PERF_SAMPLE_TRANSACTION, "transaction", "PERF_SAMPLE_TRANSACTION", "object" },
        { PERF_SAMPLE_REGS_INTR, "regs_intr", "PERF_SAMPLE_REGS_INTR", "object" },
        { PERF_SAMPLE_PHYS_ADDR, "phys_addr", "PERF_SAMPLE_PHYS_ADDR", "hex" },
        { PERF_SAMPLE_CGROUP, "cgroup", "PERF_SAMPLE_CGROUP", "int" },
        { PERF_SAMPLE_DATA_PAGE_SIZE, "data_page_size", "PERF_SAMPLE_DATA_PAGE_SIZE", "int" },
        { PERF_SAMPLE_CODE_PAGE_SIZE, "code_page_size", "PERF_SAMPLE_CODE_PAGE_SIZE", "int" },
        { PERF_SAMPLE_AUX, "aux", "PERF_SAMPLE_AUX", "object" },
};

static json_object *expr_new(const struct symbol_expr *e) {
        static const char *const kinds[] = {
                [SYMBOL_EMPTY] = "string", [SYMBOL_STRING] = "string",
                [SYMBOL_VALUES] = "values", [SYMBOL_FLAGS] = "flags",
        };
        json_object *o = json_object_new_object(), *values;

        if (!o || (unsigned) e->kind >= ELEMENTSOF(kinds) || !add(o, "kind", json_object_new_string(kinds[e->kind])))
                goto fail;
        if (e->kind == SYMBOL_EMPTY || e->kind == SYMBOL_STRING) {
                if (!add(o, "string", json_object_new_string(e->kind == SYMBOL_STRING ? e->string : "")))
                        goto fail;
                return o;
        }
        if (!add(o, "shift", json_object_new_int(e->shift)) || !add(o, "mask", hex_new(e->mask)))
                goto fail;
        if (e->kind == SYMBOL_FLAGS && !add(o, "delimiter", json_object_new_string(e->string)))
                goto fail;
        values = json_object_new_array();
        if (!add(o, "values", values))
                goto fail;
        for (size_t i = 0; i < e->n_entries; i++) {
                json_object *v = json_object_new_object();

                if (!array_add(values, v) || !add(v, "value", json_object_new_uint64(e->entries[i].value)) ||
                    !add(v, "name", json_object_new_string(e->entries[i].name)))
                        goto fail;
        }
        return o;
fail:
        json_object_put(o);
        return NULL;
}

json_object *encode_symbols_new(const struct field_symbols *s) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < s->n_parts; i++) {
                const struct symbol_part *part = &s->parts[i];
                json_object *p = json_object_new_object(), *t;

                if (!array_add(a, p))
                        goto fail;
                if (part->has_test && part->test_ops) {
                        json_object *rpn = json_object_new_array();

                        t = json_object_new_object();
                        if (!add(p, "test", t) || !add(t, "rpn", rpn) ||
                            !add(t, "signed", json_object_new_boolean(part->test_signed)))
                                goto fail;
                        for (size_t k = 0; k < part->n_test_ops; k++) {
                                const struct symbol_op *op = &part->test_ops[k];
                                json_object *v;

                                if (op->code == SYMBOL_OP_CONST)
                                        v = hex_new(op->arg);
                                else if (op->code == SYMBOL_OP_VALUE)
                                        v = json_object_new_string("value");
                                else if (op->code == SYMBOL_OP_UNARY && op->arg == '-')
                                        v = json_object_new_string("neg");
                                else
                                        v = json_object_new_string(symbol_op_name(op->arg) ?: "?");
                                if (!array_add(rpn, v))
                                        goto fail;
                        }
                        if (!add(p, "then", expr_new(&part->then)) || !add(p, "else", expr_new(&part->otherwise)))
                                goto fail;
                } else if (part->has_test) {
                        t = json_object_new_object();
                        if (!add(p, "test", t) || !add(t, "shift", json_object_new_int(part->test_shift)) ||
                            !add(t, "mask", hex_new(part->test_mask)) || !add(p, "then", expr_new(&part->then)) ||
                            !add(p, "else", expr_new(&part->otherwise)))
                                goto fail;
                } else if (!add(p, "then", expr_new(&part->then)))
                        goto fail;
        }
        return a;
fail:
        json_object_put(a);
        return NULL;
}

int encode_schema(struct jbuf *b, const char *event, const struct format *fmt, uint64_t sample_fields_shown) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        json_object *fields = json_object_new_array();

        if (!o || !add(o, "type", json_object_new_string(EVMON_LINE_SCHEMA)) ||
            !add(o, "event", json_object_new_string(event)) || !add(o, "fields", fields))
                return -ENOMEM;

        for (size_t i = fmt ? fmt->n_common : 0; fmt && i < fmt->n_fields; i++) {
                const struct format_field *ff = &fmt->fields[i];
                const struct field_symbols *sym = format_symbols_find(fmt, i);
                json_object *f = json_object_new_object();

                if (!array_add(fields, f) || !add(f, "name", json_object_new_string(ff->name)) ||
                    !add(f, "in", json_object_new_string("fields")) ||
                    !add(f, "type", json_object_new_string(ff->type)) ||
                    !add(f, "kind", json_object_new_string(field_kind_to_string(ff->kind))) ||
                    !add(f, "offset", json_object_new_int64(ff->offset)) ||
                    !add(f, "size", json_object_new_int64(ff->size)) ||
                    /* As describe says it: the sign of the value the line
                     * carries, for numbers only. */
                    !add(f, "signed", json_object_new_boolean((ff->kind == FIELD_INT || ff->kind == FIELD_ARRAY ||
                                                                ff->kind == FIELD_DYN_ARRAY) && ff->elem_signed)))
                        return -ENOMEM;
                if (ff->kind == FIELD_ARRAY || ff->kind == FIELD_DYN_ARRAY)
                        if (!add(f, "elem_size", json_object_new_int(ff->elem_size)))
                                return -ENOMEM;
                if (sym && !add(f, "symbols", encode_symbols_new(sym)))
                        return -ENOMEM;
        }
        sample_fields_shown &= ~(uint64_t) ENCODE_SAMPLE_TOP;
        for (size_t i = 0; i < ELEMENTSOF(sample_fields); i++) {
                json_object *f;

                if (!(sample_fields_shown & sample_fields[i].bit))
                        continue;
                f = json_object_new_object();
                if (!array_add(fields, f) || !add(f, "name", json_object_new_string(sample_fields[i].name)) ||
                    !add(f, "in", json_object_new_string("sample")) ||
                    !add(f, "type", json_object_new_string(sample_fields[i].type)) ||
                    !add(f, "kind", json_object_new_string(sample_fields[i].kind)))
                        return -ENOMEM;
        }
        if (fmt && !add(o, "print_unknown", json_object_new_int64(fmt->print_unknown)))
                return -ENOMEM;
        return jsonc_append_line(b, o);
}
