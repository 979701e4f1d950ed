"""Dynamic anti-cheat guards, active only inside the candidate's own process while its code runs.

Everything the candidate's code runs is judged, including what it hands Triton to run on its
behalf (a callable grid, autotune and heuristics hooks). One rule decides what is the candidate's
doing: outside a kernel launch, everything while its code runs; inside a launch, only what runs
with one of the candidate's own frames between the launch and the event (`Accused.caused`), so
Triton's interpreter and JIT compiler copying arguments or starting ptxas are not counted.

- `LaunchLog` records every Triton launch (`kernel[grid](...)`) and can turn launches into no-ops.
  It hooks `KernelInterface.__getitem__` for the duration of a `with` block only: Triton exposes no
  launch hook that fires before compilation, and this is our own throw-away process.
- `ForwardGuard` (a TorchDispatchMode) sees every ATen op: allocations (filled with a sentinel of
  their dtype, a NaN for floats, so unwritten elements show), views and copies are allowed; any
  compute is reported, and so is a cast to a narrower float type.
- `Accused` also catches what runs below the dispatcher (`Tensor.numpy`, `tolist`, `apply_`,
  `map_`, `__array__`), threads and processes (refused, and recorded, when the candidate starts
  them), with an audit hook for `os.system`, `fork`, `exec` and `subprocess`.
- `ModuleSnapshot` notices torch, Triton, time or harness attributes replaced, added or removed;
  `global_state()` the process-wide settings a cheat would flip (default dtype, matmul precision,
  deterministic flags, global module hooks, active modes).
"""
from __future__ import annotations

import os
import sys
import threading
from collections import Counter
from dataclasses import dataclass, field
from types import FrameType, ModuleType
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from triton.runtime.jit import KernelInterface

from opforge.harness.snapshot import ModuleSnapshot, global_state, state_changes  # noqa: F401  (guards' API)

ALLOC = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"}
INIT_ALLOC = {"zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "new_zeros", "new_ones",
              "new_full", "fill_", "zero_", "scalar_tensor"}
LAYOUT = {
    "view", "_unsafe_view", "reshape", "_reshape_alias", "as_strided", "expand", "permute", "transpose",
    "t", "unsqueeze", "squeeze", "unsqueeze_", "squeeze_", "select", "slice", "split", "split_with_sizes",
    "chunk", "unbind", "narrow", "unflatten", "alias", "detach", "lift_fresh", "clone", "copy_",
    "_to_copy", "contiguous", "_local_scalar_dense", "is_same_size", "record_stream", "resolve_conj",
    "resolve_neg", "_has_compatible_shallow_copy_type", "view_as_real", "view_as_complex",
}
FLOAT_BITS = {torch.float64: 64, torch.float32: 32, torch.float16: 16, torch.bfloat16: 16}
# What every allocation the candidate makes holds until written, as raw bits of a same-sized view:
# a value no correct result is. Floats: quiet NaNs with a payload no arithmetic produces.
SENTINEL_BITS = {torch.float32: (torch.int32, 0x7FE5A5A5), torch.float16: (torch.int16, 0x7E5A),
                 torch.bfloat16: (torch.int16, 0x7FDA), torch.float64: (torch.int64, 0x7FFDEADBEEF5A5A5),
                 # float8 has few NaN encodings: e4m3fn's only +NaN, one of e5m2's, the fnuz types' only one
                 # (the bits of -0), e8m0's only one
                 torch.float8_e4m3fn: (torch.uint8, 0x7F), torch.float8_e5m2: (torch.uint8, 0x7E),
                 torch.float8_e4m3fnuz: (torch.uint8, 0x80), torch.float8_e5m2fnuz: (torch.uint8, 0x80),
                 torch.float8_e8m0fnu: (torch.uint8, 0xFF),
                 # unsigned: 0xA5.. (uint32: 2.8e9), never the 0 a caching allocator's fresh page would hold
                 torch.uint8: (torch.uint8, 0xA5), torch.uint16: (torch.int16, -0x5A5B),
                 torch.uint32: (torch.int32, -0x5A5A5A5B), torch.uint64: (torch.int64, -0x5A5A5A5A5A5A5A5B),
                 # bool: the byte 0x5A, neither False (0) nor True (1). Torch's ops read any nonzero byte as True
                 # (== True, .to(float) gives 1), torch.save/load keep the byte: compare checks bool bytes
                 torch.bool: (torch.uint8, 0x5A)}
