// opforge AscendC emulator: tensors, the pipe and its queues, synchronisation, block indices.
// Queues follow the documented positions: a VECIN queue is filled by MTE2 and read by V, a VECOUT queue filled by V
// and read by MTE3, VECCALC by V alone; EnQue sets the producer->consumer flag and DeQue waits on it, FreeTensor sets
// consumer->producer and the buffer's next AllocTensor waits on it (asc_core.h's clocks).
#pragma once
#include "asc_core.h"
#include "asc_types.h"

// pipes and event ids are the compiler's own names in CANN: global
enum pipe_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_MTE4, PIPE_MTE5, PIPE_V2,
              PIPE_FIX };
enum event_t : int32_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };

namespace AscendC {
using opforge_asc::Loc;

enum class TPosition : uint8_t { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM,
                                 SHM = SPM, TSCM, C2PIPE2GM, C2PIPE2LOCAL, MAX };
using QuePosition = TPosition;

enum class HardEvent : uint8_t { MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, MTE2_V, V_MTE2, MTE3_V, V_MTE3, M_V, V_M, V_V,
                                 MTE3_MTE1, MTE1_MTE3, MTE1_V, MTE2_M, M_MTE2, V_MTE1, M_FIX, FIX_M, MTE3_MTE2,
                                 MTE2_MTE3, S_V, V_S, S_MTE2, MTE2_S, S_MTE3, MTE3_S, MTE2_FIX, FIX_MTE2, FIX_S, M_S,
                                 FIX_MTE3, MAX };
using TEventID = int32_t;
using ::pipe_t;  // the compiler's names, global in CANN; AscendC::PIPE_V names the same enumerator
using ::PIPE_S, ::PIPE_V, ::PIPE_M, ::PIPE_MTE1, ::PIPE_MTE2, ::PIPE_MTE3, ::PIPE_ALL, ::PIPE_FIX;
using ::event_t;
using ::EVENT_ID0, ::EVENT_ID1, ::EVENT_ID2, ::EVENT_ID3, ::EVENT_ID4, ::EVENT_ID5, ::EVENT_ID6, ::EVENT_ID7;

using half = opforge_asc::half;  // the same types as the global names kernels use
using bfloat16_t = opforge_asc::bf16;

// pipe_t / HardEvent -> the emulator's pipes (-1: a cube pipe, not modelled)
inline int pipe_of(pipe_t p) {
    switch (p) {
        case PIPE_S: return opforge_asc::P_S;
        case PIPE_V: return opforge_asc::P_V;
        case PIPE_MTE2: return opforge_asc::P_MTE2;
        case PIPE_MTE3: return opforge_asc::P_MTE3;
        default: return -1;
    }
}
inline bool event_pipes(HardEvent e, int& src, int& dst) {
    using namespace opforge_asc;
    switch (e) {
        case HardEvent::MTE2_V: src = P_MTE2, dst = P_V; return true;
        case HardEvent::V_MTE2: src = P_V, dst = P_MTE2; return true;
        case HardEvent::MTE3_V: src = P_MTE3, dst = P_V; return true;
        case HardEvent::V_MTE3: src = P_V, dst = P_MTE3; return true;
        case HardEvent::V_V: src = P_V, dst = P_V; return true;
        case HardEvent::MTE3_MTE2: src = P_MTE3, dst = P_MTE2; return true;
        case HardEvent::MTE2_MTE3: src = P_MTE2, dst = P_MTE3; return true;
        case HardEvent::S_V: src = P_S, dst = P_V; return true;
        case HardEvent::V_S: src = P_V, dst = P_S; return true;
        case HardEvent::S_MTE2: src = P_S, dst = P_MTE2; return true;
        case HardEvent::MTE2_S: src = P_MTE2, dst = P_S; return true;
        case HardEvent::S_MTE3: src = P_S, dst = P_MTE3; return true;
        case HardEvent::MTE3_S: src = P_MTE3, dst = P_S; return true;
        default: return false;
    }
}
[[noreturn]] inline void cube(const char* api, Loc loc) {
    opforge_asc::fail(opforge_asc::E_UNSUPPORTED, api, loc, "the cube unit (MTE1, M, FIX pipes, L0/L1 positions) is "
                      "not modelled by the emulator");
}

template <HardEvent E> inline void SetFlag(int32_t id, Loc loc = Loc::here()) {
    int s, d;
    if (!event_pipes(E, s, d)) cube("SetFlag", loc);
    opforge_asc::step("SetFlag", loc);
    opforge_asc::set_flag(s, d, (uint32_t)id);
}
template <HardEvent E> inline void WaitFlag(int32_t id, Loc loc = Loc::here()) {
    int s, d;
    if (!event_pipes(E, s, d)) cube("WaitFlag", loc);
    opforge_asc::step("WaitFlag", loc);
    opforge_asc::wait_flag(s, d, (uint32_t)id, "WaitFlag", loc);
}
template <pipe_t P> inline void PipeBarrier(Loc loc = Loc::here()) {
    if (P != PIPE_ALL && pipe_of(P) < 0) cube("PipeBarrier", loc);
    if (P == PIPE_ALL) opforge_asc::barrier_all();  // a single pipe is in order with itself already
}
inline void pipe_barrier(pipe_t p, Loc loc = Loc::here()) {
    if (p != PIPE_ALL && pipe_of(p) < 0) cube("pipe_barrier", loc);
    if (p == PIPE_ALL) opforge_asc::barrier_all();
}
inline void set_flag(pipe_t src, pipe_t dst, int32_t id, Loc loc = Loc::here()) {
    int s = pipe_of(src), d = pipe_of(dst);
    if (s < 0 || d < 0) cube("set_flag", loc);
    opforge_asc::set_flag(s, d, (uint32_t)id);
}
inline void wait_flag(pipe_t src, pipe_t dst, int32_t id, Loc loc = Loc::here()) {
    int s = pipe_of(src), d = pipe_of(dst);
    if (s < 0 || d < 0) cube("wait_flag", loc);
    opforge_asc::wait_flag(s, d, (uint32_t)id, "wait_flag", loc);
}

// TQueSync<SRC, DST>: SetFlag / WaitFlag between two pipes named by pipe_t
template <pipe_t SRC, pipe_t DST> struct TQueSync {
    void SetFlag(int32_t id, Loc loc = Loc::here()) {
        if (pipe_of(SRC) < 0 || pipe_of(DST) < 0) cube("TQueSync::SetFlag", loc);
        opforge_asc::step("TQueSync::SetFlag", loc);
        opforge_asc::set_flag(pipe_of(SRC), pipe_of(DST), (uint32_t)id);
    }
    void WaitFlag(int32_t id, Loc loc = Loc::here()) {
        if (pipe_of(SRC) < 0 || pipe_of(DST) < 0) cube("TQueSync::WaitFlag", loc);
        opforge_asc::step("TQueSync::WaitFlag", loc);
        opforge_asc::wait_flag(pipe_of(SRC), pipe_of(DST), (uint32_t)id, "TQueSync::WaitFlag", loc);
    }
};

inline int64_t GetBlockIdx() { return opforge_asc::M().block_idx; }
inline int64_t GetBlockNum() { return opforge_asc::M().block_num; }
inline int64_t GetSubBlockIdx() { return 0; }
inline int64_t GetSubBlockNum() { return 1; }
inline int64_t GetTaskRation() { return 1; }

// -- LocalTensor ----------------------------------------------------------------------------------------------
template <typename T> class LocalTensor {
  public:
    using PrimType = T;
    LocalTensor() = default;
    LocalTensor(T* p, uint32_t n) : ptr_(p), size_(n) {}
    T* data_ptr() const { return ptr_; }
    uint32_t GetSize() const { return size_; }
    void SetSize(uint32_t n) { size_ = n; }
    uint32_t GetLength() const { return size_ * sizeof(T); }
    uint64_t GetPhyAddr() const { return opforge_asc::ub_offset(ptr_); }
    uint64_t GetPhyAddr(uint32_t offset) const { return opforge_asc::ub_offset(ptr_ + offset); }
    TPosition GetPosition() const { return TPosition::VECCALC; }
    opforge_asc::Span span(uint64_t first, uint64_t n) const { return {ptr_ + first, n * sizeof(T)}; }
    LocalTensor operator[](uint32_t offset) const {
        return LocalTensor(ptr_ + offset, offset <= size_ ? size_ - offset : 0);
    }
    template <typename U> LocalTensor<U> ReinterpretCast() const {
        return LocalTensor<U>((U*)(void*)ptr_, (uint32_t)((uint64_t)size_ * sizeof(T) / sizeof(U)));
    }
    T GetValue(uint32_t i, Loc loc = Loc::here()) const {
        opforge_asc::scalar_access("LocalTensor::GetValue", loc, span(i, 1), false);
        return ptr_[i];
    }
    template <typename V> void SetValue(uint32_t i, V v, Loc loc = Loc::here()) const {
        opforge_asc::scalar_access("LocalTensor::SetValue", loc, span(i, 1), true);
        ptr_[i] = (T)v;
    }
    // tensor(i): a scalar element access (S pipe), read or assigned
    struct Element {
        const LocalTensor* t;
        uint32_t i;
        Loc loc;
        operator T() const { return t->GetValue(i, loc); }
        template <typename V> Element& operator=(V v) { t->SetValue(i, v, loc); return *this; }
    };
    Element operator()(uint32_t i, Loc loc = Loc::here()) const { return Element{this, i, loc}; }
    void SetUserTag(int32_t t) { tag_ = t; }
    int32_t GetUserTag() const { return tag_; }
    void SetAddrWithOffset(const LocalTensor& src, uint32_t offset) { ptr_ = src.ptr_ + offset; }
    void Print() const {}
    void Print(uint32_t) const {}

  private:
    T* ptr_ = nullptr;
    uint32_t size_ = 0;
    int32_t tag_ = 0;
};

// -- GlobalTensor ---------------------------------------------------------------------------------------------
template <typename T> class GlobalTensor {
  public:
    using PrimType = T;
    void SetGlobalBuffer(__gm__ T* p, uint64_t n) { ptr_ = p, size_ = n; }
    void SetGlobalBuffer(__gm__ T* p) { ptr_ = p, size_ = 0; }
    GlobalTensor operator[](uint64_t offset) const {
        GlobalTensor g;
        g.ptr_ = ptr_ + offset;
        g.size_ = offset <= size_ ? size_ - offset : 0;
        return g;
    }
    T* GetPhyAddr() const { return ptr_; }
    T* GetPhyAddr(uint64_t offset) const { return ptr_ + offset; }
    T* address_() const { return ptr_; }
    uint64_t GetSize() const { return size_; }
    T GetValue(uint64_t i, Loc loc = Loc::here()) const {
        opforge_asc::step("GlobalTensor::GetValue", loc);
        opforge_asc::gm_access(opforge_asc::scalar_issue(false), "GlobalTensor::GetValue", loc, ptr_ + i, sizeof(T),
                               false, false);
        return ptr_[i];
    }
    template <typename V> void SetValue(uint64_t i, V v, Loc loc = Loc::here()) const {
        opforge_asc::step("GlobalTensor::SetValue", loc);
        opforge_asc::gm_access(opforge_asc::scalar_issue(true), "GlobalTensor::SetValue", loc, ptr_ + i, sizeof(T),
                               true, false);
        ptr_[i] = (T)v;
    }
    void SetL2CacheHint(int) {}

  private:
    T* ptr_ = nullptr;
    uint64_t size_ = 0;
};

// -- queues ---------------------------------------------------------------------------------------------------
struct QueueCore {  // what TQue/TQueBind/TBuf share: the buffers InitBuffer gave them
    int id = -1;
    int producer = opforge_asc::P_V, consumer = opforge_asc::P_V;
    std::vector<int> slots;      // indices into the machine's buffers
    std::deque<int> ready;       // enqueued slots, oldest first
    std::deque<opforge_asc::VC> ready_vc;
    uint32_t next = 0;
    Loc init{"", 0};

