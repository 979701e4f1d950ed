"""An emulated CUDA library: call a launcher under several thread schedules on guarded copies.

Schedule 0 runs threads and blocks forward, 1 in reverse, 2 and up in seeded shuffles. Each runs
on fresh guarded copies of every tensor (refilled from the tensor; each tensor's copy keeps its
address across calls, see BufferPool); the results must agree bitwise (else RaceError), no guard
may be touched (else OutOfBoundsError), and schedule 0's buffers are written back to the tensors."""
from __future__ import annotations

import ctypes
import re
import threading
from collections import OrderedDict

from opforge.backends.cuda.emulator import limits, locate, state
from opforge.backends.cuda.emulator.buffers import ITEMSIZE, GuardedBuffer, view_offset
from opforge.backends.cuda.emulator.build import build_library
from opforge.backends.cuda.emulator.translate import INVOKE_PREFIX
from opforge.backends.cuda.emulator.errors import BY_CODE, EmulatorError, OutOfBoundsError, RaceError
from opforge.backends.cuda.signature import Launcher, parse_launchers

_SCALAR_CTYPES = {"int32": ctypes.c_int32, "uint32": ctypes.c_uint32, "int64": ctypes.c_int64,
                  "uint64": ctypes.c_uint64, "float32": ctypes.c_float, "float64": ctypes.c_double,
                  "bool": ctypes.c_bool}
_LOADED: dict[str, "EmulatedLibrary"] = {}  # one object (and one lock) per loaded .so
_LOADED_LOCK = threading.Lock()
DEFAULT_TIME_LIMIT_S = 10.0
_FAULT = re.compile(r"^crash: memory fault in (.*) at address (0x[0-9a-f]+) \(a wild pointer, or a stack overflow\)(.*)$")


SEED = [0]  # the shuffled schedules' seed: the verification's, set by the CUDA plugin's start_run


def set_seed(seed: int) -> None:
    """Every later call's shuffles follow `seed` (a run job's seed; each verification's differs)."""
    SEED[0] = int(seed) & ((1 << 63) - 1)


WARPS_AHEAD = 3  # emu_sched.h's kWarpsAhead: each warp runs as far as it can before the next starts
SCHEDULES = 4  # forward, reverse, a seeded shuffle, warps ahead


def schedule_name(schedule: int, seed: int) -> str:
    if schedule == WARPS_AHEAD:
        return "warps-ahead"
    shuffle = schedule - 1 if schedule < WARPS_AHEAD else schedule - 2
    return ("forward", "reverse")[schedule] if schedule < 2 else f"shuffle {shuffle} (seed {seed})"


