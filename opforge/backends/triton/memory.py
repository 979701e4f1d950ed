"""The CPU run's memory model for Triton and Triton-Ascend: programs are concurrent, memory has bounds.

Triton's interpreter (and triton-ascend's copy of it) runs a launch's programs one after another in
grid order and dereferences whatever address a pointer holds. A GPU or NPU runs the programs
concurrently and faults (or corrupts another tensor) outside an allocation. Installed in the CPU
run's worker (both plugins' prepare_worker, before the guards' snapshot), this module makes the
interpreted run answer for what hardware would do:

- **bounds**: every load, store and atomic (atomic load/store/poll, tensor-descriptor and block-pointer
  accesses go through the same builder calls) is checked, before it touches memory, against the
  storages of the launch's tensor arguments; outside them it raises `out-of-bounds` with the kernel,
  the access, how many elements and where (`+1 element past the end of argument 2 (out, 1023 elements)`);
- **races**: each program's accesses are recorded per launch (addresses, program, kind, the bytes
  read or written, atomics' memory semantics); at the end of the launch backends/triton/races.py
  finds two programs touching one address, one writing, with no happens-before through atomics
  between them and different bytes: a `race`;
- **orders**: the k-th program a launch runs is perm[k], the permutation rotating per launch through
  grid order, reverse and a shuffle seeded from the verification's seed, so the trials and the
  repeated calls run in different orders (the judge compares repeated calls bitwise: `order-dependent`).

What is not modelled: programs still run one at a time to completion, so a program spinning on a
flag that a program not yet run would set spins for ever (on hardware it may deadlock as well); two
accesses overlapping at different start addresses (mixed element sizes on one buffer) are compared
by start address only; volatile loads are plain loads.
"""
from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from opforge.backends.triton.races import ATOMIC, ATOMIC_LOAD, LOAD, STORE, TOP, LaunchRaces

ORDERS = ("grid", "reverse", "shuffle")

# What the next draft is told for each finding (both plugins' reason_hints), by the reason's code.
HINTS = {
    "out-of-bounds": "A load or store reached past a tensor's storage: mask every access with the real "
                     "length (offs < n), including the tail block of an odd size, and the `other=` of masked loads.",
    "race": "Programs run concurrently on the device: a program must not read what another program stores "
            "in the same launch. Give each program its own output, split dependent steps into separate "
            "launches, or order them with an atomic counter (tl.atomic_add returning the ticket; the program "
            "that draws n-1 combines the others' results) -- never by program id.",
    "order-dependent": "The result changed with the order the programs ran in: remove reads of other programs' "
                       "writes within a launch (see `race`), and accumulate floats in a fixed order.",
}

SEED = 0  # the verification's seed (set_seed, from the run job's data)
LAUNCHES = 0  # interpreted launches in this process: the order rotates with it
FINDINGS: list[str] = []  # what the launches since the last take() violated
FLOAT_ATOMICS = False  # since the last take(): a float atomic add ran (results may differ by order)
ORDERS_RUN: list[str] = []  # since the last take(): the order of each launch
INSTALLED = False
_current: "Launch | None" = None



class MemoryModelError(RuntimeError):
    """An access hardware would not make as the CPU run made it: raised in the candidate's forward."""


def set_seed(seed: Any) -> None:
    global SEED
    try:
        SEED = int(seed) & 0xFFFFFFFF
    except (TypeError, ValueError):
        SEED = 0


def reason_hints(reasons: list[str]) -> list[str]:
    codes = dict.fromkeys(r.split(":", 1)[0] for r in reasons)
    return [HINTS[c] for c in codes if c in HINTS]


def start_run(data: dict) -> None:
    """The run job's data is loaded: its seed orders the shuffled launches (a plugin's start_run)."""
    models = data.get("models") or [{}]
    set_seed(models[0].get("seed", 0) if isinstance(models[0], dict) else 0)


def findings() -> dict:
    """A plugin's call_findings: what the calls' launches found, only the parts there are."""
    if not INSTALLED:
        return {}
    found = take()
    return {k: v for k, v in found.items() if v}


def take() -> dict:
    """What the launches since the last call found (a run job asks after each forward call)."""
    global FLOAT_ATOMICS
    found = {"memory": list(dict.fromkeys(FINDINGS))[:4], "float_atomics": FLOAT_ATOMICS,
             "orders": sorted(set(ORDERS_RUN))}
    FINDINGS.clear()
    ORDERS_RUN.clear()
    FLOAT_ATOMICS = False
    return found