    opforge_asc::Buffer& buf(int slot) { return opforge_asc::M().buffers[slots[slot]]; }
    int slot_of(const void* p, const char* api, Loc loc) {
        for (size_t i = 0; i < slots.size(); i++) {
            const auto& b = buf((int)i);
            uint32_t off = opforge_asc::ub_offset(p);
            if (off >= b.offset && off < b.offset + b.bytes) return (int)i;
        }
        opforge_asc::fail(opforge_asc::E_BADARG, api, loc, "the tensor is not one of this queue's buffers (InitBuffer "
                          "at line %u)", init.line);
    }
};

inline int queue_pipe(TPosition p, bool producer) {
    using namespace opforge_asc;
    if (p == TPosition::VECIN) return producer ? P_MTE2 : P_V;
    if (p == TPosition::VECOUT) return producer ? P_V : P_MTE3;
    return P_V;
}

template <TPosition SRC, TPosition DST, int32_t DEPTH, auto... MASK> class TQueBind : public QueueCore {
  public:
    TQueBind() {
        producer = SRC == TPosition::GM ? queue_pipe(DST, true) : queue_pipe(SRC, true);
        consumer = DST == TPosition::GM ? queue_pipe(SRC, false) : queue_pipe(DST, false);
        if (SRC == TPosition::VECIN && DST == TPosition::VECOUT) producer = opforge_asc::P_MTE2, consumer = opforge_asc::P_MTE3;
    }
    template <typename T> LocalTensor<T> AllocTensor(Loc loc = Loc::here()) {
        using namespace opforge_asc;
        step("AllocTensor", loc);
        if (slots.empty()) fail(E_BADARG, "AllocTensor", loc, "the queue has no buffers: InitBuffer was not called");
        for (size_t k = 0; k < slots.size(); k++) {
            int s = (int)((next + k) % slots.size());
            Buffer& b = buf(s);
            if (b.state != 0) continue;
            next = (uint32_t)(s + 1);
            b.state = 1;
            issue(producer);
            M().vc[producer].join(b.freed);  // waits for the consumer's FreeTensor of this buffer
            std::memset(M().ub + b.offset, 0xFF, b.bytes);  // what the last tile left: garbage
            return LocalTensor<T>((T*)(M().ub + b.offset), b.bytes / sizeof(T));
        }
        fail(E_DEADLOCK, "AllocTensor", loc, "all %zu buffers of the queue (InitBuffer at line %u) are allocated and "
             "none was freed: on the NPU AllocTensor waits forever (FreeTensor each tile's buffer)", slots.size(),
             init.line);
    }
    template <typename T> void AllocTensor(LocalTensor<T>& out, Loc loc = Loc::here()) { out = AllocTensor<T>(loc); }
    template <typename T> void DeQue(LocalTensor<T>& out, Loc loc = Loc::here()) { out = DeQue<T>(loc); }
    template <TPosition S, TPosition D, typename T> void EnQue(const LocalTensor<T>& t, Loc loc = Loc::here()) {
        EnQue(t, loc);
    }
    template <TPosition S, TPosition D, typename T> LocalTensor<T> DeQue(Loc loc = Loc::here()) { return DeQue<T>(loc); }
    template <typename T> void EnQue(const LocalTensor<T>& t, Loc loc = Loc::here()) {
        using namespace opforge_asc;
        step("EnQue", loc);
        int s = slot_of(t.data_ptr(), "EnQue", loc);
        if (buf(s).state == 0) fail(E_UAF, "EnQue", loc, "the tensor's buffer was freed (FreeTensor) before EnQue");
        if (buf(s).state == 2) fail(E_BADARG, "EnQue", loc, "the tensor is in the queue already");
        buf(s).state = 2;
        issue(producer);  // SetFlag producer -> consumer
        ready.push_back(s);
        ready_vc.push_back(M().vc[producer]);
    }
    template <typename T> bool EnQue(const LocalTensor<T>& t, bool, Loc loc = Loc::here()) { EnQue(t, loc); return true; }
    template <typename T> LocalTensor<T> DeQue(Loc loc = Loc::here()) {
        using namespace opforge_asc;
        step("DeQue", loc);
        if (ready.empty())
            fail(E_DEADLOCK, "DeQue", loc, "the queue (InitBuffer at line %u) is empty: nothing was EnQue'd, so on the "
                 "NPU DeQue waits forever", init.line);
        int s = ready.front();
        ready.pop_front();
        issue(consumer);
        M().vc[consumer].join(ready_vc.front());
        ready_vc.pop_front();
        buf(s).state = 1;
        Buffer& b = buf(s);
        return LocalTensor<T>((T*)(M().ub + b.offset), b.bytes / sizeof(T));
    }
    template <typename T> void FreeTensor(const LocalTensor<T>& t, Loc loc = Loc::here()) {
        using namespace opforge_asc;
        step("FreeTensor", loc);
        int s = slot_of(t.data_ptr(), "FreeTensor", loc);
        Buffer& b = buf(s);
        if (b.state == 0) fail(E_UAF, "FreeTensor", loc, "the buffer was freed already (a double FreeTensor)");
        if (b.state == 2) {  // freed while still queued: drop it from the queue
            for (size_t i = 0; i < ready.size(); i++)
                if (ready[i] == s) { ready.erase(ready.begin() + i); ready_vc.erase(ready_vc.begin() + i); break; }
        }
        b.state = 0;
        issue(consumer);  // SetFlag consumer -> producer
        b.freed = M().vc[consumer];
    }
    bool VacantInQue() const { return ready.size() < (size_t)(DEPTH > 0 ? DEPTH : 1) ; }
    bool HasTensorInQue() const { return !ready.empty(); }
    int32_t GetTensorCountInQue() const { return (int32_t)ready.size(); }
    bool HasIdleBuffer() {
        for (size_t i = 0; i < slots.size(); i++)
            if (buf((int)i).state == 0) return true;
        return false;
    }
    void FreeAllEvent() {}
};

template <TPosition POS, int32_t DEPTH = 1, auto... MASK> class TQue : public TQueBind<POS, POS, DEPTH> {
  public:
    TQue() {
        this->producer = queue_pipe(POS, true);
        this->consumer = queue_pipe(POS, false);
    }
};

template <TPosition POS = TPosition::VECCALC> class TBuf : public QueueCore {
  public:
    template <typename T> LocalTensor<T> Get(Loc loc = Loc::here()) {
        if (slots.empty()) opforge_asc::fail(opforge_asc::E_BADARG, "TBuf::Get", loc, "InitBuffer was not called for this TBuf");
        auto& b = buf(0);
        return LocalTensor<T>((T*)(opforge_asc::M().ub + b.offset), b.bytes / sizeof(T));
    }
    template <typename T> LocalTensor<T> Get(uint32_t n, Loc loc = Loc::here()) {
        LocalTensor<T> t = Get<T>(loc);
        if ((uint64_t)n * sizeof(T) > buf(0).bytes)
            opforge_asc::fail(opforge_asc::E_OOB, "TBuf::Get", loc, "asks for %u elements (%llu bytes) of a TBuf of %u "
                              "bytes", n, (unsigned long long)n * sizeof(T), buf(0).bytes);
        t.SetSize(n);
        return t;
    }
    template <typename T> LocalTensor<T> GetWithOffset(uint32_t n, uint32_t offset, Loc loc = Loc::here()) {
        LocalTensor<T> t = Get<T>(loc);
        if (offset + (uint64_t)n * sizeof(T) > buf(0).bytes)
            opforge_asc::fail(opforge_asc::E_OOB, "TBuf::GetWithOffset", loc, "bytes %u..%llu of a TBuf of %u bytes",
                              offset, (unsigned long long)(offset + (uint64_t)n * sizeof(T)), buf(0).bytes);
        return LocalTensor<T>((T*)((uint8_t*)t.data_ptr() + offset), n);
    }
};

class TPipe;
inline TPipe*& current_pipe() {
    static TPipe* p = nullptr;
    return p;
}

class TPipe {
  public:
    TPipe() { current_pipe() = this; }
    template <class Q> bool InitBuffer(Q& que, uint8_t num, uint32_t len, Loc loc = Loc::here()) {
        return carve(que, num, len, 0, loc);
    }
    template <TPosition P> bool InitBuffer(TBuf<P>& buf, uint32_t len, Loc loc = Loc::here()) {
        return carve(buf, 1, len, 3, loc);
    }
    void Reset() {}
    void Destroy() {}
    template <HardEvent E> TEventID AllocEventID() { return (TEventID)(opforge_asc::M().next_event++ % 8); }
    template <HardEvent E> void ReleaseEventID(TEventID) {}
    TEventID FetchEventID(HardEvent) { return (TEventID)(opforge_asc::M().next_event++ % 8); }
    template <HardEvent E> TEventID FetchEventID() { return (TEventID)(opforge_asc::M().next_event++ % 8); }

