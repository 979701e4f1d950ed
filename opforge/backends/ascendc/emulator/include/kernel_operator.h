// opforge AscendC emulator: what `#include "kernel_operator.h"` gives a kernel compiled by g++ for the CPU.
// Written from Huawei's public Ascend C documentation; not CANN's header. An API this emulator lacks is absent, so
// the build names it (the verdict stops at `static` with the API, never a guess).
#pragma once
#include "asc_core.h"
#include "asc_types.h"
#include "asc_tensor.h"
#include "asc_copy.h"
#if __has_include("asc_vector.h")
#include "asc_vector.h"
#endif

#define ASSERT(...) AscendC::assert_(static_cast<bool>(__VA_ARGS__), #__VA_ARGS__)
#define ascendc_assert(...) AscendC::assert_(static_cast<bool>(__VA_ARGS__), #__VA_ARGS__)
#define KERNEL_TASK_TYPE_DEFAULT(x)
#define KERNEL_TASK_TYPE(key, x)
#ifndef ASCENDC_CUBE_ONLY
#define ASCEND_IS_AIV true
#define ASCEND_IS_AIC false
#endif

namespace opforge_asc {
constexpr uint64_t kSysWorkspace = 16ull << 20;  // the library's system workspace in front of the user's (16 MB)
}

namespace AscendC {
// the user's part of a kernel's workspace: after the system workspace the tiling function asked for in front
inline GM_ADDR GetUserWorkspace(GM_ADDR ws) { return ws ? ws + opforge_asc::kSysWorkspace : ws; }
inline void SetSysWorkspace(GM_ADDR) {}
template <typename A, typename B> struct IsSameType {
    static constexpr bool value = std::is_same_v<A, B>;
};
// ASSERT in kernel code (Huawei's samples check tiling with it): a failed one stops the kernel, as the NPU traps
inline void assert_(bool ok, const char* text, Loc loc = Loc::here()) {
    if (!ok) opforge_asc::fail(opforge_asc::E_BADARG, "ASSERT", loc, "the kernel's assertion %s failed", text);
}
template <typename... A> inline void printf(const char*, A...) {}
template <typename... A> inline void PRINTF(const char*, A...) {}
template <typename T> inline void DumpTensor(const LocalTensor<T>&, uint32_t, uint32_t) {}
template <typename T> inline void DumpTensor(const GlobalTensor<T>&, uint32_t, uint32_t) {}
}  // namespace AscendC
