"""An emulated AscendC project: its binding's functions as Python modules whose functions take torch
tensors. A call copies the tensors into emulator global memory (guarded regions), runs the bound
function under three core schedules (0 forward, 1 reverse, 2 a seeded shuffle), and compares every
output and every input the call changed bitwise across them (a difference is a `race`: on the NPU
the cores run concurrently). Schedule 0's outputs come back as new tensors, its in-place changes
are copied into the caller's tensors."""
from __future__ import annotations

import ctypes
import re
import threading
import types

from pathlib import Path

from opforge.backends.ascendc.emulator.build import Built, build_project, probe_load
from opforge.backends.ascendc.emulator.errors import EmulatorError, RaceError, from_code
from opforge.backends.ascendc.project import Project

MAX_DIMS, MAX_OUTS = 8, 64
SCHEDULES = 3
COLUMN_BASE = 100  # include/host/opforge_host/exec.h: kColumnBase
SEED = [0]  # the shuffled schedule's seed: the verification's, set by the plugin's start_run
LAUNCH_HOOK = [None]  # callable(name, args, call) the plugin sets: the harness sees each call as a launch
_LOADED: dict[str, "EmulatedProject"] = {}
_LOADED_LOCK = threading.Lock()


def set_seed(seed: int) -> None:
    SEED[0] = int(seed) & ((1 << 63) - 1)


def schedule_name(schedule: int, seed: int) -> str:
    return ("forward", "reverse")[schedule] if schedule < 2 else f"shuffle {schedule - 1} (seed {seed})"


