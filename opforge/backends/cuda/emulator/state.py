"""What a launcher call leaves in the candidate's static storage, checked so that no call count can
choose a result.

A GPU initialises `__device__` variables at module load and keeps them, and the host keeps a
launcher's `static` locals and globals, from call to call: a kernel right for its first 20,000 calls
and wrong afterwards (`if (++n > 20000)`) passes any affordable number of checked calls. Instead,
every variable of static storage is registered with its load-time bytes (statics.py,
include/emu_globals.h), and after a call that leaves any of them changed, the same call (the last
schedule, the same seed, the same buffers at the same addresses) runs once more from the load-time
values. It must leave the same bytes in every variable and compute the same outputs: then this call
did what a first call would, whatever came before it, and by induction so does every call. A counter
fails (this call left 4, the rerun 1), so does a cache that answers from an earlier call's data; a
workspace the call rewrites, a lazily built table or a last-block counter reset to 0 pass. Within a
call the variables persist from launch to launch, as on a GPU. Cost: nothing without such variables,
a memcmp per variable per call, and one more run of the call only when one changed.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field

from opforge.backends.cuda.emulator.buffers import ITEMSIZE
from opforge.backends.cuda.emulator.errors import EmulatorError

_memcmp = ctypes.CDLL(None).memcmp
_memcmp.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
_memcmp.restype = ctypes.c_int
FINDINGS: list[str] = []  # stateful reasons since the last take_findings(): the CUDA plugin's call_findings


class StatefulError(EmulatorError):
    """A call's result or left state depends on what earlier calls left in static storage."""


@dataclass(frozen=True)
class Variable:
    name: str
    line: int
    address: int
    nbytes: int
    initial: int  # address of its load-time bytes

    def moved(self) -> bool:
        return _memcmp(self.address, self.initial, self.nbytes) != 0

    def read(self) -> bytes:
        return ctypes.string_at(self.address, self.nbytes)

    def write(self, data: bytes) -> None:
        ctypes.memmove(self.address, data, self.nbytes)

    def initial_bytes(self) -> bytes:
        return ctypes.string_at(self.initial, self.nbytes)

    def reset(self) -> None:
        ctypes.memmove(self.address, self.initial, self.nbytes)

    def show(self, data: bytes, at: int = 0) -> str:
        if self.nbytes in (1, 2, 4, 8):
            return str(int.from_bytes(data, "little", signed=True))
        return f"{data[at // 4 * 4:at // 4 * 4 + 4].hex()} in bytes {at // 4 * 4}-{at // 4 * 4 + 3}"


def variables(lib) -> list[Variable]:
    """The registered variables of the loaded library `lib` (a ctypes.CDLL)."""
    count = lib.opforge_emu_statics()
    if count < 0:
        raise EmulatorError("unsupported: more than 1024 variables of static storage (the emulator keeps 1024)")
    get = lib.opforge_emu_static
    get.argtypes = [ctypes.c_int] + [ctypes.c_void_p] * 5
    found = []
    for i in range(count):
        name, line, p, n, initial = (ctypes.c_char_p(), ctypes.c_int(), ctypes.c_void_p(), ctypes.c_ulonglong(),
                                     ctypes.c_void_p())
        get(i, *(ctypes.byref(v) for v in (name, line, p, n, initial)))
        found.append(Variable(name.value.decode(), line.value, p.value, n.value, initial.value))
    return found


@dataclass
class _Seen:
    """Per loaded library: each variable's bytes after the last call, and the launcher that last
    changed it (a launcher answers for what it wrote; another may read it in the same forward)."""
    last: dict = field(default_factory=dict)
    owner: dict = field(default_factory=dict)


_SEEN: dict[str, _Seen] = {}


def note_call(library) -> None:
    """Before a call: the variables' bytes now, so that what this call changes is this launcher's
    (a call that failed before check_call could run left its changes unattributed)."""
    found = variables(library._lib)
    if found:
        _SEEN.setdefault(library.path, _Seen()).last = {v.address: v.read() for v in found}


def check_call(library, bound, device: list, schedule: int, seed: int, time_limit_s: float) -> None:
    """After a call of `bound` whose last run was `schedule`, on `device` buffers: raise
    StatefulError unless the same run, with the variables this launcher changed (now or in an earlier
    call) back at their load-time values, leaves the same state and outputs."""
    found = variables(library._lib)
    if not found:
        return
    name = bound.launcher.name
    seen = _SEEN.setdefault(library.path, _Seen())
    left = [v.read() for v in found]
    before = [seen.last.get(v.address) or v.initial_bytes() for v in found]
    for v, now, then in zip(found, left, before):
        if now != then:
            seen.owner[v.address] = name
    seen.last = {v.address: now for v, now in zip(found, left)}
    mine = [v for v in found if seen.owner.get(v.address) == name and v.moved()]
    if not mine:
        return
    start = [v.initial_bytes() if v in mine else now for v, now in zip(found, left)]
    kept = bound.buffers(library._pool, "state")
    for copy, buffer in zip(kept, device):
        copy.copy_from(buffer)
    for v in mine:
        v.reset()
    try:
        bound.run(library, schedule, seed, time_limit_s, device)
        fresh = [v.read() for v in found]
    finally:
        for v, data in zip(found, left):
            v.write(data)
    for copy, buffer, (_, arg, ctype, _) in zip(kept, device, bound.tensors):
        if not copy.same_as(buffer):
            at = buffer.first_difference(copy) // ITEMSIZE[ctype]
            _refuse(f"stateful: launcher {name} computes argument {arg} from what earlier calls left in "
                    f"{', '.join(f'`{v.name}`' for v in mine[:3])}: element {at} is "
                    f"{copy.element(at, ctype)!r}, and {buffer.element(at, ctype)!r} from the load-time values; "
                    f"a GPU keeps them from call to call, so the result would depend on the calls before")
    for v, *states in zip(found, before, left, start, fresh):
        at = _written_differently(*states)
        if at is not None:
            this, first = (v.show(x, at) for x in (states[1], states[3]))
            _refuse(f"stateful: launcher {name} changes variable `{v.name}` (line {v.line}) from call to call: "
                    f"this call left {this}, the same call from its load-time value "
                    f"({v.show(v.initial_bytes(), at)}) leaves {first}; a GPU keeps it for the next call, "
                    f"so the result would depend on the call count")


def _written_differently(before: bytes, left: bytes, start: bytes, fresh: bytes) -> int | None:
    """The first byte that this call (before -> left) or the rerun (start -> fresh) wrote and that
    the two runs left different, or None. A byte neither wrote is not compared: a workspace's tail
    that a smaller call leaves as a larger one wrote it is no call count."""
    if left == fresh:
        return None
    import torch

    b, l, s, f = (torch.frombuffer(bytearray(x), dtype=torch.uint8) for x in (before, left, start, fresh))
    bad = ((l != f) & ((l != b) | (f != s))).nonzero()
    return int(bad[0]) if len(bad) else None


def _refuse(reason: str) -> None:
    FINDINGS.append(reason)
    raise StatefulError(reason)


def take_findings() -> list[str]:
    """The stateful reasons since the last call (the CUDA plugin's call_findings), then forgotten."""
    found = list(dict.fromkeys(FINDINGS))[:4]
    FINDINGS.clear()
    return found
