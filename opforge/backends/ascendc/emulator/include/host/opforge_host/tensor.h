// opforge's stand-in for the part of PyTorch's C++ API (ATen/c10) an AscendC binding uses on the host:
// a tensor is a descriptor (sizes, strides, dtype) over emulator global memory. Written from PyTorch's public
// C++ documentation; allocation goes through opforge_asc::gm_alloc (guarded, poisoned for `empty`).
#pragma once
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "asc_core.h"
#include "asc_types.h"

namespace c10 {

// PyTorch's ScalarType numbering (c10/core/ScalarType.h's public enumeration order): the Python side sends these.
enum class ScalarType : int8_t {
    Byte = 0, Char = 1, Short = 2, Int = 3, Long = 4, Half = 5, Float = 6, Double = 7, ComplexHalf = 8,
    ComplexFloat = 9, ComplexDouble = 10, Bool = 11, QInt8 = 12, QUInt8 = 13, QInt32 = 14, BFloat16 = 15,
    Undefined = 127
};
constexpr ScalarType kByte = ScalarType::Byte, kChar = ScalarType::Char, kShort = ScalarType::Short,
                     kInt = ScalarType::Int, kLong = ScalarType::Long, kHalf = ScalarType::Half,
                     kFloat = ScalarType::Float, kDouble = ScalarType::Double, kBool = ScalarType::Bool,
                     kBFloat16 = ScalarType::BFloat16, kInt8 = ScalarType::Char, kUInt8 = ScalarType::Byte,
                     kInt16 = ScalarType::Short, kInt32 = ScalarType::Int, kInt64 = ScalarType::Long,
                     kFloat16 = ScalarType::Half, kFloat32 = ScalarType::Float, kFloat64 = ScalarType::Double;

inline size_t elementSize(ScalarType t) {
    switch (t) {
        case ScalarType::Byte: case ScalarType::Char: case ScalarType::Bool: return 1;
        case ScalarType::Short: case ScalarType::Half: case ScalarType::BFloat16: return 2;
        case ScalarType::Int: case ScalarType::Float: return 4;
        default: return 8;
    }
}
// one element of type t at p, from a double (fill_)
inline void store_as(ScalarType t, uint8_t* p, double v) {
    auto put = [p](auto x) { std::memcpy(p, &x, sizeof x); };
    switch (t) {
        case ScalarType::Byte: put((uint8_t)v); break;
        case ScalarType::Char: put((int8_t)v); break;
        case ScalarType::Bool: put((uint8_t)(v != 0)); break;
        case ScalarType::Short: put((int16_t)v); break;
        case ScalarType::Half: put(opforge_asc::half((float)v)); break;
        case ScalarType::BFloat16: put(opforge_asc::bf16((float)v)); break;
        case ScalarType::Int: put((int32_t)v); break;
        case ScalarType::Float: put((float)v); break;
        case ScalarType::Long: put((int64_t)v); break;
        default: put(v); break;
    }
}
inline const char* toString(ScalarType t) {
    switch (t) {
        case ScalarType::Byte: return "Byte"; case ScalarType::Char: return "Char"; case ScalarType::Short: return "Short";
        case ScalarType::Int: return "Int"; case ScalarType::Long: return "Long"; case ScalarType::Half: return "Half";
        case ScalarType::Float: return "Float"; case ScalarType::Double: return "Double"; case ScalarType::Bool: return "Bool";
        case ScalarType::BFloat16: return "BFloat16"; default: return "Undefined";
    }
}
inline std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << toString(t); }

template <class T>
class ArrayRef {
  public:
    ArrayRef() = default;
    ArrayRef(const T* data, size_t n) : data_(data), n_(n) {}
    ArrayRef(const std::vector<T>& v) : data_(v.data()), n_(v.size()) {}
    ArrayRef(std::initializer_list<T> l) : data_(l.begin()), n_(l.size()) {}
    ArrayRef(const T& one) : data_(&one), n_(1) {}
    const T* begin() const { return data_; }
    const T* end() const { return data_ + n_; }
    const T* data() const { return data_; }
    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    const T& operator[](size_t i) const { return data_[i]; }
    const T& at(size_t i) const { return data_[i]; }
    const T& front() const { return data_[0]; }
    const T& back() const { return data_[n_ - 1]; }
    std::vector<T> vec() const { return std::vector<T>(data_, data_ + n_); }
    bool equals(ArrayRef o) const { return n_ == o.n_ && std::equal(begin(), end(), o.begin()); }
    operator std::vector<T>() const { return vec(); }