  private:
    bool carve(QueueCore& q, uint32_t num, uint32_t len, int state, Loc loc) {
        using namespace opforge_asc;
        Machine& m = M();
        step("InitBuffer", loc);
        if (num == 0 || len == 0)
            fail(E_BADARG, "InitBuffer", loc, "%u buffers of %u bytes: both must be positive", num, len);
        uint32_t each = (len + 31) / 32 * 32;
        uint64_t need = (uint64_t)num * each;
        if (m.ub_used + need > m.target->ub_bytes)
            fail(E_UB, "InitBuffer", loc, "%u buffer(s) of %u bytes need %llu bytes, and %u of the unified buffer's "
                 "%u bytes (%s) are in use already: %llu bytes over", num, each, (unsigned long long)need,
                 m.ub_used, m.target->ub_bytes, m.target->name,
                 (unsigned long long)(m.ub_used + need - m.target->ub_bytes));
        q.init = loc;
        q.id = (int)m.buffers.size();
        for (uint32_t i = 0; i < num; i++) {
            Buffer b;
            b.offset = m.ub_used + i * each;
            b.bytes = each;
            b.state = state;
            b.queue = state == 3 ? -1 : q.id;
            b.init = loc;
            q.slots.push_back((int)m.buffers.size());
            m.buffers.push_back(b);
        }
        m.ub_used += (uint32_t)need;
        return true;
    }
};

inline TPipe* GetTPipePtr() { return current_pipe(); }

}  // namespace AscendC