# complex: the sentinel of its part type in both parts
COMPLEX_PARTS = {torch.complex32: torch.float16, torch.complex64: torch.float32, torch.complex128: torch.float64}
INT_SENTINEL = -0x5A5A5A5A  # signed ints (int8, int16: their minimum)
# Tensor methods that compute on the data without going through the dispatcher.
BELOW_DISPATCHER = ("numpy", "tolist", "__array__", "apply_", "map_", "map2_")
PROCESS_EVENTS = ("os.system", "os.fork", "os.forkpty", "os.posix_spawn", "os.exec", "os.spawn",
                  "subprocess.Popen", "pty.spawn")


@dataclass
class RecordedLaunch:
    """One kernel launch the candidate made, as LaunchLog saw it (the AOT build compiles these)."""

    kernel: Any
    name: str
    args: tuple
    kwargs: dict
    grid: Any


class Accused:
    """Who is running now: the candidate's files, whether its code is on trial (import, init,
    forward), and the frames of the launches in progress. One per process (`ACCUSED`)."""

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.active = False
        self.launch_frames: list[FrameType] = []
        self.events: Counter = Counter()  # "threads: ..." / "below-dispatcher: ..." -> count

    def caused(self, frame: FrameType | None) -> bool:
        """Is the event at `frame` the candidate's? Outside a launch, yes; inside, only when a
        candidate frame lies between the event and the innermost launch."""
        if not self.active:
            return False
        if not self.launch_frames:
            return True
        stop = self.launch_frames[-1]
        while frame is not None and frame is not stop:
            if frame.f_code.co_filename in self.files:
                return True
            frame = frame.f_back
        return False

    def record(self, event: str) -> None:
        self.events[event] += 1

    def take_events(self) -> list[str]:
        events, self.events = sorted(self.events), Counter()
        return events


ACCUSED = Accused()


class LaunchLog:
    """Counts launches; with `noop=True` records them without running any kernel. Callables the
    candidate hands Triton (a grid, autotune or heuristics hooks) run as the candidate's code."""

    def __init__(self, noop: bool = False) -> None:
        self.noop = noop
        self.launches: list[RecordedLaunch] = []
        self._saved = None
        self._cuda: ModuleType | None = None

    def __enter__(self) -> "LaunchLog":
        self._saved = {cls: cls.__getitem__ for cls in _launch_classes()}
        log = self

        def getitem(kernel, grid):
            def launch(*args, **kwargs):
                name = getattr(kernel, "__name__", None) or getattr(getattr(kernel, "fn", None), "__name__", "?")
                log.launches.append(RecordedLaunch(kernel, str(name), args, kwargs, grid))
                if log.noop:
                    return None
                _wrap_hooks(kernel)
                ACCUSED.launch_frames.append(sys._getframe())
                try:
                    return kernel.run(*args, grid=_as_candidate(grid), warmup=False, **kwargs)
                finally:
                    ACCUSED.launch_frames.pop()
            return launch

        for cls in self._saved:
            cls.__getitem__ = getitem
        self._cuda = cuda_runtime()
        if self._cuda is not None:
            self._cuda.OBSERVERS.append(self)
        return self

    def __exit__(self, *exc) -> None:
        for cls, saved in self._saved.items():
            cls.__getitem__ = saved
        if self._cuda is not None and self in self._cuda.OBSERVERS:
            self._cuda.OBSERVERS.remove(self)

    def cuda_launch(self, name: str, args: tuple, call: Any) -> Any:
        """A CUDA launcher called through opforge.cuda (backends/cuda/runtime.py): recorded
        like a Triton launch; run (emulated or on the device) as a launch, not as the candidate's code."""
        self.launches.append(RecordedLaunch(None, name, args, {}, None))
        if self.noop:
            return None
        ACCUSED.launch_frames.append(sys._getframe())
        try:
            return call()
        finally:
            ACCUSED.launch_frames.pop()

    def counts(self) -> dict[str, int]:
        return dict(Counter(launch.name for launch in self.launches))