def _fail(reason: str) -> MemoryModelError:
    FINDINGS.append(reason)
    return MemoryModelError(reason)


def _tensors(value: Any, found: list) -> None:
    if hasattr(value, "untyped_storage"):
        found.append(value)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _tensors(item, found)
    elif hasattr(value, "base") and hasattr(value, "block_shape"):  # a host TensorDescriptor
        _tensors(value.base, found)


class Launch(LaunchRaces):
    """One interpreted launch: its arguments' storages, its order and its programs' accesses."""

    def __init__(self, kernel: str, named: list[tuple[int, str, Any]]) -> None:
        self.kernel = kernel
        spans: dict[int, tuple[int, int, str]] = {}
        for position, name, value in named:
            found: list = []
            _tensors(value, found)
            for tensor in found:
                storage = tensor.untyped_storage()
                lo, size = storage.data_ptr(), storage.nbytes()
                if size and lo not in spans:
                    spans[lo] = (lo, lo + size, f"argument {position} ({name}")
        ordered = sorted(spans.values())
        self.lo = np.array([s[0] for s in ordered], dtype=np.uint64)
        self.hi = np.array([s[1] for s in ordered], dtype=np.uint64)
        self.labels = [s[2] for s in ordered]
        self.ops: list[tuple] = []  # (kind, program, seq, addresses, mask, values, old, size, span)
        self.events: list[tuple] = []  # atomics: (seq, program, unique addresses, acquire, release)
        self.written: set[int] = set()  # spans a store or atomic touched (-1: an access across spans)
        self.before: dict[int, np.ndarray] = {}  # span -> its bytes before the launch first wrote it
        self.seq = 0
        self.program = 0
        self.dims = (1, 1, 1)
        self.perm: np.ndarray | None = None
        self.order = ORDERS[0]
        self.calls = 0
        self.atomic: Any = None  # the memory semantic of the atomic load/store in progress, if any

    # -- order --------------------------------------------------------------------------------
    def start(self, dims: tuple[int, int, int]) -> None:
        global LAUNCHES
        self.dims, self.calls = dims, 0
        n = dims[0] * dims[1] * dims[2]
        self.order = ORDERS[LAUNCHES % len(ORDERS)]
        LAUNCHES += 1
        ORDERS_RUN.append(self.order)
        if self.order == "reverse":
            self.perm = np.arange(n - 1, -1, -1)
        elif self.order == "shuffle":
            self.perm = np.random.default_rng([SEED, LAUNCHES]).permutation(n)
        else:
            self.perm = None

    def next_program(self, x: int, y: int, z: int) -> tuple[int, int, int]:
        _, ny, nz = self.dims
        k = self.calls
        self.calls += 1
        linear = (x * ny + y) * nz + z
        if self.perm is not None and k < len(self.perm):
            linear = int(self.perm[k])
        self.program = linear
        x, rest = divmod(linear, ny * nz)
        y, z = divmod(rest, nz)
        return x, y, z

    def program_name(self, linear: int) -> str:
        _, ny, nz = self.dims
        if ny * nz == 1:
            return f"program {linear}"
        x, rest = divmod(linear, ny * nz)
        return f"program ({x}, {rest // nz}, {rest % nz})"

    # -- bounds -------------------------------------------------------------------------------
    def check(self, addresses: Any, mask: Any, size: int, what: str) -> tuple[np.ndarray, Any, int]:
        """The addresses, the mask (None: all) and the span holding every accessed address (-1:
        several, -2: none accessed); raises out-of-bounds before the access when any lies outside
        every argument's storage."""
        addresses = np.asarray(addresses)
        if mask is not None:
            mask = np.asarray(mask, dtype=bool)
            if mask.all():
                mask = None
            elif mask.shape != addresses.shape:
                mask = np.broadcast_to(mask, addresses.shape)
        if mask is None:
            low, high = addresses.min(), addresses.max()
        else:
            low = addresses.min(initial=TOP, where=mask)
            high = addresses.max(initial=0, where=mask)
            if low > high:
                return addresses, mask, -2
        span = int(self.lo.searchsorted(low, "right")) - 1
        if span >= 0 and high + np.uint64(size) <= self.hi[span]:
            return addresses, mask, span
        picked = addresses.reshape(-1) if mask is None else addresses[mask]
        where = self.lo.searchsorted(picked, "right").astype(np.int64) - 1
        inside = (where >= 0) & (picked + np.uint64(size) <= self.hi[np.maximum(where, 0)])
        if not inside.all():
            raise _fail(self._outside(picked[~inside], where[~inside], size, what))
        return addresses, mask, -1

    def writing(self, span: int) -> None:
        """Before the first write of the launch into a span: keep its bytes (what a store replaced)."""
        if span == -2:
            return
        for i in (range(len(self.lo)) if span == -1 else (span,)):
            if i not in self.before:
                lo, hi = int(self.lo[i]), int(self.hi[i])
                self.before[i] = np.frombuffer(ctypes.string_at(lo, hi - lo), dtype=np.uint8)

    def _outside(self, bad: np.ndarray, where: np.ndarray, size: int, what: str) -> str:
        address, below = int(bad[0]), int(where[0])
        places = []
        if below >= 0:
            past = address + size - int(self.hi[below])
            places.append((past, f"+{-(-past // size)} element{'s' if past > size else ''} past the end of "
                                 f"{self.labels[below]}, {(int(self.hi[below]) - int(self.lo[below])) // size} "
                                 "elements)"))
        if below + 1 < len(self.lo):
            before = int(self.lo[below + 1]) - address
            places.append((before, f"{-(-before // size)} element{'s' if before > size else ''} before the start "
                                   f"of {self.labels[below + 1]}, "
                                   f"{(int(self.hi[below + 1]) - int(self.lo[below + 1])) // size} elements)"))
        place = min(places)[1] if places else "no tensor argument at all"
        return (f"out-of-bounds: kernel {self.kernel}: a {what} by {self.program_name(self.program)} touched "
                f"{bad.size} element{'s' if bad.size != 1 else ''} outside every tensor argument of the launch, "
                f"the first {place} (mask the tail: tl.load/tl.store(..., mask=offs < n))")

    # -- recording ----------------------------------------------------------------------------
    def record(self, kind: int, addresses: np.ndarray, mask: Any, span: int, size: int, values: Any = None) -> None:
        """One access (kept as the arrays it was made of: masked only at the end, if needed)."""
        self.seq += 1
        if span == -2:
            return
        if kind in (STORE, ATOMIC):
            self.written.add(span)
        self.ops.append((kind, self.program, self.seq, addresses, mask, values, size, span))

    def record_atomic(self, addresses: np.ndarray, mask: Any, span: int, size: int, sem: Any, read: bool,
                      written: bool) -> None:
        acquire, release = _SEMANTICS.get(sem, (True, True))
        self.record(ATOMIC if written else ATOMIC_LOAD, addresses, mask, span, size)
        if span != -2 and (acquire and read or release and written):
            picked = addresses.reshape(-1) if mask is None else addresses[mask]
            self.events.append((self.seq, self.program, np.unique(picked), acquire and read, release and written))

