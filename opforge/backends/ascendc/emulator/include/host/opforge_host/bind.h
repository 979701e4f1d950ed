// How a binding's functions reach Python: PYBIND11_MODULE / TORCH_LIBRARY register each m.def'd function in one
// table, type-erased over its signature; Python calls them through opforge_asc_call (entry.h) with Values, a POD
// descriptor mirrored in emulator/library.py. Written from pybind11's and PyTorch's public documentation.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "opforge_host/tensor.h"

extern "C" {
// kind: 0 none, 1 tensor, 2 int, 3 float, 4 bool, 5 int list (n values in sizes)
struct OpforgeAscValue {
    int32_t kind;
    int32_t dtype;  // a tensor's c10::ScalarType
    int32_t ndim;   // a tensor's dimensions, or an int list's length
    int32_t reserved;
    int64_t sizes[8];
    void* data;
    int64_t i;
    double f;
};
}

namespace opforge_host {
using Value = OpforgeAscValue;
constexpr int kMaxDims = 8;
enum Returns { R_NONE = 0, R_ONE = 1, R_TUPLE = 2, R_LIST = 3 };

struct Function {
    std::function<void(const Value*, int, std::vector<Value>&)> call;
    int nargs = 0;
    int returns = R_NONE;
};
inline std::map<std::string, Function>& functions() {
    static std::map<std::string, Function> table;
    return table;
}

[[noreturn]] inline void bad_arg(int i, const char* want, const Value& v) {
    static const char* kinds[] = {"None", "a tensor", "an int", "a float", "a bool", "a list of ints"};
    at::host_fail("binding", concat("argument ", i + 1, " must be ", want, ", got ",
                                    (v.kind >= 0 && v.kind <= 5) ? kinds[v.kind] : "an unknown value"));
}

template <class T, class = void> struct From;  // Value -> the parameter's type
template <> struct From<at::Tensor> {
    static at::Tensor get(const Value& v, int i) {
        if (v.kind != 1) bad_arg(i, "a tensor", v);
        return at::Tensor::wrap(v.data, at::IntArrayRef(v.sizes, (size_t)v.ndim), (at::ScalarType)v.dtype);
    }
};
template <> struct From<std::optional<at::Tensor>> {
    static std::optional<at::Tensor> get(const Value& v, int i) {
        if (v.kind == 0) return std::nullopt;
        return From<at::Tensor>::get(v, i);
    }
};
template <class T> struct From<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
    static T get(const Value& v, int i) {
        if (v.kind != 2 && v.kind != 4) bad_arg(i, "an int", v);
        return (T)v.i;
    }
};
template <> struct From<bool> {
    static bool get(const Value& v, int i) {
        if (v.kind != 4 && v.kind != 2) bad_arg(i, "a bool", v);
        return v.i != 0;
    }
};
template <class T> struct From<T, std::enable_if_t<std::is_floating_point_v<T>>> {
    static T get(const Value& v, int i) {
        if (v.kind == 3) return (T)v.f;
        if (v.kind == 2) return (T)v.i;
        bad_arg(i, "a float", v);
    }
};
template <> struct From<std::vector<int64_t>> {
    static std::vector<int64_t> get(const Value& v, int i) {
        if (v.kind != 5) bad_arg(i, "a list of ints", v);
        return std::vector<int64_t>(v.sizes, v.sizes + v.ndim);
    }
};
template <> struct From<at::IntArrayRef> {
    static at::IntArrayRef get(const Value& v, int i) {
        if (v.kind != 5) bad_arg(i, "a list of ints", v);
        return at::IntArrayRef(v.sizes, (size_t)v.ndim);
    }
};

inline Value tensor_value(const at::Tensor& t) {
    Value v{};
    if (!t.defined()) return v;
    v.kind = 1;
    v.dtype = (int32_t)t.scalar_type();
    v.ndim = (int32_t)t.dim();
    if (v.ndim > kMaxDims) at::host_fail("binding", "a returned tensor of more than 8 dimensions");
    for (int d = 0; d < v.ndim; d++) v.sizes[d] = t.size(d);
    v.data = t.data_ptr();
    return v;
}
template <class T> void put(const T& r, std::vector<Value>& out) {  // a returned value -> Values
    if constexpr (std::is_same_v<T, at::Tensor>) {
        out.push_back(tensor_value(r));
    } else if constexpr (std::is_same_v<T, bool>) {
        Value v{}; v.kind = 4; v.i = r; out.push_back(v);
    } else if constexpr (std::is_integral_v<T>) {
        Value v{}; v.kind = 2; v.i = (int64_t)r; out.push_back(v);
    } else if constexpr (std::is_floating_point_v<T>) {
        Value v{}; v.kind = 3; v.f = (double)r; out.push_back(v);
    } else {
        static_assert(sizeof(T) == 0, "the emulator's binding returns tensors, numbers, and tuples or vectors of them");
    }
}
template <class T> struct Put {
    static constexpr int kind = R_ONE;
    static void out(const T& r, std::vector<Value>& o) { put(r, o); }
};
template <class T> struct Put<std::vector<T>> {
    static constexpr int kind = R_LIST;
    static void out(const std::vector<T>& r, std::vector<Value>& o) { for (const T& x : r) put(x, o); }
};
template <class... T> struct Put<std::tuple<T...>> {
    static constexpr int kind = R_TUPLE;
    static void out(const std::tuple<T...>& r, std::vector<Value>& o) {
        std::apply([&](const auto&... x) { (put(x, o), ...); }, r);
    }
};