class EmulatedLibrary:
    """A CUDA_SRC built for the emulator; `launchers` are its extern "C" functions."""

    def __init__(self, path: str, source: str, build_seconds: float, cached: bool) -> None:
        self.path, self.source = path, source
        self.build_seconds, self.cached = build_seconds, cached
        self.launchers: dict[str, Launcher] = parse_launchers(source)
        self._lib = ctypes.CDLL(path)
        self._lib.opforge_emu_configure.argtypes = [ctypes.c_int, ctypes.c_ulonglong, ctypes.c_double]
        self._lib.opforge_emu_error.argtypes = [ctypes.c_char_p, ctypes.c_int]
        self._lib.opforge_emu_float_atomic_spread.restype = ctypes.c_double
        self._lock = threading.Lock()
        self._pool = BufferPool()
        self._functions = {name: self._function(launcher) for name, launcher in self.launchers.items()}

    @classmethod
    def build(cls, source: str, cache_dir: str | None = None) -> "EmulatedLibrary":
        built = build_library(source, cache_dir)
        with _LOADED_LOCK:
            if built.path not in _LOADED:
                _LOADED[built.path] = cls(built.path, source, built.seconds, built.cached)
                limits.apply(_LOADED[built.path])  # ptxas's numbers for the launch-resource model
            library = _LOADED[built.path]
        return library if not built.cached or library.cached else _cached_view(library)

    def _function(self, launcher: Launcher):
        fn = getattr(self._lib, INVOKE_PREFIX + launcher.name)
        fn.argtypes = [ctypes.c_void_p]
        fn.restype = ctypes.c_int
        return fn

    def call(self, name: str, args: list, *, schedules: int = SCHEDULES, seed: int | None = None,
             time_limit_s: float = DEFAULT_TIME_LIMIT_S) -> None:
        """Run launcher `name` on `args` (tensors for pointers, numbers for scalars, no stream); the
        shuffled schedules follow `seed`, by default the verification's (set_seed)."""
        seed = SEED[0] if seed is None else seed
        launcher = self.launchers.get(name)
        if launcher is None:
            raise EmulatorError(f"arguments: no launcher {name} (launchers: {', '.join(self.launchers) or 'none'})")
        if schedules < 1 or not time_limit_s > 0:
            raise EmulatorError("arguments: schedules must be at least 1 and time_limit_s positive")
        bound = _Bound(launcher, args)
        with self._lock:
            state.note_call(self)
            # Every schedule runs in the same place (a GPU's memory: the addresses a pointer-keyed
            # __device__ cache would see); the first schedule's results are kept aside to compare.
            device = bound.run(self, 0, seed, time_limit_s, bound.buffers(self._pool, "device"))
            bound.check_const(device)
            first = device
            if schedules > 1:
                first = bound.buffers(self._pool, "first")
                for kept, buffer in zip(first, device):
                    kept.copy_from(buffer)
            spread = self._float_atomic_spread()
            for schedule in range(1, schedules):
                bound.run(self, schedule, seed, time_limit_s, device)
                spread = max(spread, self._float_atomic_spread())
                bound.compare(first, device, schedule_name(schedule, seed), self._float_atomics(), spread)
            state.check_call(self, bound, device, schedules - 1, seed, time_limit_s)  # static storage
            bound.write_back(first)

    def _run_once(self, launcher: Launcher, values: list, schedule: int, seed: int, time_limit_s: float) -> None:
        self._lib.opforge_emu_configure(schedule, seed, time_limit_s)
        cells = [ctypes.c_void_p(v) if p.kind != "scalar" else _SCALAR_CTYPES[p.ctype](v)
                 for p, v in zip(launcher.params, values + [None])]
        pointers = (ctypes.c_void_p * len(cells))(*[ctypes.addressof(c) for c in cells])
        self._functions[launcher.name](pointers)
        message = ctypes.create_string_buffer(1024)
        code = self._lib.opforge_emu_error(message, len(message))
        if code:
            text = message.value.decode(errors="replace")
            raise limits.noted(BY_CODE.get(code, EmulatorError)(
                f"{text} (launcher {launcher.name}, {schedule_name(schedule, seed)} schedule)"))

    def _float_atomics(self) -> bool:
        return bool(self._lib.opforge_emu_float_atomics())

    def _float_atomic_spread(self) -> float:
        return float(self._lib.opforge_emu_float_atomic_spread())


# Float atomics commit in schedule order, as on a GPU, so sums may differ in their last bits from
# schedule to schedule: such a buffer may differ by rounding, never by more. Rounding is bounded two
# ways, the larger one holding: relative to the buffer's largest magnitude (a value computed from an
# atomic sum), and by the atomics themselves, ATOMIC_SPREAD type epsilons of the run's spread
# (sqrt(adds) times the largest magnitude at one address: a sum of large terms that cancels to a
# small result keeps the terms' rounding). The judge still compares with the reference at the
# spec's tolerance.
ATOMIC_ROUNDING = 1e-5
ATOMIC_SPREAD = 4.0
_EPSILON = {"float32": 2.0 ** -23, "float64": 2.0 ** -52, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}


