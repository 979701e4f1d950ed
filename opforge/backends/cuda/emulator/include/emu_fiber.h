// opforge CUDA emulator: fibers. One fiber runs one CUDA thread at a time; a fiber whose thread
// exits takes the next unstarted thread of the schedule on the same stack, so a pointwise kernel
// needs one fiber per block and two context switches in all. Stacks live in a pool that every
// block and launch reuses; a switch is a few register moves (x86-64 assembly, no syscall; other
// architectures fall back to ucontext).
#pragma once
#include <cstdint>
#include <cstdlib>
#include <sys/mman.h>
#if !defined(__x86_64__) || defined(OPFORGE_EMU_UCONTEXT)
#include <ucontext.h>
#endif

// The emulator's own code is not instrumented (emu_mem.h): only the candidate's accesses reach the hooks.
#ifndef OPF_NOSAN
#define OPF_NOSAN __attribute__((no_sanitize_thread))
#endif

namespace opforge_emu {
struct Thread;
static const size_t kStackBytes = 256 * 1024;  // CUDA's default local-memory stack is 1 KB; this is roomy

struct Context {
#if defined(__x86_64__) && !defined(OPFORGE_EMU_UCONTEXT)
    void* sp;
#else
    ucontext_t uc;
#endif
};

struct Fiber {
    Context ctx;
    char* stack;
    Thread* thread;
    Fiber* next_free;
};

#if defined(__x86_64__) && !defined(OPFORGE_EMU_UCONTEXT)
extern "C" void opforge_emu_switch(void** save, void* to);
__asm__(R"(
    .text
    .p2align 4
    .hidden opforge_emu_switch
    .type opforge_emu_switch,@function
opforge_emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size opforge_emu_switch, .-opforge_emu_switch
)");
OPF_NOSAN static inline void switch_to(Context* save, Context* to) {
    __asm__ __volatile__("" ::: "memory");
    opforge_emu_switch(&save->sp, to->sp);
    __asm__ __volatile__("" ::: "memory");
}
OPF_NOSAN static void init_context(Fiber* f, void (*entry)()) {
    uint64_t* sp = (uint64_t*)(((uintptr_t)(f->stack + kStackBytes)) & ~(uintptr_t)15);
    *--sp = 0;                          // the entry's return address: it never returns
    *--sp = (uint64_t)(uintptr_t)entry; // popped by `ret`
    for (int i = 0; i < 6; ++i) *--sp = 0;
    *--sp = 0x1f80ull | (0x037full << 32);  // default MXCSR and x87 control word
    f->ctx.sp = sp;
}
#else
OPF_NOSAN static inline void switch_to(Context* save, Context* to) { swapcontext(&save->uc, &to->uc); }
OPF_NOSAN static void init_context(Fiber* f, void (*entry)()) {
    getcontext(&f->ctx.uc);
    f->ctx.uc.uc_stack.ss_sp = f->stack;
    f->ctx.uc.uc_stack.ss_size = kStackBytes;
    f->ctx.uc.uc_link = nullptr;
    makecontext(&f->ctx.uc, entry, 0);
}
#endif

// Stacks get a guard page below them, so an overflow faults (and is reported) instead of
// silently writing into the next fiber's stack.
OPF_NOSAN static char* new_stack() {
    size_t page = 4096;
    void* p = mmap(nullptr, kStackBytes + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) std::abort();
    mprotect(p, page, PROT_NONE);
    return (char*)p + page;
}
}  // namespace opforge_emu