  private:
    const T* data_ = nullptr;
    size_t n_ = 0;
};
template <class T> bool operator==(ArrayRef<T> a, ArrayRef<T> b) { return a.equals(b); }
template <class T> bool operator!=(ArrayRef<T> a, ArrayRef<T> b) { return !a.equals(b); }
using IntArrayRef = ArrayRef<int64_t>;

enum class DeviceType : int8_t { CPU = 0, CUDA = 1, PrivateUse1 = 20 };
constexpr DeviceType kCPU = DeviceType::CPU, kPrivateUse1 = DeviceType::PrivateUse1;
struct Device {
    DeviceType type_ = DeviceType::PrivateUse1;
    int8_t index_ = 0;
    Device() = default;
    Device(DeviceType t, int index = 0) : type_(t), index_((int8_t)index) {}
    Device(const std::string&) {}
    DeviceType type() const { return type_; }
    int8_t index() const { return index_; }
    bool is_cpu() const { return type_ == DeviceType::CPU; }
    bool is_privateuseone() const { return type_ == DeviceType::PrivateUse1; }
    bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
    bool operator!=(const Device& o) const { return !(*this == o); }
};
enum class MemoryFormat : int8_t { Contiguous, Preserve, ChannelsLast };

class TensorOptions {
  public:
    TensorOptions() = default;
    TensorOptions(ScalarType t) : dtype_(t) {}
    TensorOptions(Device) {}
    TensorOptions(DeviceType) {}
    TensorOptions dtype(ScalarType t) const { TensorOptions o = *this; o.dtype_ = t; return o; }
    ScalarType dtype() const { return dtype_; }
    TensorOptions device(Device) const { return *this; }
    TensorOptions device(DeviceType, int = 0) const { return *this; }
    TensorOptions layout(int) const { return *this; }
    TensorOptions requires_grad(bool) const { return *this; }
    TensorOptions memory_format(MemoryFormat) const { return *this; }
    TensorOptions pinned_memory(bool) const { return *this; }
    Device device() const { return Device(); }
    bool has_dtype() const { return dtype_ != ScalarType::Undefined; }

  private:
    ScalarType dtype_ = ScalarType::Undefined;
};
inline TensorOptions dtype(ScalarType t) { return TensorOptions(t); }
inline TensorOptions device(Device d) { return TensorOptions(d); }

template <class T> using optional = std::optional<T>;
constexpr std::nullopt_t nullopt = std::nullopt;
using Half = opforge_asc::half;
using BFloat16 = opforge_asc::bf16;

// The ScalarType of an element type (data_ptr<T>() checks it, as PyTorch does); Undefined: not checked.
template <class T> constexpr ScalarType scalar_type_of() {
    if constexpr (std::is_same_v<T, float>) return ScalarType::Float;
    else if constexpr (std::is_same_v<T, double>) return ScalarType::Double;
    else if constexpr (std::is_same_v<T, Half>) return ScalarType::Half;
    else if constexpr (std::is_same_v<T, BFloat16>) return ScalarType::BFloat16;
    else if constexpr (std::is_same_v<T, bool>) return ScalarType::Bool;
    else if constexpr (std::is_same_v<T, int8_t>) return ScalarType::Char;
    else if constexpr (std::is_same_v<T, uint8_t>) return ScalarType::Byte;
    else if constexpr (std::is_same_v<T, int16_t>) return ScalarType::Short;
    else if constexpr (std::is_same_v<T, int32_t>) return ScalarType::Int;
    else if constexpr (std::is_same_v<T, int64_t>) return ScalarType::Long;
    else return ScalarType::Undefined;
}
}  // namespace c10

