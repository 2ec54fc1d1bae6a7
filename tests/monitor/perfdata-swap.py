#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""perfdata-swap.py IN OUT: a little-endian perf.data file (file mode, not
compressed) as a big-endian machine would have written it, for the test
that the reader gives the same lines for both. Written from the formats
(perf.data-file-format.txt, uapi perf_event.h, util/header.c), apart from
the reader's own swapping code, so that one cannot hide the other's
mistakes; perf script reading the copy checks this tool in turn.
"""

import re
import struct
import sys

data = bytearray(open(sys.argv[1], "rb").read())


def sw(off, fmt):
    """Reads FMT little-endian at OFF, writes it back big-endian."""
    v = struct.unpack_from("<" + fmt, data, off)
    struct.pack_into(">" + fmt, data, off, *v)
    return v if len(v) > 1 else v[0]


def u(off, fmt):
    return struct.unpack_from("<" + fmt, data, off)[0]


def revbits(b):
    return int("{:08b}".format(b)[::-1], 2)


# perf_event_attr: (offset, format) of each field; the flags at 40 are
# bitfields, which a big-endian compiler allocates from the top bit: each
# byte's bits reversed, bytes in place.
ATTR = [(0, "I"), (4, "I"), (8, "Q"), (16, "Q"), (24, "Q"), (32, "Q"), (48, "I"), (52, "I"),
        (56, "Q"), (64, "Q"), (72, "Q"), (80, "Q"), (88, "I"), (92, "i"), (96, "Q"), (104, "I"),
        (108, "H"), (110, "H"), (112, "I"), (116, "I"), (120, "Q"), (128, "Q")]


def read_attr(off):
    size = u(off + 4, "I") or 64
    return {"size": size, "type": u(off, "I"), "sample_type": u(off + 24, "Q"),
            "read_format": u(off + 32, "Q"), "flags": u(off + 40, "Q"), "config": u(off + 8, "Q"),
            "branch_sample_type": u(off + 72, "Q") if size >= 80 else 0,
            "regs_user": u(off + 80, "Q") if size >= 88 else 0,
            "regs_intr": u(off + 96, "Q") if size >= 104 else 0}


def swap_attr(off, room):
    size = u(off + 4, "I") or 64
    for o, f in ATTR:
        if o + struct.calcsize(f) <= min(size, room):
            sw(off + o, f)
    for i in range(40, 48):
        data[off + i] = revbits(data[off + i])


# ---- header, attrs -----------------------------------------------------------
hdr = struct.unpack_from("<9Q", data, 0)
attr_size, attrs_off, attrs_size, data_off, data_size = hdr[2], hdr[3], hdr[4], hdr[5], hdr[6]
features = struct.unpack_from("<4Q", data, 72)
events = []
ids = {}
for k in range(attrs_size // attr_size):
    e = attrs_off + k * attr_size
    a = read_attr(e)
    ioff, isize = u(e + attr_size - 16, "Q"), u(e + attr_size - 8, "Q")
    for i in range(isize // 8):
        ids[u(ioff + 8 * i, "Q")] = len(events)
        sw(ioff + 8 * i, "Q")
    events.append(a)
    swap_attr(e, attr_size - 16)
    sw(e + attr_size - 16, "2Q")
for i in range(13):                     # the header and the feature bitmap
    sw(8 * i, "Q")

# ---- tracing data: formats for the raw data --------------------------------
formats = {}


def parse_format(text):
    fid, fields = None, []
    for line in text.splitlines():
        m = re.match(r"ID: (\d+)", line)
        if m:
            fid = int(m.group(1))
        m = re.match(r"\s*field:(.*);\s*offset:(\d+);\s*size:(\d+);", line)
        if m:
            fields.append((m.group(1).strip(), int(m.group(2)), int(m.group(3))))
    if fid is not None:
        formats[fid] = fields


def swap_raw(fields, off, size):
    for decl, fo, fs in fields:
        if fo + fs > size:
            continue
        p = off + fo
        if "__data_loc" in decl or "__rel_loc" in decl:
            sw(p, "I")
            continue
        m = re.search(r"\[(\d+)\]", decl)
        if m:
            n = int(m.group(1))
            if "char" in decl.split("[")[0] or n == 0:
                continue
            w = fs // n
            for k in range(n):
                if w in (2, 4, 8):
                    sw(p + k * w, {2: "H", 4: "I", 8: "Q"}[w])
            continue
        if fs in (2, 4, 8):
            sw(p, {2: "H", 4: "I", 8: "Q"}[fs])


def swap_tracing(off, size):
    p = off + 10
    p = data.index(0, p) + 1            # version
    data[p] = 1                         # big_endian
    p += 2                              # + long_size
    sw(p, "I")
    p += 4
    for name in (b"header_page", b"header_event"):
        p += len(name) + 1
        n = sw(p, "Q")
        p += 8 + n
    n = sw(p, "I")
    p += 4
    for _ in range(n):
        s = sw(p, "Q")
        p += 8 + s
    nsys = sw(p, "I")
    p += 4
    for _ in range(nsys):
        p = data.index(0, p) + 1
        n = sw(p, "I")
        p += 4
        for _ in range(n):
            s = sw(p, "Q")
            parse_format(data[p + 8:p + 8 + s].decode(errors="replace"))
            p += 8 + s
    s = sw(p, "I")                      # kallsyms
    p += 4 + s
    s = sw(p, "I")                      # printk formats
    p += 4 + s
    if p + 8 <= off + size:
        sw(p, "Q")                      # saved cmdlines


# ---- feature sections -------------------------------------------------------
def pstr(p):
    n = sw(p, "I")
    return p + 4 + n


def slist(p):
    n = sw(p, "I")
    p += 4
    for _ in range(n):
        p = pstr(p)
    return p


def swap_feature(f, p, size):
    end = p + size
    if f == 1:
        swap_tracing(p, size)
    elif f == 2:
        while p < end:
            rsize = u(p + 6, "H")
            sw(p, "I"), sw(p + 4, "H"), sw(p + 6, "H"), sw(p + 8, "i")
            p += rsize
    elif f in (3, 4, 5, 6, 8, 9):
        pstr(p)
    elif f == 7:
        sw(p, "2I")
    elif f in (10, 23, 24):
        sw(p, "Q")
    elif f == 11:
        slist(p)
    elif f == 12:
        nr, asz = sw(p, "2I")
        p += 8
        for _ in range(nr):
            swap_attr(p, asz)
            p += asz
            nids = sw(p, "I")
            p = pstr(p + 4)
            for _ in range(nids):
                sw(p, "Q")
                p += 8
    elif f == 13:
        p = slist(slist(p))
        ncpu = nr_cpus
        if p < end:
            for _ in range(ncpu):
                sw(p, "2I")
                p += 8
        if p < end:
            p = slist(p)
            for _ in range(ncpu):
                sw(p, "I")
                p += 4
    elif f == 14:
        n = sw(p, "I")
        p += 4
        for _ in range(n):
            sw(p, "I"), sw(p + 4, "2Q")
            p = pstr(p + 20)
    elif f in (16, 30):
        n = sw(p, "I")
        p += 4
        for _ in range(n):
            if f == 16:
                sw(p, "I")
                p = pstr(p + 4)
            else:
                p = pstr(pstr(p))
    elif f == 17:
        n = sw(p, "I")
        p += 4
        for _ in range(n):
            p = pstr(p)
            sw(p, "2I")
            p += 8
    elif f == 18:
        while p < end:
            n = sw(p, "Q")
            p += 8
            for _ in range(n):
                sw(p, "2Q")
                p += 16
    elif f == 20:
        _, n = sw(p, "2I")
        p += 8
        for _ in range(n):
            sw(p, "4I")
            p = pstr(pstr(pstr(p + 16)))
    elif f == 21:
        sw(p, "2Q")
    elif f == 22:
        _, _, n = sw(p, "3Q")
        p += 24
        for _ in range(n):
            _, _, bits = sw(p, "3Q")
            p += 24
            for _ in range((bits + 63) // 64):
                sw(p, "Q")
                p += 8
    elif f == 25:
        n = sw(p, "I")
        p += 4
        for _ in range(n):
            il, dl = sw(p, "2I")
            sw(p + 8, "Q")
            if il >= 8:
                sw(p + 16, "2I")        # bpf_prog_info: type, id
            p += 16 + il + dl
    elif f == 26:
        n = sw(p, "I")
        p += 4
        for _ in range(n):
            _, s = sw(p, "2I")
            p += 8 + s
    elif f == 27:
        sw(p, "5I")
    elif f == 28:
        n = sw(p, "I")
        p += 4
        for _ in range(n):
            p = pstr(pstr(p))
    elif f == 29:
        sw(p, "2I"), sw(p + 8, "2Q")
    elif f == 31:
        n = sw(p, "I")
        p += 4
        for _ in range(n):
            c = sw(p, "I")
            p += 4
            for _ in range(c):
                p = pstr(pstr(p))
            p = pstr(p)


table = data_off + data_size
features_at = {}
sections = []
for b in range(256):
    if features[b // 64] & (1 << (b % 64)):
        o, s = u(table, "Q"), u(table + 8, "Q")
        features_at[b] = o
        sections.append((b, o, s))
        sw(table, "2Q")
        table += 16
nr_cpus = u(features_at[7], "I") if 7 in features_at else 0
for b, o, s in sections:
    if b != 13:
        swap_feature(b, o, s)
for b, o, s in sections:
    if b == 13:
        swap_feature(b, o, s)

# ---- records -----------------------------------------------------------------
ID_BITS = {"TID": 1 << 1, "TIME": 1 << 2, "ADDR": 1 << 3, "READ": 1 << 4, "CALLCHAIN": 1 << 5,
           "ID": 1 << 6, "CPU": 1 << 7, "PERIOD": 1 << 8, "STREAM_ID": 1 << 9, "RAW": 1 << 10,
           "BRANCH": 1 << 11, "REGS_USER": 1 << 12, "STACK_USER": 1 << 13, "WEIGHT": 1 << 14,
           "DATA_SRC": 1 << 15, "IDENTIFIER": 1 << 16, "TRANSACTION": 1 << 17, "REGS_INTR": 1 << 18,
           "PHYS": 1 << 19, "AUX": 1 << 20, "CGROUP": 1 << 21, "DPS": 1 << 22, "CPS": 1 << 23,
           "WEIGHT_STRUCT": 1 << 24, "IP": 1}


def has(t, name):
    return t & ID_BITS[name]


def event_of(rtype, body, end):
    if len(events) == 1:
        return events[0]
    t = events[0]["sample_type"]
    if rtype == 9:
        if has(t, "IDENTIFIER"):
            pos = 0
        else:
            pos = bin(t & (ID_BITS["IP"] | ID_BITS["TID"] | ID_BITS["TIME"] | ID_BITS["ADDR"])).count("1")
        return events[ids.get(u(body + 8 * pos, "Q"), 0)]
    if has(t, "IDENTIFIER"):
        back = 1
    else:
        back = 1 + bin(t & (ID_BITS["STREAM_ID"] | ID_BITS["CPU"])).count("1")
    return events[ids.get(u(end - 8 * back, "Q"), 0)]


def swap_read(p, rf):
    times = bin(rf & 3).count("1")
    per = 1 + bool(rf & 4) + bool(rf & 16)
    if rf & 8:
        n = sw(p, "Q")
        p += 8
        for _ in range(times + n * per):
            sw(p, "Q")
            p += 8
    else:
        for _ in range(1 + times + per - 1):
            sw(p, "Q")
            p += 8
    return p


def swap_sample(p, a):
    t = a["sample_type"]
    for name in ("IDENTIFIER", "IP"):
        if has(t, name):
            sw(p, "Q")
            p += 8
    if has(t, "TID"):
        sw(p, "2I")
        p += 8
    for name in ("TIME", "ADDR", "ID", "STREAM_ID"):
        if has(t, name):
            sw(p, "Q")
            p += 8
    if has(t, "CPU"):
        sw(p, "2I")
        p += 8
    if has(t, "PERIOD"):
        sw(p, "Q")
        p += 8
    if has(t, "READ"):
        p = swap_read(p, a["read_format"])
    if has(t, "CALLCHAIN"):
        n = sw(p, "Q")
        for i in range(n):
            sw(p + 8 + 8 * i, "Q")
        p += 8 + 8 * n
    if has(t, "RAW"):
        n = sw(p, "I")
        if a["type"] == 2 and a["config"] in formats:
            swap_raw(formats[a["config"]], p + 4, n)
        p += (4 + n + 7) // 8 * 8
    if has(t, "BRANCH"):
        n = sw(p, "Q")
        p += 8
        if a["branch_sample_type"] & (1 << 17):
            sw(p, "Q")
            p += 8
        for _ in range(n):
            sw(p, "2Q")
            for k in range(16, 24):
                data[p + k] = revbits(data[p + k])
            p += 24
    for name, mask in (("REGS_USER", a["regs_user"]),):
        if has(t, name):
            abi = sw(p, "Q")
            p += 8
            if abi:
                for _ in range(bin(mask).count("1")):
                    sw(p, "Q")
                    p += 8
    if has(t, "STACK_USER"):
        n = sw(p, "Q")
        p += 8 + n
        if n:
            sw(p, "Q")
            p += 8
    if has(t, "WEIGHT_STRUCT"):
        sw(p, "I"), sw(p + 4, "2H")
        p += 8
    elif has(t, "WEIGHT"):
        sw(p, "Q")
        p += 8
    for name in ("DATA_SRC", "TRANSACTION"):
        if has(t, name):
            sw(p, "Q")
            p += 8
    if has(t, "REGS_INTR"):
        abi = sw(p, "Q")
        p += 8
        if abi:
            for _ in range(bin(a["regs_intr"]).count("1")):
                sw(p, "Q")
                p += 8
    for name in ("PHYS", "CGROUP", "DPS", "CPS"):
        if has(t, name):
            sw(p, "Q")
            p += 8


def swap_trailer(end, t):
    n = sum(8 for k in ("TID", "TIME", "ID", "STREAM_ID", "CPU", "IDENTIFIER") if has(t, k))
    p = end - n
    if has(t, "TID"):
        sw(p, "2I")
        p += 8
    for k in ("TIME", "ID", "STREAM_ID"):
        if has(t, k):
            sw(p, "Q")
            p += 8
    if has(t, "CPU"):
        sw(p, "2I")
        p += 8
    if has(t, "IDENTIFIER"):
        sw(p, "Q")
    return end - n


def swap_cpu_map(p):
    kind = sw(p, "H")
    if kind == 0:
        n = sw(p + 2, "H")
        for i in range(n):
            sw(p + 4 + 2 * i, "H")
    elif kind == 1:
        n, ls = sw(p + 2, "2H")
        for i in range(n):
            if ls == 4:
                sw(p + 6 + 4 * i, "I")
            else:
                sw(p + 10 + 8 * i, "Q")
    elif kind == 2:
        sw(p + 4, "2H")


def swap_record(p):
    rtype, misc, size = struct.unpack_from("<IHH", data, p)
    body, end = p + 8, p + size
    sw(p, "I"), sw(p + 4, "2H")
    if rtype >= 64:
        if rtype == 68 or rtype == 82:
            pass
        elif rtype == 69:               # ID_INDEX
            n = sw(body, "Q")
            for i in range(4 * n):
                sw(body + 8 + 8 * i, "Q")
        elif rtype == 73:               # THREAD_MAP
            n = sw(body, "Q")
            for i in range(n):
                sw(body + 8 + 24 * i, "Q")
        elif rtype == 74:
            swap_cpu_map(body)
        elif rtype == 78:               # EVENT_UPDATE
            kind = sw(body, "Q")
            sw(body + 8, "Q")
            if kind == 1:
                sw(body + 16, "Q")
            elif kind == 3:
                swap_cpu_map(body + 16)
        elif rtype == 79:
            for i in range((size - 8) // 8):
                if 8 + 8 * i + 8 <= 48:
                    sw(body + 8 * i, "Q")
        return size
    a = event_of(rtype, body, end)
    if rtype == 9:
        swap_sample(body, a)
        return size
    if a["flags"] & (1 << 18):          # sample_id_all
        end = swap_trailer(end, a["sample_type"])
    if rtype == 1:                      # MMAP
        sw(body, "2I"), sw(body + 8, "3Q")
    elif rtype == 10:                   # MMAP2
        sw(body, "2I"), sw(body + 8, "3Q")
        if not misc & (1 << 14):
            sw(body + 32, "2I"), sw(body + 40, "2Q")
        sw(body + 56, "2I")
    elif rtype == 2:
        sw(body, "2Q")
    elif rtype in (3, 12, 15):
        sw(body, "2I")
    elif rtype in (4, 7):
        sw(body, "4I"), sw(body + 16, "Q")
    elif rtype in (5, 6, 11):
        sw(body, "3Q")
    elif rtype == 8:
        sw(body, "2I")
        swap_read(body + 8, a["read_format"])
    elif rtype in (13, 20, 21):
        sw(body, "Q")
    elif rtype == 16:                   # NAMESPACES
        sw(body, "2I")
        n = sw(body + 8, "Q")
        for i in range(2 * n):
            sw(body + 16 + 8 * i, "Q")
    elif rtype == 17:
        sw(body, "Q"), sw(body + 8, "I"), sw(body + 12, "2H")
    elif rtype == 18:
        sw(body, "2H"), sw(body + 4, "I")
    elif rtype == 19:
        sw(body, "Q")
    elif rtype == 14:
        pass
    return size


pos = data_off
while pos < data_off + data_size:
    pos += swap_record(pos)

open(sys.argv[2], "wb").write(data)