_SEMANTICS: dict = {}


def _size(handle: Any) -> int:
    return max(1, handle.get_element_ty().primitive_bitwidth // 8)


def install(interpreter: Any = None) -> bool:
    """Hook the interpreter's launch, program and memory calls once (both Tritons' interpreters
    have the same ones)."""
    global INSTALLED
    if INSTALLED:
        return True
    if interpreter is None:
        from triton.runtime import interpreter
    from triton._C.libtriton import ir

    sem = ir.MEM_SEMANTIC
    _SEMANTICS.update({sem.RELAXED: (False, False), sem.ACQUIRE: (True, False), sem.RELEASE: (False, True),
                       sem.ACQUIRE_RELEASE: (True, True)})
    fadd = ir.ATOMIC_OP.FADD
    executor = interpreter.GridExecutor
    builder = type(interpreter.interpreter_builder)
    call, init_args = executor.__call__, executor._init_args_hst
    set_dim, set_idx = builder.set_grid_dim, builder.set_grid_idx
    load, store = builder.create_masked_load, builder.create_masked_store
    rmw, cas = builder.create_atomic_rmw, builder.create_atomic_cas
    atomic_load = getattr(builder, "create_atomic_load", None)
    atomic_store = getattr(builder, "create_atomic_store", None)
    atomic_poll = getattr(builder, "create_atomic_poll", None)

    def __call__(self, *args, **kwargs):
        global _current
        try:
            result = call(self, *args, **kwargs)
            launch = _current
            if launch is not None and (found := launch.races()):
                raise _fail(found)
            return result
        finally:
            _current = None

    def _init_args_hst(self, args_dev, kwargs):
        global _current
        args_hst, kwargs_hst = init_args(self, args_dev, kwargs)
        names = list(getattr(self, "arg_names", []) or [])
        named = [(i, names[i] if i < len(names) else f"#{i}", a) for i, a in enumerate(args_hst)]
        named += [(names.index(k) if k in names else len(names), k, v) for k, v in kwargs_hst.items()]
        _current = Launch(getattr(self.fn, "__name__", "kernel"), named)
        return args_hst, kwargs_hst

    def set_grid_dim(self, nx, ny, nz):
        if _current is not None:
            _current.start((int(nx), int(ny), int(nz)))
        return set_dim(self, nx, ny, nz)

    def set_grid_idx(self, x, y, z):
        if _current is not None:
            x, y, z = _current.next_program(x, y, z)
        return set_idx(self, x, y, z)

    def create_masked_load(self, ptrs, mask, other, *rest):
        launch = _current
        if launch is None:
            return load(self, ptrs, mask, other, *rest)
        size = _size(ptrs)
        what = "load" if launch.atomic is None else "atomic load"
        addresses, lanes, span = launch.check(ptrs.data, None if mask is None else mask.data, size, what)
        result = load(self, ptrs, mask, other, *rest)
        if launch.atomic is not None:
            launch.record_atomic(addresses, lanes, span, size, launch.atomic, True, False)
        else:
            launch.record(LOAD, addresses, lanes, span, size, result.data)
        return result

    def create_masked_store(self, ptrs, value, mask, *rest):
        launch = _current
        if launch is None:
            return store(self, ptrs, value, mask, *rest)
        size = _size(ptrs)
        what = "store" if launch.atomic is None else "atomic store"
        addresses, lanes, span = launch.check(ptrs.data, None if mask is None else mask.data, size, what)  # first
        launch.writing(span)
        result = store(self, ptrs, value, mask, *rest)
        if launch.atomic is not None:
            launch.record_atomic(addresses, lanes, span, size, launch.atomic, False, True)
        else:
            launch.record(STORE, addresses, lanes, span, size, value.data)
        return result

    def create_atomic_rmw(self, op, ptr, val, mask, sem, *rest):
        global FLOAT_ATOMICS
        launch = _current
        if launch is None:
            return rmw(self, op, ptr, val, mask, sem, *rest)
        size = _size(ptr)
        addresses, lanes, span = launch.check(ptr.data, None if mask is None else mask.data, size, "atomic")
        launch.writing(span)
        result = rmw(self, op, ptr, val, mask, sem, *rest)
        FLOAT_ATOMICS = FLOAT_ATOMICS or op == fadd
        launch.record_atomic(addresses, lanes, span, size, sem, True, True)
        return result

    def create_atomic_cas(self, ptr, cmp, val, sem, *rest):
        launch = _current
        if launch is None:
            return cas(self, ptr, cmp, val, sem, *rest)
        size = _size(ptr)
        addresses, lanes, span = launch.check(ptr.data, None, size, "atomic")
        launch.writing(span)
        result = cas(self, ptr, cmp, val, sem, *rest)
        launch.record_atomic(addresses, lanes, span, size, sem, True, True)
        return result

    def _atomic_access(original):
        def access(self, ptr, *args):
            launch = _current
            sem = args[-2]  # (..., sem, scope) in every one of them
            if launch is None:
                return original(self, ptr, *args)
            launch.atomic = sem
            try:
                return original(self, ptr, *args)
            finally:
                launch.atomic = None

        return access

    executor.__call__, executor._init_args_hst = __call__, _init_args_hst
    builder.set_grid_dim, builder.set_grid_idx = set_grid_dim, set_grid_idx
    builder.create_masked_load, builder.create_masked_store = create_masked_load, create_masked_store
    builder.create_atomic_rmw, builder.create_atomic_cas = create_atomic_rmw, create_atomic_cas
    for name, original in (("create_atomic_load", atomic_load), ("create_atomic_store", atomic_store),
                           ("create_atomic_poll", atomic_poll)):
        if original is not None:
            setattr(builder, name, _atomic_access(original))
    INSTALLED = True
    return True
