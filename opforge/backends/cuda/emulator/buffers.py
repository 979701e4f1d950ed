"""Guarded host copies of a launcher's tensors, outside torch: every copy, fill and comparison is a
C memmove/memcmp on data_ptr()s, so the candidate's kernels never meet torch's dispatcher.

Each buffer sits at its tensor's alignment (view_offset: a view keeps its offset, so a misaligned
vector access stays misaligned), between two zones of canary bytes (A5 FF C3 7F repeated: a NaN in float32,
float16, bfloat16 and float64 alike; a write into one is an out-of-bounds write), and those between
unmapped fences, so an access further out faults (a read too)."""
from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import struct
import weakref

ALIGN = 256
CANARY = bytes([0xA5, 0xFF, 0xC3, 0x7F])
ITEMSIZE = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int8": 1, "uint8": 1, "int16": 2,
            "int32": 4, "int64": 8, "bool": 1}
_STRUCT = {"float32": "f", "float64": "d", "float16": "e", "int8": "b", "uint8": "B", "int16": "h",
           "int32": "i", "int64": "q", "bool": "?"}

PAGE = mmap.PAGESIZE
FENCE_BEFORE = 64 << 10  # unmapped, before the leading canary zone
FENCE_AFTER = 1 << 20    # unmapped, after the data: an access up to 1 MiB past the end faults

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.mmap.restype = ctypes.c_void_p
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.memcmp.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
_libc.memcmp.restype = ctypes.c_int


def view_offset(tensor) -> int:
    """Where a GPU would put `tensor`'s data modulo ALIGN: its byte offset in its storage (the
    caching allocator's blocks are ALIGN-aligned; the CPU allocator's only 64-byte aligned)."""
    return (tensor.data_ptr() - tensor.untyped_storage().data_ptr()) % ALIGN


def guard_bytes(nbytes: int) -> int:
    """Guard zone size: at least 1 KB, up to one buffer's size (64 KB at most), a multiple of ALIGN."""
    return max(1024, min(-(-nbytes // ALIGN) * ALIGN, 65536))


class GuardedBuffer:
    """`nbytes` of data in its own mapping at an address that is `offset` modulo ALIGN (a tensor
    view's own offset: a GPU's allocator hands out ALIGN-aligned blocks, and a view with
    storage_offset 1 sits 4 bytes past one, so a float4 access on it is misaligned there too),
    canary bytes right before and after it, and beyond those unmapped fences (PROT_NONE), so a read
    or write further out faults in the kernel and is reported with the argument's name (fence_hit)."""

    def __init__(self, nbytes: int, offset: int = 0) -> None:
        self.nbytes, self.offset = nbytes, offset % ALIGN
        span = -(-(self.offset + max(nbytes, 1)) // ALIGN) * ALIGN - self.offset  # data and trailing slack
        body = -(-(guard_bytes(nbytes) + span) // PAGE) * PAGE
        total = FENCE_BEFORE + body + FENCE_AFTER
        base = _libc.mmap(None, total, 3, 0x22 | 0x4000, -1, 0)  # RW, PRIVATE|ANONYMOUS|NORESERVE
        if base in (None, ctypes.c_void_p(-1).value):
            raise MemoryError(f"mmap of {total} bytes for a guarded buffer failed")
        _libc.mprotect(base, FENCE_BEFORE, 0)
        _libc.mprotect(base + FENCE_BEFORE + body, FENCE_AFTER, 0)
        weakref.finalize(self, _libc.munmap, base, total)
        self._base, self._fence_end = base, base + FENCE_BEFORE + body
        self.address = self._fence_end - span
        self.lead, self.slack = self.address - base - FENCE_BEFORE, span - nbytes
        # each zone in phase with the data next to it: the 4 bytes on either side read as a NaN
        self._before = (CANARY * (self.lead // 4 + 1))[-self.lead:]
        self._after = (CANARY * (self.slack // 4 + 1))[:self.slack]

    def load(self, source_address: int) -> None:
        """Fill both canary zones and copy `nbytes` from `source_address` in."""
        ctypes.memmove(self.address - self.lead, self._before, self.lead)
        ctypes.memmove(self.address + self.nbytes, self._after, self.slack)
        if self.nbytes:
            ctypes.memmove(self.address, source_address, self.nbytes)

    def overrun(self) -> str | None:
        """'N bytes past the end' / 'N bytes before the start' for a damaged canary, else None."""
        after = ctypes.string_at(self.address + self.nbytes, self.slack)
        if after != self._after:
            last = max(i for i in range(self.slack) if after[i] != self._after[i])
            return f"{last + 1} bytes past the end"
        before = ctypes.string_at(self.address - self.lead, self.lead)
        if before != self._before:
            first = min(i for i in range(self.lead) if before[i] != self._before[i])
            return f"{self.lead - first} bytes before the start"
        return None

    def fence_hit(self, address: int) -> str | None:
        """Where a faulting `address` lies relative to this buffer, if in one of its fences."""
        if self._fence_end <= address < self._fence_end + FENCE_AFTER:
            past = address - self.address - self.nbytes
            return f"{past} bytes past the end" if past else "just past the end"
        if self._base <= address < self._base + FENCE_BEFORE:
            return f"{self.address - address} bytes before the start"
        return None

    def same_as(self, other: "GuardedBuffer") -> bool:
        return self.nbytes == 0 or _libc.memcmp(self.address, other.address, self.nbytes) == 0

    def same_as_address(self, address: int) -> bool:
        return self.nbytes == 0 or _libc.memcmp(self.address, address, self.nbytes) == 0

    def first_difference(self, other: "GuardedBuffer") -> int:
        """Byte offset of the first difference from `other` (call only when not same_as)."""
        lo, hi = 0, self.nbytes
        while hi - lo > 64:  # bisect on memcmp of prefixes: no copy of the whole buffer
            mid = (lo + hi) // 2
            if _libc.memcmp(self.address + lo, other.address + lo, mid - lo) != 0:
                hi = mid
            else:
                lo = mid
        a, b = ctypes.string_at(self.address + lo, hi - lo), ctypes.string_at(other.address + lo, hi - lo)
        return lo + next(i for i in range(hi - lo) if a[i] != b[i])

    def element(self, index: int, ctype: str):
        """Element `index` read as `ctype`, for messages."""
        size = ITEMSIZE[ctype]
        raw = ctypes.string_at(self.address + index * size, size)
        if ctype == "bfloat16":
            return struct.unpack("<f", b"\0\0" + raw)[0]
        return struct.unpack("<" + _STRUCT[ctype], raw)[0]

    def copy_from(self, other: "GuardedBuffer") -> None:
        if self.nbytes:
            ctypes.memmove(self.address, other.address, self.nbytes)

    def store(self, destination_address: int) -> None:
        if self.nbytes:
            ctypes.memmove(destination_address, self.address, self.nbytes)