namespace at {
using namespace c10;

struct TensorImpl {
    uint8_t* data = nullptr;
    std::vector<int64_t> sizes, strides;
    ScalarType dtype = ScalarType::Float;
};

[[noreturn]] inline void host_fail(const char* api, const std::string& msg,
                                   opforge_asc::Loc loc = opforge_asc::Loc::here()) {
    // the kernel-side fail() names a kernel and core; a host-side error has neither
    throw opforge_asc::EmuError{opforge_asc::E_HOST, std::string(api) + " (" + loc.base() + ":" +
                                                         std::to_string(loc.line) + "): " + msg};
}

inline std::vector<int64_t> contiguous_strides(IntArrayRef sizes) {
    std::vector<int64_t> s(sizes.size());
    int64_t step = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
        s[i] = step;
        step *= sizes[i] > 1 ? sizes[i] : 1;
    }
    return s;
}

class Tensor {
  public:
    Tensor() = default;
    explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
    static Tensor wrap(void* data, IntArrayRef sizes, ScalarType dtype) {
        auto impl = std::make_shared<TensorImpl>();
        impl->data = (uint8_t*)data;
        impl->sizes = sizes.vec();
        impl->strides = contiguous_strides(sizes);
        impl->dtype = dtype;
        return Tensor(impl);
    }

    bool defined() const { return impl_ != nullptr; }
    void* data_ptr() const { return need("data_ptr")->data; }
    template <class T> T* data_ptr(opforge_asc::Loc loc = opforge_asc::Loc::here()) const {
        constexpr ScalarType want = scalar_type_of<std::remove_cv_t<T>>();
        if (want != ScalarType::Undefined && want != scalar_type())
            host_fail("Tensor::data_ptr", std::string("expected scalar type ") + toString(want) + " but found " +
                      toString(scalar_type()), loc);
        return (T*)need("data_ptr")->data;
    }
    const void* const_data_ptr() const { return data_ptr(); }
    template <class T> const T* const_data_ptr() const { return data_ptr<T>(); }
    void* mutable_data_ptr() const { return data_ptr(); }
    template <class T> T* mutable_data_ptr() const { return data_ptr<T>(); }
    int64_t numel() const {
        int64_t n = 1;
        for (int64_t s : need("numel")->sizes) n *= s;
        return n;
    }
    int64_t dim() const { return (int64_t)need("dim")->sizes.size(); }
    int64_t ndimension() const { return dim(); }
    int64_t size(int64_t i) const { return need("size")->sizes[wrap_dim(i, "size")]; }
    int64_t stride(int64_t i) const { return need("stride")->strides[wrap_dim(i, "stride")]; }
    IntArrayRef sizes() const { return IntArrayRef(need("sizes")->sizes); }
    IntArrayRef strides() const { return IntArrayRef(need("strides")->strides); }
    ScalarType scalar_type() const { return need("scalar_type")->dtype; }
    ScalarType dtype() const { return scalar_type(); }
    TensorOptions options() const { return TensorOptions(scalar_type()); }
    Device device() const { return Device(); }
    bool is_contiguous(MemoryFormat = MemoryFormat::Contiguous) const {
        return need("is_contiguous")->strides == contiguous_strides(sizes());
    }
    Tensor contiguous(MemoryFormat = MemoryFormat::Contiguous) const {
        if (!is_contiguous()) host_fail("Tensor::contiguous", "a non-contiguous tensor: the emulator's binding "
                                        "receives contiguous tensors only");
        return *this;
    }
    int64_t element_size() const { return (int64_t)elementSize(scalar_type()); }
    int64_t itemsize() const { return element_size(); }
    int64_t nbytes() const { return numel() * element_size(); }
    int64_t storage_offset() const { return 0; }
    bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
    bool requires_grad() const { return false; }
    Tensor view(IntArrayRef shape) const { return reshape(shape); }
    Tensor reshape(IntArrayRef shape) const {
        std::vector<int64_t> s = shape.vec();
        int64_t known = 1, infer = -1;
        for (size_t i = 0; i < s.size(); i++) {
            if (s[i] == -1) infer = (int64_t)i;
            else known *= s[i];
        }
        if (infer >= 0 && known) s[infer] = numel() / known;
        int64_t n = 1;
        for (int64_t v : s) n *= v;
        if (n != numel()) host_fail("Tensor::view", "shape of " + std::to_string(n) + " elements for a tensor of " +
                                    std::to_string(numel()));
        return wrap(data_ptr(), s, scalar_type());
    }
    Tensor flatten() const { return reshape({-1}); }
    Tensor detach() const { return *this; }
    // zero_ / fill_ on the host: what the binding asks the device to set before a kernel accumulates (a memset of
    // the tensor's bytes; fill_ with the value converted to the element type)
    Tensor& zero_() {
        std::memset(data_ptr(), 0, (size_t)nbytes());
        return *this;
    }
    Tensor& fill_(double v) {
        uint8_t* p = (uint8_t*)data_ptr();
        for (int64_t i = 0; i < numel(); i++) store_as(scalar_type(), p + i * element_size(), v);
        return *this;
    }

