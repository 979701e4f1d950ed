// opforge CUDA emulator: the per-call watchdog. A CPU-time timer of the launching thread
// (SIGVTALRM, sent to that thread only) stops an endless kernel, and a fault in kernel code
// (SIGSEGV, SIGBUS, SIGFPE: a wild pointer, a fiber stack overflow, an integer division by zero)
// becomes an error; both jump back to the launch. The handlers are installed for the launch only
// and the previous fault handlers restored after it; the timer's handler stays and hands each tick
// to the library that armed the timer, so several emulated libraries share a process.
#pragma once
#include <csetjmp>
#include <csignal>
#include <ctime>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "emu_report.h"

namespace opforge_emu {
static const int kWatchedSignals[4] = {SIGVTALRM, SIGSEGV, SIGBUS, SIGFPE};
struct Watch {
    sigjmp_buf jmp;
    volatile sig_atomic_t armed;
    pthread_t thread;
    timer_t timer;
    bool has_timer;
    struct sigaction old[4];
};
static Watch W;

OPF_NOSAN static void on_signal(int sig, siginfo_t* info, void*);

// The timer's signal carries its library's handler (sigev_value), so whichever emulated library's
// handler is installed process-wide passes the signal to the library whose launch it times.
OPF_NOSAN static void on_timer(int sig, siginfo_t* info, void* ctx) {
    if (info && info->si_code == SI_TIMER && info->si_value.sival_ptr && info->si_value.sival_ptr != (void*)on_signal)
        ((void (*)(int, siginfo_t*, void*))info->si_value.sival_ptr)(sig, info, ctx);
    else
        on_signal(sig, info, ctx);
}

OPF_NOSAN static void on_signal(int sig, siginfo_t* info, void*) {
    if (sig == SIGVTALRM && !W.armed) return;  // a stale tick after the launch
    if (!W.armed || !pthread_equal(pthread_self(), W.thread)) {
        for (int i = 1; i < 4; ++i)  // someone else's fault: hand it to the previous handler
            if (kWatchedSignals[i] == sig) sigaction(sig, &W.old[i], nullptr);
        return;
    }
    W.armed = 0;
    if (sig == SIGVTALRM && !E.in_launch)
        format_error(E_STEP_LIMIT, "step-limit: the launcher's host code ran past the %.3g s CPU-time limit of a "
                     "launcher call (an endless loop around the launches?)", E.time_limit);
    else if (sig == SIGVTALRM)
        format_error(E_STEP_LIMIT, "step-limit: %s ran past the %.3g s CPU-time limit of a launcher call (an endless "
                     "loop, or a wait for more blocks than the emulator keeps resident: 64, and 4096 threads in all)", where(), E.time_limit);
    else
        format_error(E_CRASH, "crash: %s in %s at address %p (a wild pointer, or a stack overflow)",
                     sig == SIGFPE ? "arithmetic fault (integer division by zero?)" : "memory fault",
                     where(), info ? info->si_addr : nullptr);
    siglongjmp(W.jmp, 1);
}

OPF_NOSAN static void ensure_altstack() {
    static thread_local bool done = false;
    if (done) return;
    done = true;
    stack_t current;
    if (sigaltstack(nullptr, &current) == 0 && !(current.ss_flags & SS_DISABLE)) return;
    stack_t st;
    st.ss_size = 256 * 1024;
    st.ss_sp = std::malloc(st.ss_size);
    st.ss_flags = 0;
    sigaltstack(&st, nullptr);
}

OPF_NOSAN static void arm_watchdog() {
    ensure_altstack();
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (int i = 1; i < 4; ++i) sigaction(kWatchedSignals[i], &sa, &W.old[i]);
    sa.sa_sigaction = on_timer;
    sigaction(SIGVTALRM, &sa, nullptr);  // left installed: on_timer dispatches to the timer's owner
    W.thread = pthread_self();
    struct sigevent sev;
    std::memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGVTALRM;
    sev.sigev_value.sival_ptr = (void*)on_signal;
#ifdef sigev_notify_thread_id
    sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
#else
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
#endif
    W.has_timer = timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &W.timer) == 0;
    if (W.has_timer) {
        struct itimerspec its;
        std::memset(&its, 0, sizeof its);
        its.it_value.tv_sec = (time_t)E.time_limit;
        its.it_value.tv_nsec = (long)((E.time_limit - (double)(time_t)E.time_limit) * 1e9) + 1;
        if (its.it_value.tv_nsec >= 1000000000L) { its.it_value.tv_sec += 1; its.it_value.tv_nsec -= 1000000000L; }
        timer_settime(W.timer, 0, &its, nullptr);
    }
    W.armed = 1;
}

OPF_NOSAN static void disarm_watchdog() {
    W.armed = 0;
    if (W.has_timer) timer_delete(W.timer);
    W.has_timer = false;
    for (int i = 1; i < 4; ++i) sigaction(kWatchedSignals[i], &W.old[i], nullptr);
}
}  // namespace opforge_emu