template <class R, class... A, size_t... I>
Function erase(std::function<R(A...)> f, std::index_sequence<I...>) {
    Function fn;
    fn.nargs = sizeof...(A);
    if constexpr (std::is_void_v<R>) fn.returns = R_NONE;
    else fn.returns = Put<std::decay_t<R>>::kind;
    fn.call = [f](const Value* args, int n, std::vector<Value>& out) {
        if (n != (int)sizeof...(A))
            at::host_fail("binding", concat("the function takes ", sizeof...(A), " arguments, got ", n));
        if constexpr (std::is_void_v<R>) {
            f(From<std::decay_t<A>>::get(args[I], (int)I)...);
        } else {
            Put<std::decay_t<R>>::out(f(From<std::decay_t<A>>::get(args[I], (int)I)...), out);
        }
    };
    return fn;
}
template <class R, class... A> Function erase(R (*f)(A...)) {
    return erase(std::function<R(A...)>(f), std::index_sequence_for<A...>{});
}
class Module {
  public:
    explicit Module(std::string name) : name_(std::move(name)) {}
    template <class F, class... Extra> Module& def(const char* fn, F&& f, Extra&&...) {
        std::string bare(fn);  // TORCH_LIBRARY's m.def("fn(Tensor x) -> Tensor", f): the name before the schema
        functions()[name_ + "." + bare.substr(0, bare.find('('))] = erase_any(std::forward<F>(f));
        return *this;
    }
    template <class F, class... Extra> Module& impl(const char* fn, F&& f, Extra&&...) { return def(fn, std::forward<F>(f)); }
    Module& def(const char*) { return *this; }  // TORCH_LIBRARY's schema-only def
    std::string& doc() { return doc_; }
    const std::string& name() const { return name_; }

  private:
    std::string name_, doc_;
    template <class F> static Function erase_any(F&& f) {
        using D = std::decay_t<F>;
        if constexpr (std::is_pointer_v<D>) return erase(f);
        else return erase_callable(std::function(f));
    }
    template <class R, class... A> static Function erase_callable(std::function<R(A...)> f) {
        return erase(std::move(f), std::index_sequence_for<A...>{});
    }
};

struct ModuleRegistrar {
    ModuleRegistrar(const char* name, void (*body)(Module&)) {
        Module m(name);
        body(m);
    }
};
}  // namespace opforge_host

namespace pybind11 {
using module = opforge_host::Module;
using module_ = opforge_host::Module;
struct arg {
    explicit arg(const char*) {}
    template <class T> arg& operator=(T&&) { return *this; }
};
struct return_value_policy { static constexpr int reference = 0, move = 1, copy = 2, automatic = 3; };
}  // namespace pybind11
namespace py = pybind11;
namespace torch {
using Library = opforge_host::Module;
}
#define TORCH_FN(f) (&f)

#define OPFORGE_PYBIND11_MODULE_(name, var)                                                          \
    static void opforge_pybind_body_##name(::opforge_host::Module& var);                             \
    static ::opforge_host::ModuleRegistrar opforge_pybind_reg_##name(#name, &opforge_pybind_body_##name); \
    static void opforge_pybind_body_##name(::opforge_host::Module& var)
#define PYBIND11_MODULE(name, var) OPFORGE_PYBIND11_MODULE_(name, var)
// TORCH_LIBRARY(ns, m) defines ns's operators, TORCH_LIBRARY_IMPL(ns, key, m) their kernels: both register
// what they name under the module `ns` (the model reaches them as torch.ops.ns.fn).
#define OPFORGE_TORCH_LIBRARY_(ns, var, tag)                                                         \
    static void opforge_torch_body_##ns##tag(::opforge_host::Module& var);                           \
    static ::opforge_host::ModuleRegistrar opforge_torch_reg_##ns##tag(#ns, &opforge_torch_body_##ns##tag); \
    static void opforge_torch_body_##ns##tag(::opforge_host::Module& var)
#define TORCH_LIBRARY(ns, var) OPFORGE_TORCH_LIBRARY_(ns, var, _def)
#define TORCH_LIBRARY_FRAGMENT(ns, var) OPFORGE_TORCH_LIBRARY_(ns, var, _frag)
#define TORCH_LIBRARY_IMPL(ns, key, var) OPFORGE_TORCH_LIBRARY_(ns, var, _impl_##key)
