// What a rewritten launch (emulator/translate.py) wraps each argument in: CANN's launch forms take device
// pointers as void* (`x.data_ptr()`) for the kernel's GM_ADDR / __gm__ T* parameters; a pointer argument
// converts to whichever pointer type the parameter has, anything else passes unchanged. Every unit includes
// this first (g++ -include), so the rewrite keeps the source's lines.
#pragma once
#include <type_traits>
#include <utility>

namespace opforge_host {
struct GmArg {
    const void* p;
    template <class T> operator T*() const { return (T*)p; }
};
template <class T> decltype(auto) gm_arg(T&& v) {
    if constexpr (std::is_pointer_v<std::decay_t<T>> || std::is_null_pointer_v<std::decay_t<T>>)
        return GmArg{(const void*)v};
    else
        return std::forward<T>(v);
}
}  // namespace opforge_host
