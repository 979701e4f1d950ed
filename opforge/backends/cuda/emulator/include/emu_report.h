// opforge CUDA emulator: the deadlock message, "threads 16-31 wait at __syncthreads (line 9) while
// 0-15 wait at __shfl_down_sync (line 7); the mask 0xffffffff of ... names lanes 16-31 of warp 0,
// which exited". Fixed buffers, no <string>: it is half of the header's compile time.
#pragma once
#include <cstdarg>
#include <cstdio>
#include "emu_warp.h"

namespace opforge_emu {
struct Text {
    char buf[900] = "";
    int n = 0;
    void add(const char* fmt, ...) {
        if (n >= (int)sizeof buf - 1) return;
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(buf + n, sizeof buf - n, fmt, ap);
        va_end(ap);
        n = k < 0 ? n : (n + k < (int)sizeof buf ? n + k : (int)sizeof buf - 1);
    }
};

OPF_NOSAN static void add_ranges(Text& out, const int* ids, int count) {
    for (int i = 0, shown = 0; i < count; ++i, ++shown) {
        int j = i;
        while (j + 1 < count && ids[j + 1] == ids[j] + 1) ++j;
        if (shown == 6) { out.add(", ... (%d threads)", count); return; }
        out.add(j > i ? "%s%d-%d" : "%s%d", shown ? ", " : "", ids[i], ids[j]);
        i = j;
    }
}

OPF_NOSAN static void wait_label(const Thread& t, char* out, size_t size) {
    snprintf(out, size, "%s (line %d)", t.state == T_SYNC ? "__syncthreads" : kKindNames[t.kind], t.line);
}

// The first collective whose mask names lanes that exited or do not exist.
OPF_NOSAN static void add_missing_lanes(Text& out) {
    for (int i = 0; i < E.n; ++i) {
        const Thread& t = E.threads[i];
        if (t.state != T_WARP) continue;
        int base = t.lin & ~31, gone[32], absent[32], ng = 0, na = 0;
        for (int l = 0; l < 32; ++l) {
            if (!(t.mask >> l & 1)) continue;
            if (base + l >= E.n) absent[na++] = l;
            else if (E.threads[base + l].state == T_EXITED) gone[ng++] = l;
        }
        if (!ng && !na) continue;
        char label[96];
        wait_label(t, label, sizeof label);
        out.add("; the mask 0x%08x of %s names lanes ", t.mask, label);
        add_ranges(out, ng ? gone : absent, ng ? ng : na);
        if (ng) out.add(" of warp %d, which exited", base / 32);
        else out.add(" of warp %d, which do not exist in a block of %d threads", base / 32, E.n);
        return;
    }
}

OPF_NOSAN static void report_deadlock();
OPF_NOSAN static void report_divergent_barrier() {
    report_deadlock();
    int n = (int)strlen(E.err);
    snprintf(E.err + n, sizeof E.err - n, " (divergent __syncthreads: every thread of a block must reach the same one)");
}

OPF_NOSAN static void report_deadlock() {
    static char labels[64][96];
    static int ids[64][kMaxThreads];
    int counts[64] = {0}, groups = 0;
    for (int i = 0; i < E.n; ++i) {
        const Thread& t = E.threads[i];
        if (t.state != T_SYNC && t.state != T_WARP) continue;
        char label[96];
        wait_label(t, label, sizeof label);
        int g = 0;
        while (g < groups && std::strcmp(labels[g], label) != 0) ++g;
        if (g == groups) {
            if (groups == 64) continue;
            std::memcpy(labels[groups++], label, sizeof label);
        }
        ids[g][counts[g]++] = t.lin;
    }
    Text text;
    for (int g = 0; g < groups; ++g) {
        text.add(g ? " while " : "threads ");
        add_ranges(text, ids[g], counts[g]);
        text.add(" wait at %s", labels[g]);
    }
    add_missing_lanes(text);
    format_error(E_DEADLOCK, "deadlock: kernel %s (launched at line %d), block (%u,%u,%u): %s", E.kernel,
                 E.launch_line, blockIdx.x, blockIdx.y, blockIdx.z, text.buf);
}
}  // namespace opforge_emu