def _rounding_only(ref: GuardedBuffer, got: GuardedBuffer, ctype: str, spread: float = 0.0) -> bool:
    import torch

    dtype = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
             "bfloat16": torch.bfloat16}.get(ctype)
    if dtype is None:
        return False
    a, b = (torch.frombuffer((ctypes.c_char * x.nbytes).from_address(x.address), dtype=dtype).double()
            for x in (ref, got))
    if not torch.equal(torch.isnan(a), torch.isnan(b)):
        return False
    a, b = torch.nan_to_num(a), torch.nan_to_num(b)
    scale = max(float(a.abs().max()), float(b.abs().max()), 1e-30)
    bits = {torch.float16: 1e-3, torch.bfloat16: 8e-3}.get(dtype, ATOMIC_ROUNDING)
    return float((a - b).abs().max()) <= max(bits * scale, ATOMIC_SPREAD * _EPSILON[ctype] * spread)


class BufferPool:
    """Guarded buffers kept per (launcher, argument place), size and role across calls, so an
    argument keeps its device address from call to call as it does on a GPU, where the caching
    allocator hands a loop's same-sized tensors the same memory: a kernel that caches results in
    __device__ memory keyed by an input pointer then hits its cache here too, and the harness's
    repeated calls with new data see the stale output. Bounded: 64 buffers or 1 GiB, oldest dropped."""

    def __init__(self, max_buffers: int = 64, max_bytes: int = 1 << 30) -> None:
        self._buffers: OrderedDict = OrderedDict()
        self.max_buffers, self.max_bytes = max_buffers, max_bytes

    def take(self, place: tuple, nbytes: int, role: str, offset: int = 0) -> GuardedBuffer:
        key = (place, nbytes, role, offset)
        buffer = self._buffers.pop(key, None) or GuardedBuffer(nbytes, offset)
        self._buffers[key] = buffer
        while len(self._buffers) > self.max_buffers or (
                len(self._buffers) > 1 and sum(b.nbytes for b in self._buffers.values()) > self.max_bytes):
            self._buffers.popitem(last=False)
        return buffer


def _cached_view(library: EmulatedLibrary) -> EmulatedLibrary:
    """The loaded library, reporting that this build came from the cache."""
    view = object.__new__(EmulatedLibrary)
    view.__dict__.update(library.__dict__, build_seconds=0.0, cached=True)
    return view


