"""The end of an interpreted launch: which recorded accesses race (backends/triton/memory.py records them).

An address that two programs touch, one of them writing (a plain store, or an atomic against a plain
access), with no happens-before between them, is a `race` -- unless every access there carries the
same bytes (a store of the value already there, two stores of one value), which no order can change.
Happens-before comes only from atomics, as on the hardware: a release (an RMW/CAS with Triton's
default acq_rel, a release atomic store) after the writer's access and an acquire (acq_rel RMW/CAS,
acquire atomic load or poll) of the same address before the reader's, chained through any programs
in between (vector clocks, replayed only when a conflict needs them); relaxed atomics order nothing.

`LaunchRaces` is the analysis half of memory.Launch: it reads the launch's `ops` (kind, program,
seq, addresses, mask, values, size, span), `events` (atomics: seq, program, addresses, acquire,
release), `written`, `before`, and the spans `lo`/`hi`/`labels`.
"""
from __future__ import annotations

import numpy as np

RACE_PAIRS_CHUNK = 4_000_000  # pairs examined at once (memory bound of the end-of-launch check)
DENSE_LIMIT = 20_000_000  # sync addresses x clock components held as one array in the replay

TOP = np.iinfo(np.uint64).max
LOAD, STORE, ATOMIC, ATOMIC_LOAD = 0, 1, 2, 3  # plain: the first two; writes: the middle two
_DID = {LOAD: "loaded", STORE: "stored", ATOMIC: "atomically updated", ATOMIC_LOAD: "atomically loaded"}


def _bytes(values: np.ndarray) -> np.ndarray:
    """Each element's raw bytes as one uint64 (elements of 1, 2, 4 or 8 bytes)."""
    flat = np.ascontiguousarray(values).reshape(-1)
    if flat.dtype.itemsize not in (1, 2, 4, 8):
        return np.frombuffer(flat.tobytes(), dtype=np.uint8).astype(np.uint64)
    return flat.view(f"u{flat.dtype.itemsize}").astype(np.uint64, copy=False)


class LaunchRaces:
    """The end of the launch: `races()` is the first race found, as a reason, or None."""
    def races(self) -> str | None:
        ops = [op for op in self.ops if op[7] in self.written or op[7] == -1]
        if not any(op[0] in (STORE, ATOMIC) for op in ops):
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
            if op[0] >= ATOMIC:  # atomics: never "the same bytes" (their order is checked, not their values)
                low.append(np.zeros(n, dtype=np.uint64))
                high.append(np.full(n, TOP, dtype=np.uint64))
                before.append(np.zeros(n, dtype=np.uint64))
                continue
            values = np.broadcast_to(np.asarray(op[5]), op[3].shape)
            new = _bytes(values if op[4] is None else values[op[4]])
            low.append(new)
            high.append(new)
            before.append(new if op[0] == LOAD else self._before(a, op[6], op[7]))
        low, high, before = np.concatenate(low), np.concatenate(high), np.concatenate(before)
        order = np.argsort(addr, kind="stable")  # by address, then in the order the accesses ran
        addr, kind, prog, seq, size, low, high, before = (
            a[order] for a in (addr, kind, prog, seq, size, low, high, before))
        starts = np.flatnonzero(np.concatenate(([True], addr[1:] != addr[:-1])))
        multi = np.minimum.reduceat(prog, starts) != np.maximum.reduceat(prog, starts)
        writes = np.maximum.reduceat(((kind == STORE) | (kind == ATOMIC)).astype(np.int8), starts) > 0
        plain = np.maximum.reduceat((kind <= STORE).astype(np.int8), starts) > 0
        # benign: every store wrote one value and every load read it; where something loads, the
        # stores also replaced that value (a load before them would have read the same)
        value = np.minimum.reduceat(low, starts)
        same = value == np.maximum.reduceat(high, starts)
        loads = np.maximum.reduceat((kind == LOAD).astype(np.int8), starts) > 0
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
        writer = (kind[rows] == STORE) | (kind[rows] == ATOMIC)
        w_rows, w_start, w_size = rows[writer], group_start[writer], group_size[writer]
        a = np.repeat(w_rows, w_size)
        b = np.repeat(w_start, w_size) + _ranges(w_size)
        keep = (prog[a] != prog[b]) & ((kind[a] <= STORE) | (kind[b] <= STORE))  # two atomics never race
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