  private:
    std::shared_ptr<TensorImpl> impl_;
    const TensorImpl* need(const char* api) const {
        if (!impl_) host_fail(api, "an undefined tensor");
        return impl_.get();
    }
    size_t wrap_dim(int64_t i, const char* api) const {
        int64_t n = dim();
        if (i < -n || i >= n) host_fail(api, "dimension " + std::to_string(i) + " of a " + std::to_string(n) +
                                        "-dimensional tensor");
        return (size_t)(i < 0 ? i + n : i);
    }
};

inline Tensor new_tensor(IntArrayRef sizes, TensorOptions o, bool poison, const char* what) {
    ScalarType t = o.has_dtype() ? o.dtype() : ScalarType::Float;
    int64_t n = 1;
    for (int64_t s : sizes) {
        if (s < 0) host_fail(what, "a negative size " + std::to_string(s));
        n *= s;
    }
    void* p = opforge_asc::gm_alloc((uint64_t)n * elementSize(t), what, poison);
    return Tensor::wrap(p, sizes, t);
}
inline Tensor empty(IntArrayRef sizes, TensorOptions o = {}, std::optional<MemoryFormat> = std::nullopt) {
    return new_tensor(sizes, o, true, "at::empty");
}
inline Tensor empty_like(const Tensor& t, TensorOptions o = {}, std::optional<MemoryFormat> = std::nullopt) {
    return new_tensor(t.sizes(), o.has_dtype() ? o : t.options(), true, "at::empty_like");
}
inline Tensor zeros(IntArrayRef sizes, TensorOptions o = {}) {
    Tensor r = new_tensor(sizes, o, false, "at::zeros");
    std::memset(r.data_ptr(), 0, (size_t)r.nbytes());
    return r;
}
inline Tensor zeros_like(const Tensor& t, TensorOptions o = {}) {
    return zeros(t.sizes(), o.has_dtype() ? o : t.options());
}
inline Tensor empty_strided(IntArrayRef sizes, IntArrayRef, TensorOptions o = {}) { return empty(sizes, o); }
}  // namespace at

namespace torch {
using namespace at;
using at::Tensor;
using at::empty;
using at::empty_like;
using at::zeros;
using at::zeros_like;
using c10::Device;
using c10::IntArrayRef;
using c10::ScalarType;
using c10::TensorOptions;
using Dtype = c10::ScalarType;
}  // namespace torch

namespace opforge_host {
// The message of a failed TORCH_CHECK: its arguments streamed together, as PyTorch's macro does.
template <class... A> std::string concat(const A&... a) {
    std::ostringstream os;
    ((os << a), ...);
    return os.str();
}
}  // namespace opforge_host

#define TORCH_CHECK(cond, ...)                                                                                \
    do {                                                                                                      \
        if (!(cond))                                                                                          \
            ::at::host_fail("TORCH_CHECK", "TORCH_CHECK(" #cond ") failed: " + ::opforge_host::concat("", ##__VA_ARGS__)); \
    } while (0)
#define TORCH_INTERNAL_ASSERT(cond, ...) TORCH_CHECK(cond, ##__VA_ARGS__)
#define AT_ASSERT(cond, ...) TORCH_CHECK(cond, ##__VA_ARGS__)