class _Bound:
    """A launcher's arguments: distinct tensors (one buffer each, shared by aliases) and scalars."""

    def __init__(self, launcher: Launcher, args: list) -> None:
        params = [p for p in launcher.params if p.kind != "stream"]
        if len(args) != len(params):
            raise EmulatorError(f"arguments: {launcher.name} takes {len(params)} arguments "
                                f"({', '.join(p.name for p in params)}), got {len(args)}")
        self.launcher, self.params, self.args = launcher, params, list(args)
        self.tensors: list = []  # (tensor, name, ctype, writes)
        self.slots: list = []  # per parameter: index into tensors, or None for a scalar
        for param, value in zip(params, args):
            self.slots.append(self._bind(param, value) if param.kind == "pointer" else _check_scalar(launcher, param, value))

    def _bind(self, param, tensor) -> int:
        _check_tensor(self.launcher, param, tensor)
        start, size = tensor.data_ptr(), tensor.numel() * tensor.element_size()
        for i, (other, name, ctype, writes) in enumerate(self.tensors):
            o_start, o_size = other.data_ptr(), other.numel() * other.element_size()
            if size and o_size and start == o_start and size == o_size:
                self.tensors[i] = (other, name, ctype, writes or not param.const)
                return i
            if size and o_size and start < o_start + o_size and o_start < start + size:
                raise EmulatorError(f"arguments: {self.launcher.name}: {param.name} and {name} overlap partially")
        self.tensors.append((tensor, param.name, param.ctype, not param.const))
        return len(self.tensors) - 1

    def buffers(self, pool: "BufferPool", role: str) -> list[GuardedBuffer]:
        # Keyed by the launcher and the argument's place, not the host tensor's address: a GPU's
        # caching allocator hands a loop's same-sized allocations the same address call after call.
        return [pool.take((self.launcher.name, i), t.numel() * t.element_size(), role, view_offset(t))
                for i, (t, *_) in enumerate(self.tensors)]

    def run(self, library: EmulatedLibrary, schedule: int, seed: int, limit: float, buffers: list) -> list:
        for buffer, (tensor, *_) in zip(buffers, self.tensors):
            buffer.load(tensor.data_ptr())
        values = [buffers[slot].address if p.kind == "pointer" else slot for p, slot in zip(self.params, self.slots)]
        ranges = [v for b in buffers for v in (b.address, b.nbytes)]
        library._lib.opforge_emu_set_buffers((ctypes.c_ulonglong * len(ranges))(*ranges), len(buffers))
        readonly = [i for i, (*_, writes) in enumerate(self.tensors) if not writes]
        library._lib.opforge_emu_set_readonly((ctypes.c_int * max(len(readonly), 1))(*readonly), len(readonly))
        try:
            library._run_once(self.launcher, values, schedule, seed, limit)
        except EmulatorError as e:
            raise self._located(type(e)(locate.explain(str(e), library.path, self.tensors)), buffers) from None
        for buffer, (_, name, _, _) in zip(buffers, self.tensors):
            where = buffer.overrun()
            if where:
                raise OutOfBoundsError(f"out-of-bounds: a write {where} of argument {name} "
                                       f"(launcher {self.launcher.name}, {schedule_name(schedule, seed)} schedule)")
        return buffers

    def _located(self, error: EmulatorError, buffers: list) -> EmulatorError:
        """A memory fault in a buffer's fence is an out-of-bounds access of that argument."""
        m = _FAULT.match(str(error))
        for buffer, (_, name, _, _) in zip(buffers, self.tensors):
            where = buffer.fence_hit(int(m.group(2), 16)) if m else None
            if where:
                return OutOfBoundsError(f"out-of-bounds: a read or write {where} of argument {name} in {m.group(1)}"
                                        f"{m.group(3)}")
        return error

    def compare(self, reference: list, work: list, label: str, float_atomics: bool, spread: float = 0.0) -> None:
        for ref, got, (_, name, ctype, _) in zip(reference, work, self.tensors):
            if ref.same_as(got) or float_atomics and _rounding_only(ref, got, ctype, spread):
                continue
            index = got.first_difference(ref) // ITEMSIZE[ctype]
            note = ("; the kernel uses floating-point atomics, whose order changes the rounding"
                    if float_atomics else "")
            raise RaceError(f"race: result depends on the thread schedule ({label} differs from forward in "
                            f"argument {name} at element {index}: {got.element(index, ctype)!r} vs "
                            f"{ref.element(index, ctype)!r}; launcher {self.launcher.name}){note}")

    def check_const(self, reference: list) -> None:
        """A kernel must not write into a buffer every parameter of which is const."""
        for buffer, (tensor, name, _, writes) in zip(reference, self.tensors):
            if not writes and not buffer.same_as_address(tensor.data_ptr()):
                raise EmulatorError(f"const-write: launcher {self.launcher.name} changed argument {name}, "
                                    f"which it takes as const (a write through a cast-away const pointer)")

    def write_back(self, reference: list) -> None:
        for buffer, (tensor, _, _, writes) in zip(reference, self.tensors):
            if writes:
                buffer.store(tensor.data_ptr())


def _check_tensor(launcher: Launcher, param, tensor) -> None:
    import torch

    where = f"arguments: {launcher.name}: {param.name}"
    if not isinstance(tensor, torch.Tensor):
        raise EmulatorError(f"{where} is a {param.ctype} pointer; pass a tensor, not {type(tensor).__name__}")
    if tensor.device.type != "cpu":
        raise EmulatorError(f"{where} is on {tensor.device}; the emulator runs CPU tensors")
    if str(tensor.dtype) != f"torch.{param.ctype}":
        raise EmulatorError(f"{where} is {str(tensor.dtype)[6:]}, but the launcher takes {param.ctype}*")
    if not tensor.is_contiguous():
        raise EmulatorError(f"{where} is not contiguous")


def _check_scalar(launcher: Launcher, param, value):
    where = f"arguments: {launcher.name}: {param.name}"
    integral = param.ctype not in ("float32", "float64")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (integral and not isinstance(value, int)):
        if not (param.ctype == "bool" and isinstance(value, bool)):
            raise EmulatorError(f"{where} is a {param.ctype} scalar; got {value!r}")
    return value