def _launch_classes() -> list[type]:
    """Where `kernel[grid]` is looked up: Triton's KernelInterface, and the interpreter's function
    class where it is not one (triton-ascend 3.2's InterpretedFunction defines its own)."""
    classes: list[type] = [KernelInterface]
    interpreter = sys.modules.get("triton.runtime.interpreter")
    interpreted = getattr(interpreter, "InterpretedFunction", None)
    if isinstance(interpreted, type) and not issubclass(interpreted, KernelInterface):
        classes.append(interpreted)
    return classes


def cuda_runtime() -> ModuleType | None:
    """The CUDA launch helper's module (opforge.cuda), whose observers see every CUDA launcher call,
    once a candidate has imported it; a launcher loaded later is not observed, so its launches go
    unrecorded and count against the candidate (no kernel launched, its own compute)."""
    return sys.modules.get("opforge.backends.cuda.runtime")


def _as_candidate(fn: Any) -> Any:
    """Run a callable the candidate supplied as the candidate's own code (guarded like forward)."""
    if not callable(fn) or getattr(fn, "_opforge_accused", False):
        return fn

    def accused(*args, **kwargs):
        saved = ACCUSED.launch_frames
        ACCUSED.launch_frames = []
        try:
            return fn(*args, **kwargs)
        finally:
            ACCUSED.launch_frames = saved

    accused._opforge_accused = True
    return accused


def _wrap_hooks(kernel: Any) -> None:
    """Autotune/heuristics wrappers, a jit function's launch_metadata and the pre-run hooks
    registered on a kernel (add_pre_run_hook: Triton calls each with the launch's arguments, in the
    compiled and the interpreted run alike) carry the candidate's callables: wrap each once."""
    from triton.runtime.autotuner import Autotuner, Heuristics

    seen = 0
    while kernel is not None and seen < 8:
        seen += 1
        hooks = getattr(kernel, "pre_run_hooks", None)
        if isinstance(hooks, list):
            hooks[:] = [_as_candidate(hook) for hook in hooks]
        if isinstance(kernel, Autotuner):
            for attr in ("pre_hook", "post_hook", "early_config_prune", "perf_model"):
                if callable(getattr(kernel, attr, None)):
                    setattr(kernel, attr, _as_candidate(getattr(kernel, attr)))
            for config in getattr(kernel, "configs", []):
                if callable(getattr(config, "pre_hook", None)):
                    config.pre_hook = _as_candidate(config.pre_hook)
        elif isinstance(kernel, Heuristics):
            kernel.values = {k: _as_candidate(v) for k, v in kernel.values.items()}
        elif callable(getattr(kernel, "launch_metadata", None)):  # @triton.jit(launch_metadata=...)
            kernel.launch_metadata = _as_candidate(kernel.launch_metadata)
        kernel = getattr(kernel, "fn", None)


def fill_sentinel(tensor: torch.Tensor) -> None:
    """Poison an allocation: every dtype torch has gets a value that cannot pass as a result."""
    if tensor.dtype in SENTINEL_BITS:
        int_dtype, bits = SENTINEL_BITS[tensor.dtype]
        tensor.view(int_dtype).fill_(bits)
    elif tensor.dtype in COMPLEX_PARTS:
        fill_sentinel(torch.view_as_real(tensor))
    elif tensor.dtype.is_signed and not tensor.is_floating_point():  # signed ints
        tensor.fill_(max(INT_SENTINEL, torch.iinfo(tensor.dtype).min))


def _holds_sentinel(t: torch.Tensor) -> torch.Tensor:
    """Per element of `t`, does it still hold the sentinel (a complex one: in either part)?"""
    if t.dtype in COMPLEX_PARTS:
        return _holds_sentinel(torch.view_as_real(t)).any(-1)
    probe = torch.empty(1, dtype=t.dtype, device=t.device)
    fill_sentinel(probe)
    int_dtype = SENTINEL_BITS[t.dtype][0] if t.dtype in SENTINEL_BITS else t.dtype
    return t.view(int_dtype) == probe.view(int_dtype)


def count_sentinel(tensor: torch.Tensor) -> int:
    """Elements of `tensor` that still hold the allocation sentinel (any dtype; a one- or two-byte
    signed int's sentinel is its minimum, a value results do take)."""
    t = tensor.detach()
    return int(_holds_sentinel(t).sum()) if t.numel() else 0


