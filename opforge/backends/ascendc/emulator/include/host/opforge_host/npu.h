// The runtime names a host file uses around a launch (ACL streams and memory, torch_npu's current stream), written
// from Huawei's public AscendCL documentation: the emulator has no streams (a launch runs to completion), and
// device memory is emulator GM.
#pragma once
#include <cstddef>
#include <cstring>

#include "asc_core.h"

typedef void* aclrtStream;
typedef void* aclrtContext;
typedef void* aclrtEvent;
typedef int aclError;
constexpr aclError ACL_SUCCESS = 0, ACL_ERROR_NONE = 0;
enum aclrtMemMallocPolicy { ACL_MEM_MALLOC_HUGE_FIRST = 0, ACL_MEM_MALLOC_HUGE_ONLY, ACL_MEM_MALLOC_NORMAL_ONLY };
enum aclrtMemcpyKind { ACL_MEMCPY_HOST_TO_HOST = 0, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST,
                       ACL_MEMCPY_DEVICE_TO_DEVICE };
inline aclError aclInit(const char*) { return ACL_SUCCESS; }
inline aclError aclFinalize() { return ACL_SUCCESS; }
inline aclError aclrtSetDevice(int) { return ACL_SUCCESS; }
inline aclError aclrtResetDevice(int) { return ACL_SUCCESS; }
inline aclError aclrtCreateStream(aclrtStream* s) { *s = nullptr; return ACL_SUCCESS; }
inline aclError aclrtDestroyStream(aclrtStream) { return ACL_SUCCESS; }
inline aclError aclrtSynchronizeStream(aclrtStream) { return ACL_SUCCESS; }
inline aclError aclrtSynchronizeDevice() { return ACL_SUCCESS; }
inline aclError aclrtMalloc(void** p, size_t bytes, aclrtMemMallocPolicy = ACL_MEM_MALLOC_HUGE_FIRST) {
    *p = opforge_asc::gm_alloc(bytes, "aclrtMalloc", true);
    return ACL_SUCCESS;
}
inline aclError aclrtMallocHost(void** p, size_t bytes) { return aclrtMalloc(p, bytes); }
inline aclError aclrtFree(void*) { return ACL_SUCCESS; }  // released with every GM buffer after the call
inline aclError aclrtFreeHost(void*) { return ACL_SUCCESS; }
inline aclError aclrtMemcpy(void* dst, size_t, const void* src, size_t n, aclrtMemcpyKind) {
    std::memmove(dst, src, n);
    return ACL_SUCCESS;
}
inline aclError aclrtMemset(void* dst, size_t, int v, size_t n) { std::memset(dst, v, n); return ACL_SUCCESS; }

namespace c10_npu {
struct NPUStream {
    aclrtStream stream(bool = true) const { return nullptr; }
    operator aclrtStream() const { return nullptr; }
    int device_index() const { return 0; }
};
inline NPUStream getCurrentNPUStream(int = -1) { return {}; }
}  // namespace c10_npu
