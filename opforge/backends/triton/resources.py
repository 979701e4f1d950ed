"""What one thread block may use on each NVIDIA GPU target, and the check of a compiled kernel
against it: a kernel over a limit compiles, but fails at every launch on the hardware (Triton's
loader raises OutOfResources), so the build refuses it with the numbers (`out-of-resources`).

Limits per compute capability, from the CUDA C++ Programming Guide's "Compute Capabilities"
table (Technical Specifications per Compute Capability) as NVIDIA's CCCL encodes it
(libcudacxx `cuda/__device/arch_traits.h`): the shared memory a block may opt in to is the SM's
shared memory less the 1 KB the driver reserves per block from 8.0 on. Triton opts in to it
(its loader compares `metadata.shared` against CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN).
Registers are allocated per warp in units of 256 (a thread's count rounded up to 8), from 64K
32-bit registers per block; a block has at most 1024 threads. With `num_ctas` > 1 each CTA of
the cluster is its own block, so these limits hold per CTA. Blackwell (10.x) tensor memory holds
512 columns per CTA (Triton's loader checks `metadata.tmem_size` against it).
"""
from __future__ import annotations

from dataclasses import dataclass

KB = 1024
WARP = 32
REGISTER_UNIT = 256  # registers are allocated to a warp in units of 256 (8 per thread)


@dataclass(frozen=True)
class Limits:
    arch: int  # compute capability as Triton names it (90 = 9.0)
    shared_bytes: int  # max shared memory per block, opt-in
    registers_per_block: int = 64 * KB
    registers_per_thread: int = 255
    threads_per_block: int = 1024
    tmem_columns: int | None = None  # tensor memory per CTA (10.x)


# Max shared memory per block (opt-in), KB: the Programming Guide's table.
SHARED_OPTIN_KB = {70: 96, 75: 64, 80: 163, 86: 99, 87: 163, 88: 99, 89: 99, 90: 227, 100: 227, 103: 227,
                   110: 227, 120: 99, 121: 99}
TMEM_COLUMNS = {100: 512, 103: 512, 110: 512}


def limits(arch: int) -> Limits | None:
    """The per-block limits of compute capability `arch` (None for one the table does not hold)."""
    if arch not in SHARED_OPTIN_KB:
        return None
    return Limits(arch, SHARED_OPTIN_KB[arch] * KB, tmem_columns=TMEM_COLUMNS.get(arch))


def block_registers(registers_per_thread: int, num_warps: int) -> int:
    """Registers a block of `num_warps` warps takes at `registers_per_thread` (allocation units)."""
    per_warp = -(-registers_per_thread * WARP // REGISTER_UNIT) * REGISTER_UNIT
    return per_warp * num_warps


def over_limits(entry: dict, limit: Limits) -> list[str]:
    """`out-of-resources` reasons for one compiled kernel's record (kernel, shared_bytes,
    registers, num_warps, tmem_columns), each with what it needs and what the target allows."""
    name, target = entry["kernel"], f"sm_{limit.arch}"
    found = []
    shared = entry.get("shared_bytes") or 0
    if shared > limit.shared_bytes:
        found.append(f"{name} needs {shared} B of shared memory per block; {target} allows {limit.shared_bytes} B")
    warps = entry.get("num_warps") or 0
    if warps * WARP > limit.threads_per_block:
        found.append(f"{name} needs {warps * WARP} threads per block (num_warps={warps}); "
                     f"{target} allows {limit.threads_per_block}")
    regs = entry.get("registers")
    if regs is not None and regs > limit.registers_per_thread:
        found.append(f"{name} needs {regs} registers per thread; {target} allows {limit.registers_per_thread}")
    elif regs is not None and warps and (block := block_registers(regs, warps)) > limit.registers_per_block:
        found.append(f"{name} needs {block} registers per block ({regs} per thread x {warps * WARP} threads); "
                     f"{target} allows {limit.registers_per_block}")
    tmem = entry.get("tmem_columns")
    if tmem and limit.tmem_columns is not None and tmem > limit.tmem_columns:
        found.append(f"{name} needs {tmem} columns of tensor memory; {target} allows {limit.tmem_columns}")
    return [f"out-of-resources: {text}" for text in found]


def check(entry: dict, arch: int) -> list[str]:
    """Record the target's limits in the kernel's build record and return the reasons it is over
    one of them (none, with a note in the record, for a target the table does not hold)."""
    limit = limits(arch)
    if limit is None:
        entry["limits"] = None
        entry["limits_note"] = f"no resource limits known for sm_{arch}: not checked"
        return []
    entry["limits"] = {"shared_bytes": limit.shared_bytes, "registers_per_block": limit.registers_per_block,
                       "registers_per_thread": limit.registers_per_thread,
                       "threads_per_block": limit.threads_per_block,
                       **({"tmem_columns": limit.tmem_columns} if limit.tmem_columns else {})}
    return over_limits(entry, limit)


HINT = ("A kernel over the GPU's per-block limits compiles but fails at every launch: shrink the tile "
        "(BLOCK sizes), the pipeline depth (num_stages: each stage keeps its tiles in shared memory) or "
        "num_warps (at most 32: 1024 threads), and loop over sub-tiles instead of holding one huge tile.")


def reason_hints(reasons: list[str]) -> list[str]:
    """The reflect node's hint for an `out-of-resources` build failure."""
    return [HINT] if any(r.startswith("out-of-resources") for r in reasons) else []
