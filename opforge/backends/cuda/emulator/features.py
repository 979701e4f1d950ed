"""What the emulator cannot run, found in the CUDA source before it builds anything.

Each feature is one line naming what and where, e.g. "inline asm (line 12)". The emulator never
guesses at these: a candidate that uses one stays at the level `compiled`."""
from __future__ import annotations

import re

from opforge.backends.cuda.signature import blank_comments, line_of

_FEATURES = [
    ("inline asm", r"\b(?:asm|__asm__|__asm)\b"),
    ("tensor-core mma/wmma", r"\bwmma::|\bmma_sync\b|<\s*mma\.h\s*>|\bnvcuda::|\bmma\.sync\b"),
    ("wgmma", r"\bwgmma\b"),
    ("cp.async", r"\bcp\.async\b|\b__pipeline_memcpy_async\b|\bmemcpy_async\b|<\s*cuda/pipeline\s*>|"
                 r"\b__pipeline_commit\b|\bcp_async\w*\b"),
    ("TMA", r"\bCUtensorMap\b|\bcuTensorMapEncode\w*|\bcp\.async\.bulk\b|\bcde::|\bfence_proxy_async\b"),
    ("thread-block clusters", r"\b__cluster_dims__\b|\bthis_cluster\b|\bcluster_group\b|\bcudaLaunchKernelEx\b|"
                              r"\bcluster_sync\b|\bcudaLaunchAttributeClusterDimension\b"),
    ("grid-wide sync", r"\bthis_grid\b|\bgrid_group\b|\bcudaLaunchCooperativeKernel\b|\bgrid\.sync\b"),
    ("cooperative groups", r"<\s*cooperative_groups(?:\.h|/[\w.]+)?\s*>|\bcooperative_groups::"),
    ("textures and surfaces", r"\btex[123]D\w*\b|\btex1Dfetch\b|\btexture\s*<|\bcudaTextureObject_t\b|"
                              r"\bsurf[123]D\w*\b|\bcudaSurfaceObject_t\b"),
    ("libcu++ barriers", r"<\s*cuda/barrier\s*>|\bcuda::barrier\b|\bcuda::pipeline\b"),
    ("managed memory", r"\b__managed__\b|\bcudaMallocManaged\b"),
    ("CUDA graphs and events", r"\bcudaGraph\w*|\bcudaEvent\w*"),
]
_COMPILED = [(name, re.compile(pattern)) for name, pattern in _FEATURES]
_HEADER_END = re.compile(r"[;{}]")


def unsupported_features(source: str) -> list[str]:
    """Every construct of `source` the emulator cannot run, first occurrence each, in source order."""
    text = blank_comments(source)
    code = blank_comments(source, strings=True)
    found = []
    for name, pattern in _COMPILED:
        m = pattern.search(code) or (pattern.search(text) if name != "inline asm" else None)
        if m:
            found.append((m.start(), f"{name} (line {line_of(source, m.start())})"))
    launch = _device_side_launch(code)
    if launch is not None:
        found.append((launch, f"dynamic parallelism (a launch inside device code, line {line_of(source, launch)})"))
    return [text for _, text in sorted(found)]


def _device_side_launch(code: str) -> int | None:
    """Offset of the first `<<<` inside a __global__/__device__ function body, or None."""
    stack: list[str | None] = []  # per open brace: None (a namespace or extern "C") or the function header
    last = 0
    for m in re.finditer(r"[{};]|<<<", code):
        token = m.group(0)
        if token == "<<<":
            header = next((h for h in stack if h is not None), None)
            if header is not None and re.search(r"\b__(?:global|device)__\b", header) \
                    and not re.search(r"\b__host__\b", header):
                return m.start()
        elif token == "{":
            header = code[last:m.start()]
            outer = all(h is None for h in stack)
            transparent = re.search(r"\bnamespace\b[\w\s:]*$|\bextern\s*$", header)
            stack.append(None if outer and transparent else header if outer else stack[-1] or header)
        elif token == "}" and stack:
            stack.pop()
        last = m.end()
    return None


_LINEMARKER = re.compile(r'^#\s*(\d+)\s+"([^"]*)"')
_ASM = re.compile(r"\b(?:asm|__asm__|__asm)\b")


def asm_after_preprocessing(preprocessed: str, file_name: str) -> int | None:
    """The first line of `file_name` whose preprocessed text holds inline asm (a macro, a pasted
    token), or None: g++'s .ii output, read by its line markers."""
    current, line = None, 0
    for text in preprocessed.splitlines():
        marker = _LINEMARKER.match(text)
        if marker:
            line, current = int(marker.group(1)), marker.group(2)
            continue
        if current == file_name and _ASM.search(blank_comments(text, strings=True)):
            return line
        line += 1
    return None