@dataclass
class ForwardGuard(TorchDispatchMode):
    """Watches the ATen ops run while the candidate's code is on trial (see `Accused.caused`)."""

    compute: Counter = field(default_factory=Counter)
    downcasts: list[str] = field(default_factory=list)
    host_reads: int = 0  # tensor elements the candidate read into Python (item(), float(), int(), bool())

    def __post_init__(self) -> None:
        super().__init__()

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        """Leave __torch_dispatch__ as it is: torch would wrap it to keep Dynamo out, and the wrapper
        imports torch._dynamo on the first call (1.5 s of a short job). Dynamo never traces here:
        candidates may not compile (a static rule), and the snapshot allows Dynamo's own import."""
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if ACCUSED.launch_frames and not ACCUSED.caused(sys._getframe(1)):
            return out
        name = func.overloadpacket.__name__
        if name in ALLOC and isinstance(out, torch.Tensor):
            fill_sentinel(out)
        elif name in ("_to_copy", "copy_"):
            self._check_cast(name, args, kwargs, out)
        elif name == "_local_scalar_dense":
            self.host_reads += 1
        elif name not in INIT_ALLOC and name not in LAYOUT:
            where = " inside a launch (grid or hook)" if ACCUSED.launch_frames else ""
            self.compute[f"aten.{name}{where}"] += 1
        return out

    def _check_cast(self, name: str, args, kwargs, out) -> None:
        src = args[1] if name == "copy_" else args[0]
        dst = args[0] if name == "copy_" else out
        if not (isinstance(src, torch.Tensor) and isinstance(dst, torch.Tensor)):
            return
        src_bits, dst_bits = FLOAT_BITS.get(src.dtype), FLOAT_BITS.get(dst.dtype)
        if src_bits and (dst_bits is None or dst_bits < src_bits):
            self.downcasts.append(f"{src.dtype} -> {dst.dtype}".replace("torch.", ""))


def install_tripwires() -> None:
    """Once per candidate process, before the candidate is imported: below-dispatcher tensor
    access, thread starts and process creation are recorded (and the latter two refused) whenever
    the candidate causes them. Installed before the ModuleSnapshot, so they are not 'patches'."""
    import _thread

    for name in BELOW_DISPATCHER:
        original = getattr(torch.Tensor, name, None)
        if original is not None:
            setattr(torch.Tensor, name, _below_dispatcher(name, original))
    for module, attr in ((_thread, "start_new_thread"), (_thread, "start_joinable_thread"),
                         (threading, "_start_new_thread"), (threading, "_start_joinable_thread")):
        if hasattr(module, attr):
            setattr(module, attr, _refuse_thread(getattr(module, attr)))
    sys.addaudithook(_audit)


def _below_dispatcher(name: str, original: Any) -> Any:
    def tripwire(self, *args, **kwargs):
        if ACCUSED.caused(sys._getframe(1)):
            ACCUSED.record(f"below-dispatcher: forward called Tensor.{name}(), which computes outside "
                           "PyTorch's dispatcher and any kernel")
        return original(self, *args, **kwargs)

    tripwire.__name__ = name
    return tripwire


def _refuse_thread(original: Any) -> Any:
    def start(*args, **kwargs):
        if ACCUSED.caused(sys._getframe(1)):
            ACCUSED.record("threads: the candidate started a thread")
            raise RuntimeError("opforge: a candidate may not start threads")
        return original(*args, **kwargs)

    return start


def _audit(event: str, args: tuple) -> None:
    if ACCUSED.active and event.startswith(PROCESS_EVENTS) and ACCUSED.caused(sys._getframe(1)):
        ACCUSED.record(f"subprocess: the candidate tried {event}")
        raise RuntimeError(f"opforge: a candidate may not start processes ({event})")


def live_threads() -> set[int]:
    return {t.ident for t in threading.enumerate() if t.ident is not None}


def child_processes() -> list[int]:
    """PIDs whose parent is this process (Linux /proc); empty elsewhere."""
    pids = []
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as fh:
                pids += [int(p) for p in fh.read().split()]
    except OSError:
        return []
    return pids


def storages(value: Any) -> set[int]:
    if isinstance(value, torch.Tensor):
        return {value.untyped_storage().data_ptr()} if value.untyped_storage().nbytes() else set()
    if isinstance(value, (list, tuple)):
        return set().union(*(storages(v) for v in value)) if value else set()
    return set()