class Value(ctypes.Structure):  # include/host/opforge_host/bind.h: OpforgeAscValue
    _fields_ = [("kind", ctypes.c_int32), ("dtype", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("reserved", ctypes.c_int32), ("sizes", ctypes.c_int64 * MAX_DIMS), ("data", ctypes.c_void_p),
                ("i", ctypes.c_int64), ("f", ctypes.c_double)]


def _dtypes():
    import torch

    return {torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.int64: 4, torch.float16: 5,
            torch.float32: 6, torch.float64: 7, torch.bool: 11, torch.bfloat16: 15}


class EmulatedProject:
    """A built project: `modules` maps each binding module name to a module of its functions."""

    def __init__(self, built: Built) -> None:
        self.path, self.display = built.path, built.display
        self.build_seconds, self.cached = built.seconds, built.cached
        lib = ctypes.CDLL(built.path)
        lib.opforge_asc_error.restype = ctypes.c_char_p
        lib.opforge_asc_functions.restype = ctypes.c_char_p
        lib.opforge_asc_configure.argtypes = [ctypes.c_int, ctypes.c_ulonglong]
        lib.opforge_asc_gm_alloc.argtypes = [ctypes.c_ulonglong, ctypes.c_char_p, ctypes.c_int]
        lib.opforge_asc_gm_alloc.restype = ctypes.c_void_p
        lib.opforge_asc_any_atomic.restype = ctypes.c_int
        lib.opforge_asc_call.argtypes = [ctypes.c_char_p, ctypes.POINTER(Value), ctypes.c_int, ctypes.POINTER(Value),
                                         ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
        self._lib, self._lock = lib, threading.Lock()
        self.origin: tuple = (None, 0, None, None)  # project, column, cache_dir, prebuilt_dir (set by build)
        self.functions: dict[str, tuple[int, int]] = {}  # "module.fn" -> (nargs, return kind)
        for line in lib.opforge_asc_functions().decode().splitlines():
            name, nargs, returns = line.split()
            self.functions[name] = (int(nargs), int(returns))
        self.modules: dict[str, types.ModuleType] = {}
        for qualified in self.functions:
            module, _, fn = qualified.rpartition(".")
            mod = self.modules.setdefault(module, types.ModuleType(module, "an AscendC binding run by opforge's emulator"))
            setattr(mod, fn, _function(self, qualified))

    @classmethod
    def build(cls, project: Project, column: int = 0, cache_dir: str | None = None,
              prebuilt_dir: str | None = None) -> "EmulatedProject":
        """Build (or find) and load; a library built elsewhere without its load probe is probed first."""
        built = build_project(project, column, cache_dir, prebuilt_dir=prebuilt_dir)
        with _LOADED_LOCK:
            if built.path not in _LOADED:
                if built.cached:
                    probe_load(Path(built.path))
                _LOADED[built.path] = cls(built)
                _LOADED[built.path].origin = (project, column, cache_dir, prebuilt_dir)
            return _LOADED[built.path]

    def for_column(self, column: int) -> "EmulatedProject":
        """The same project built for another of its type columns (project_json_src's dtype combinations)."""
        project, built_for, cache_dir, prebuilt_dir = self.origin
        if column == built_for:
            raise EmulatorError(f"host-error: the call's dtypes ask for type column {column}, which this build is")
        return EmulatedProject.build(project, column, cache_dir, prebuilt_dir)

    def call(self, qualified: str, args: list, *, schedules: int = SCHEDULES, seed: int | None = None):
        """Run bound function `qualified` ("module.fn") on `args` (tensors, numbers, bools, int lists)."""
        import torch

        seed = SEED[0] if seed is None else seed
        if qualified not in self.functions:
            raise EmulatorError(f"arguments: no bound function {qualified} (the binding defines: "
                                f"{', '.join(self.functions) or 'none'})")
        inputs = [a.detach().contiguous() if isinstance(a, torch.Tensor) else a for a in args]
        runs = []
        try:
            with self._lock:
                for schedule in range(schedules):
                    runs.append(self._run(qualified, inputs, schedule, seed))
        except _OtherColumn as other:  # the kernel's DTYPE_ macros are another column's: that build runs it
            return self.for_column(other.column).call(qualified, args, schedules=schedules, seed=seed)
        first_outs, first_ins, _ = runs[0]
        atomics = any(run[2] for run in runs)
        for schedule, (outs, ins, _) in enumerate(runs[1:], 1):
            compare_schedules(qualified, first_outs, outs, "output", schedule_name(schedule, seed), atomics)
            compare_schedules(qualified, first_ins, ins, "input", schedule_name(schedule, seed), atomics)
        for original, before, after in zip(args, inputs, first_ins):
            if after is not None and after.data != _raw(before):
                original.copy_(after.tensor().view(original.shape))
        results = [args[o.index] if isinstance(o, _Input) else o.tensor() if isinstance(o, TensorBytes) else o
                   for o in first_outs]
        kind = self.functions[qualified][1]
        if kind == 0:
            return None
        if kind == 1:
            return results[0] if results else None
        return tuple(results) if kind == 2 else list(results)

    def _run(self, qualified: str, inputs: list, schedule: int, seed: int):
        """One schedule: the call's outputs (TensorBytes of a tensor, a number, or the _Input it returned) and
        every tensor input's bytes as the call left them (None for a scalar)."""
        lib = self._lib
        lib.opforge_asc_configure(schedule, seed)
        try:
            values, regions = (Value * max(len(inputs), 1))(), []
            for i, a in enumerate(inputs):
                regions.append(_fill(lib, values[i], a, i))
            outs, n_outs = (Value * MAX_OUTS)(), ctypes.c_int(0)
            code = lib.opforge_asc_call(qualified.encode(), values, len(inputs), outs, MAX_OUTS, ctypes.byref(n_outs))
            if code >= COLUMN_BASE:
                raise _OtherColumn(code - COLUMN_BASE)
            if code:
                message = self._located(lib.opforge_asc_error().decode(errors="replace"))
                raise from_code(code, f"{message} ({qualified}, {schedule_name(schedule, seed)} schedule)")
            results = [_read(outs[k], regions) for k in range(n_outs.value)]
            after = [TensorBytes.at(r, a.dtype, list(a.shape)) if r else None for r, a in zip(regions, inputs)]
            return results, after, bool(lib.opforge_asc_any_atomic())
        finally:
            lib.opforge_asc_gm_release_all()

    def _located(self, message: str) -> str:
        """The emulator's file names as the candidate's: `add_custom_kernel.cpp:57` -> `kernel_src:57`."""
        for name, shown in self.display.items():
            message = re.sub(rf"(?<![\w.]){re.escape(name)}:", f"{shown}:", message)
        return message


def _function(project: EmulatedProject, qualified: str):
    def call(*args):
        run = lambda: project.call(qualified, list(args))  # noqa: E731
        hook = LAUNCH_HOOK[0]
        return hook(qualified, args, run) if hook is not None else run()

    call.__name__ = qualified.rpartition(".")[2]
    call.__qualname__ = qualified
    return call


def _fill(lib, value: Value, arg, index: int) -> int:
    """`value` describes `arg`; a tensor is copied into a fresh GM region, whose address is returned."""
    import torch

    if isinstance(arg, torch.Tensor):
        dtype = _dtypes().get(arg.dtype)
        if dtype is None or arg.dim() > MAX_DIMS:
            raise EmulatorError(f"arguments: argument {index + 1} is a {str(arg.dtype)[6:]} tensor of {arg.dim()} "
                                "dimensions; the emulator passes up to 8-dimensional tensors of real types")
        nbytes = arg.numel() * arg.element_size()
        region = lib.opforge_asc_gm_alloc(nbytes, f"argument {index + 1}".encode(), 0)
        if not region:
            raise MemoryError("out of memory for an emulated GM buffer")
        if nbytes:
            ctypes.memmove(region, arg.data_ptr(), nbytes)
        value.kind, value.dtype, value.ndim, value.data = 1, dtype, arg.dim(), region
        for d in range(arg.dim()):
            value.sizes[d] = arg.shape[d]
        return region
    if isinstance(arg, bool):
        value.kind, value.i = 4, int(arg)
    elif isinstance(arg, int):
        value.kind, value.i = 2, arg
    elif isinstance(arg, float):
        value.kind, value.f = 3, arg
    elif isinstance(arg, (list, tuple)) and len(arg) <= MAX_DIMS and all(isinstance(x, int) for x in arg):
        value.kind, value.ndim = 5, len(arg)
        for d, x in enumerate(arg):
            value.sizes[d] = x
    elif arg is not None:
        raise EmulatorError(f"arguments: argument {index + 1} is a {type(arg).__name__}; the emulator passes tensors, "
                            "numbers, bools, None and lists of up to 8 ints")
    return 0


class _OtherColumn(Exception):
    def __init__(self, column: int) -> None:
        super().__init__(column)
        self.column = column


class _Input:
    """A returned tensor that is one of the call's inputs (returned in place)."""

    def __init__(self, index: int) -> None:
        self.index = index

    def __eq__(self, other) -> bool:
        return isinstance(other, _Input) and other.index == self.index


class TensorBytes:
    """A tensor's bytes as a call left them in GM (compared across schedules before any tensor is made)."""

    def __init__(self, data: bytes, dtype, shape: list) -> None:
        self.data, self.dtype, self.shape = data, dtype, shape

    @classmethod
    def at(cls, address: int, dtype, shape: list) -> "TensorBytes":
        import math

        nbytes = math.prod(shape) * _itemsize(dtype)
        return cls(ctypes.string_at(address, nbytes) if nbytes else b"", dtype, shape)

    @classmethod
    def of(cls, tensor) -> "TensorBytes":
        return cls(_raw(tensor.contiguous()), tensor.dtype, list(tensor.shape))

    def tensor(self):
        import torch

        if not self.data:
            return torch.empty(self.shape, dtype=self.dtype)
        return torch.frombuffer(bytearray(self.data), dtype=self.dtype).reshape(self.shape)

    def __eq__(self, other) -> bool:
        return isinstance(other, TensorBytes) and (self.data, self.dtype, self.shape) == (other.data, other.dtype, other.shape)


def _itemsize(dtype) -> int:
    return dtype.itemsize


def _raw(tensor) -> bytes:
    nbytes = tensor.numel() * tensor.element_size()
    return ctypes.string_at(tensor.data_ptr(), nbytes) if nbytes else b""


def _read(value: Value, regions: list):
    """One returned Value: the input tensor it is (_Input), the bytes of a new tensor (TensorBytes), or a number."""
    if value.kind == 1:
        if value.data in regions:
            return _Input(regions.index(value.data))
        dtype = {v: k for k, v in _dtypes().items()}.get(value.dtype)
        if dtype is None:
            raise EmulatorError(f"arguments: a returned tensor of ScalarType {value.dtype}, which the emulator does not pass")
        return TensorBytes.at(value.data, dtype, [value.sizes[d] for d in range(value.ndim)])
    return {2: value.i, 3: value.f, 4: bool(value.i)}.get(value.kind)


def compare_schedules(qualified: str, first: list, other: list, role: str, label: str, atomics: bool = False) -> None:
    """Bitwise, except a float tensor of a call that added atomically: there the schedules may differ by
    rounding (ATOMIC_ROUNDING of the tensor's largest magnitude), never more; the judge still compares
    with the reference at the spec's tolerance."""
    for k, (a, b) in enumerate(zip(first, other)):
        if a is None or a == b or atomics and _rounding_only(a, b):
            continue
        if isinstance(a, TensorBytes) and isinstance(b, TensorBytes) and a.shape == b.shape and a.dtype == b.dtype:
            size = _itemsize(a.dtype)
            index = next(i for i, (x, y) in enumerate(zip(a.data, b.data)) if x != y) // size
            got, want = (x.tensor().reshape(-1)[index].item() for x in (b, a))
            detail = f"at element {index}: {got!r} vs {want!r}"
        else:
            detail = f"{b!r} vs {a!r}"
        note = " (beyond the rounding of its atomic adds)" if atomics else ""
        raise RaceError(f"race: the result depends on the order the cores run: {role} {k} of {qualified} differs "
                        f"between the forward and {label} schedules {detail}{note}; on the NPU the cores run "
                        "concurrently")


# Float atomic adds commit in the order the cores run, so a sum may differ in its last bits between schedules:
# by at most this fraction of the tensor's largest magnitude (float32; float16 and bfloat16 by their epsilon).
ATOMIC_ROUNDING = {"torch.float32": 1e-5, "torch.float16": 1e-3, "torch.bfloat16": 8e-3, "torch.float64": 1e-12}


def _rounding_only(a, b) -> bool:
    import torch

    bound = ATOMIC_ROUNDING.get(str(getattr(a, "dtype", None)))
    if bound is None or not (isinstance(a, TensorBytes) and isinstance(b, TensorBytes)) or a.shape != b.shape:
        return False
    x, y = a.tensor().double(), b.tensor().double()
    if not torch.equal(torch.isnan(x), torch.isnan(y)):
        return False
    x, y = torch.nan_to_num(x), torch.nan_to_num(y)
    scale = max(float(x.abs().max()), float(y.abs().max()), 1e-30) if x.numel() else 1.0
    return float((x - y).abs().max()) <= bound * scale if x.numel() else True
