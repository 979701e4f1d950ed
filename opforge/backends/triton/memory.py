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
  read or written, atomics' memory semantics). At the end of the launch (numpy: concatenate, sort by
  address) an address that two programs touch, one of them writing (a plain store, or an atomic
  against a plain access), with no happens-before between them, is a `race` -- unless every access
  there carries the same bytes (a store of the value already there, two stores of one value), which
  no order can change. Happens-before comes only from atomics, as on the hardware: a release (an
  RMW/CAS with Triton's default acq_rel, a release atomic store) after the writer's access and an
  acquire (acq_rel RMW/CAS, acquire atomic load or poll) of the same address before the reader's,
  chained through any programs in between (vector clocks, replayed only when a conflict needs them);
  relaxed atomics order nothing;
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

ORDERS = ("grid", "reverse", "shuffle")
RACE_PAIRS_CHUNK = 4_000_000  # pairs examined at once (memory bound of the end-of-launch check)
DENSE_LIMIT = 20_000_000  # sync addresses x clock components held as one array in the replay

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

_TOP = np.iinfo(np.uint64).max
_LOAD, _STORE, _ATOMIC, _ATOMIC_LOAD = 0, 1, 2, 3  # plain: the first two; writes: the middle two
_DID = {_LOAD: "loaded", _STORE: "stored", _ATOMIC: "atomically updated", _ATOMIC_LOAD: "atomically loaded"}


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


def _bytes(values: np.ndarray) -> np.ndarray:
    """Each element's raw bytes as one uint64 (elements of 1, 2, 4 or 8 bytes)."""
    flat = np.ascontiguousarray(values).reshape(-1)
    if flat.dtype.itemsize not in (1, 2, 4, 8):
        return np.frombuffer(flat.tobytes(), dtype=np.uint8).astype(np.uint64)
    return flat.view(f"u{flat.dtype.itemsize}").astype(np.uint64, copy=False)


class Launch:
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
            low = addresses.min(initial=_TOP, where=mask)
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
        if kind in (_STORE, _ATOMIC):
            self.written.add(span)
        self.ops.append((kind, self.program, self.seq, addresses, mask, values, size, span))

    def record_atomic(self, addresses: np.ndarray, mask: Any, span: int, size: int, sem: Any, read: bool,
                      written: bool) -> None:
        acquire, release = _SEMANTICS.get(sem, (True, True))
        self.record(_ATOMIC if written else _ATOMIC_LOAD, addresses, mask, span, size)
        if span != -2 and (acquire and read or release and written):
            picked = addresses.reshape(-1) if mask is None else addresses[mask]
            self.events.append((self.seq, self.program, np.unique(picked), acquire and read, release and written))

    # -- the end of the launch ----------------------------------------------------------------
    def races(self) -> str | None:
        ops = [op for op in self.ops if op[7] in self.written or op[7] == -1]
        if not any(op[0] in (_STORE, _ATOMIC) for op in ops):
            return None
        masked = [a.reshape(-1) if m is None else a[m] for _, _, _, a, m, *_ in ops]
        addr = np.concatenate(masked)
        in_order = np.sort(addr)
        if not (in_order[1:] == in_order[:-1]).any():
            return None  # every address accessed once: nothing to race with
        counts = np.array([a.size for a in masked], dtype=np.int64)
        kind = np.repeat(np.array([op[0] for op in ops], dtype=np.int8), counts)
        prog = np.repeat(np.array([op[1] for op in ops], dtype=np.int64), counts)
        seq = np.repeat(np.array([op[2] for op in ops], dtype=np.int64), counts)
        size = np.repeat(np.array([op[6] for op in ops], dtype=np.int64), counts)
        # the bytes each access carries: a load what it read, a store what it wrote and what was
        # there before the launch wrote it
        low, high, before = [], [], []
        for op, a in zip(ops, masked):
            n = a.size
            if op[0] >= _ATOMIC:  # atomics: never "the same bytes" (their order is checked, not their values)
                low.append(np.zeros(n, dtype=np.uint64))
                high.append(np.full(n, _TOP, dtype=np.uint64))
                before.append(np.zeros(n, dtype=np.uint64))
                continue
            values = np.broadcast_to(np.asarray(op[5]), op[3].shape)
            new = _bytes(values if op[4] is None else values[op[4]])
            low.append(new)
            high.append(new)
            before.append(new if op[0] == _LOAD else self._before(a, op[6], op[7]))
        low, high, before = np.concatenate(low), np.concatenate(high), np.concatenate(before)
        order = np.argsort(addr, kind="stable")  # by address, then in the order the accesses ran
        addr, kind, prog, seq, size, low, high, before = (
            a[order] for a in (addr, kind, prog, seq, size, low, high, before))
        starts = np.flatnonzero(np.concatenate(([True], addr[1:] != addr[:-1])))
        multi = np.minimum.reduceat(prog, starts) != np.maximum.reduceat(prog, starts)
        writes = np.maximum.reduceat(((kind == _STORE) | (kind == _ATOMIC)).astype(np.int8), starts) > 0
        plain = np.maximum.reduceat((kind <= _STORE).astype(np.int8), starts) > 0
        # benign: every store wrote one value and every load read it; where something loads, the
        # stores also replaced that value (a load before them would have read the same)
        value = np.minimum.reduceat(low, starts)
        same = value == np.maximum.reduceat(high, starts)
        loads = np.maximum.reduceat((kind == _LOAD).astype(np.int8), starts) > 0
        kept = (np.minimum.reduceat(before, starts) == value) & (np.maximum.reduceat(before, starts) == value)
        uniform = same & (~loads | kept)
        suspect = np.flatnonzero(multi & writes & plain & ~uniform)
        if not suspect.size:
            return None
        ends = np.append(starts[1:], addr.size)
        first, last = starts[suspect], ends[suspect]
        # every writer against every access of its address, in chunks of groups
        done = 0
        while done < suspect.size:
            sizes = last[done:] - first[done:]
            pairs = np.cumsum(sizes * sizes)  # at most this many (writer, access) pairs
            take = max(1, int(np.searchsorted(pairs, RACE_PAIRS_CHUNK, "right")))
            found = self._pairs(addr, kind, prog, seq, size, first[done:done + take], last[done:done + take])
            if found:
                return found
            done += take
        return None

    def _pairs(self, addr, kind, prog, seq, size, first, last) -> str | None:
        rows = np.repeat(first, last - first) + _ranges(last - first)
        group_start = np.repeat(first, last - first)
        group_size = np.repeat(last - first, last - first)
        writer = (kind[rows] == _STORE) | (kind[rows] == _ATOMIC)
        w_rows, w_start, w_size = rows[writer], group_start[writer], group_size[writer]
        a = np.repeat(w_rows, w_size)
        b = np.repeat(w_start, w_size) + _ranges(w_size)
        keep = (prog[a] != prog[b]) & ((kind[a] <= _STORE) | (kind[b] <= _STORE))  # two atomics never race
        a, b = a[keep], b[keep]
        if not a.size:
            return None
        earlier = np.where(seq[a] < seq[b], a, b)
        later = np.where(seq[a] < seq[b], b, a)
        ordered = self._ordered(prog[earlier], seq[earlier], prog[later], seq[later])
        bad = np.flatnonzero(~ordered)
        if not bad.size:
            return None
        i = bad[np.argmin(addr[earlier[bad]])]
        e, l_ = earlier[i], later[i]
        return self._race(int(addr[e]), int(size[e]), int(prog[e]), int(kind[e]), int(prog[l_]), int(kind[l_]))

    def _ordered(self, pe, te, pl, tl) -> np.ndarray:
        """Whether each earlier access (program pe at seq te) happens before the later one (pl, tl):
        a release by pe at or after te reaching, through atomics on the same addresses, an acquire
        by pl at or before tl."""
        ordered = np.zeros(pe.size, dtype=bool)
        if not self.events:
            return ordered
        ev_seq = np.array([e[0] for e in self.events], dtype=np.int64)
        ev_prog = np.array([e[1] for e in self.events], dtype=np.int64)
        ev_acq = np.array([e[3] for e in self.events], dtype=bool)
        ev_rel = np.array([e[4] for e in self.events], dtype=bool)
        shift = np.int64(1) << 40
        rel_key = np.sort(ev_prog[ev_rel] * shift + ev_seq[ev_rel])
        acq_key = np.sort(ev_prog[ev_acq] * shift + ev_seq[ev_acq])
        # a release by pe at or after te, an acquire by pl at or before tl: else no chain can exist
        released = np.searchsorted(rel_key, pe * shift + te, "left") < np.searchsorted(rel_key, (pe + 1) * shift, "left")
        acquired = np.searchsorted(acq_key, pl * shift + tl, "right") > np.searchsorted(acq_key, pl * shift, "left")
        maybe = np.flatnonzero(released & acquired)
        if not maybe.size:
            return ordered
        pe, te, pl, tl = pe[maybe], te[maybe], pl[maybe], tl[maybe]
        epoch = 1 + np.searchsorted(rel_key, pe * shift + te, "left") - np.searchsorted(rel_key, pe * shift, "left")
        comps, comp_of = np.unique(pe, return_inverse=True)
        at = np.searchsorted(ev_seq, tl, "right") - 1  # the last atomic event at or before each later access
        keys, key_of = np.unique(np.stack([pl, at]), axis=1, return_inverse=True)
        key_of = key_of.reshape(-1)
        wanted: dict[int, list[tuple[int, int]]] = {}
        for k, (p, i) in enumerate(keys.T.tolist()):
            wanted.setdefault(i, []).append((p, k))
        snaps = self._replay(comps, wanted, keys.shape[1])
        ordered[maybe] = snaps[key_of, comp_of] >= epoch
        return ordered

    def _replay(self, comps: np.ndarray, wanted: dict, n_keys: int) -> np.ndarray:
        width = comps.size
        comp = {int(p): i for i, p in enumerate(comps.tolist())}
        clocks: dict[int, np.ndarray] = {}
        own: dict[int, int] = {}
        snaps = np.zeros((n_keys, width), dtype=np.int64)
        every = np.unique(np.concatenate([e[2] for e in self.events]))
        dense = every.size * width <= DENSE_LIMIT
        table = np.zeros((every.size, width), dtype=np.int64) if dense else None
        sparse: dict[int, np.ndarray] = {}
        for i, (_, p, addrs, acquire, release) in enumerate(self.events):
            clock = clocks.get(p)
            if clock is None:
                clock = clocks[p] = np.zeros(width, dtype=np.int64)
                own[p] = 1
                if p in comp:
                    clock[comp[p]] = 1
            if dense:
                rows = np.searchsorted(every, addrs)
                if acquire:
                    np.maximum(clock, table[rows].max(axis=0), out=clock)
                if release:
                    table[rows] = np.maximum(table[rows], clock)
            else:
                for a in addrs.tolist():
                    if acquire and a in sparse:
                        np.maximum(clock, sparse[a], out=clock)
                    if release:
                        sparse[a] = np.maximum(sparse[a], clock) if a in sparse else clock.copy()
            if release:
                own[p] += 1
                if p in comp:
                    clock[comp[p]] = own[p]
            for q, k in wanted.get(i, ()):
                if q in clocks:
                    snaps[k] = clocks[q]
        return snaps

    def _before(self, addresses: np.ndarray, size: int, span: int) -> np.ndarray:
        spans = np.full(addresses.size, span, dtype=np.int64) if span >= 0 else \
            self.lo.searchsorted(addresses, "right").astype(np.int64) - 1
        value = np.zeros(addresses.size, dtype=np.uint64)
        for i in np.unique(spans).tolist():
            rows = spans == i
            value[rows] = _gather(self.before[i], (addresses[rows] - self.lo[i]).astype(np.int64), size)
        return value

    def _race(self, address: int, size: int, first: int, first_kind: int, second: int, second_kind: int) -> str:
        span = int(np.searchsorted(self.lo, np.uint64(address), "right")) - 1
        where = f"element {(address - int(self.lo[span])) // size} of {self.labels[span]})" if span >= 0 else \
            f"address {address:#x}"
        return (f"race: kernel {self.kernel}: {self.program_name(first)} {_DID[first_kind]} {where} and "
                f"{self.program_name(second)} {_DID[second_kind]} it, with no atomic ordering them (this run "
                f"ran the programs in {self.order} order); on hardware programs run concurrently, so the result "
                "depends on which runs first (order them with an atomic counter or flag, or split the launch)")


def _gather(snapshot: np.ndarray, offsets: np.ndarray, size: int) -> np.ndarray:
    """The `size`-byte little-endian values at byte offsets of a snapshot, as uint64 (as _bytes reads them)."""
    value = np.zeros(offsets.size, dtype=np.uint64)
    for k in range(min(size, 8)):
        value |= snapshot[offsets + k].astype(np.uint64) << np.uint64(8 * k)
    return value


def _ranges(sizes: np.ndarray) -> np.ndarray:
    """0..n-1 for each n in sizes, concatenated."""
    total = int(sizes.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    return np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)


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
            launch.record(_LOAD, addresses, lanes, span, size, result.data)
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
            launch.record(_STORE, addresses, lanes, span, size, value.data)
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
