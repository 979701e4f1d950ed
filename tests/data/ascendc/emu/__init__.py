"""The AscendC emulator's corpus: broken AscendC kernels, each beside its correct control (the same kernel
with the one change undone), in opforge's direct-launch form (../direct_add.py) and MultiKernelBench's
five-string form (../mkb_add.py). Each file's docstring says what is wrong. tests/test_ascendc_corpus.py
verifies every row on the CPU and checks its exit code and its first reason's code (and the API it names).

MANIFEST: file -> (spec, expected exit, accepted reason codes, a word the reason names (the API) or None).
Paths are relative to this folder. A control's row expects exit 0 (level emulated) and no reason. Where
the static rules see the bug first (a compile-time UB plan, blockLen in bytes) their code is accepted too;
an exit 3 reason reads `unverifiable: unsupported: ...`."""

MANIFEST = {
    # add, direct form, against ../add_spec.py (65536 floats, 8 cores x 4 tiles x 2048)
    "../direct_add.py": ("../add_spec.py", 0, (), None),
    "add_alloc_no_free.py": ("../add_spec.py", 1, ("deadlock",), "AllocTensor"),
    "add_free_before_copyout.py": ("../add_spec.py", 1, ("use-after-free",), "DataCopy"),
    "add_deque_empty.py": ("../add_spec.py", 1, ("deadlock",), "DeQue"),
    "add_blocklen_ok.py": ("../add_spec.py", 0, (), None),
    "add_blocklen_bytes.py": ("../add_spec.py", 1, ("ascendc-datacopy", "out-of-bounds"), "blockLen"),
    "add_ub_static.py": ("../add_spec.py", 1, ("ascendc-ub", "ub-overflow"), None),
    "add_loop_short.py": ("../add_spec.py", 1, ("mismatch",), None),
    "add_half_cores.py": ("../add_spec.py", 1, ("mismatch",), None),
    "add_overlap_cores.py": ("../add_spec.py", 1, ("race",), None),
    "add_flat_ok.py": ("../add_spec.py", 0, (), None),
    "add_no_enque.py": ("../add_spec.py", 1, ("race",), "Add"),
    # a ragged tail, against tail_add_spec.py (4100 floats: 4 tiles of 1024 and 4 floats)
    "tail_pad_ok.py": ("tail_add_spec.py", 0, (), None),
    "tail_datacopy.py": ("tail_add_spec.py", 1, ("mismatch", "misaligned"), None),
    "tail_unwritten.py": ("tail_add_spec.py", 1, ("mismatch",), None),
    # row-wise softmax (ReduceMax/ReduceSum, scalar GetValue), against softmax_spec.py (64 x 256)
    "softmax_ok.py": ("softmax_spec.py", 0, (), None),
    "softmax_no_vs_sync.py": ("softmax_spec.py", 1, ("race",), "GetValue"),
    "softmax_scalar_max_ok.py": ("softmax_spec.py", 0, (), None),
    "softmax_scalar_max_no_sync.py": ("softmax_spec.py", 1, ("race",), "GetValue"),
    "softmax_highlevel.py": ("softmax_spec.py", 3, ("unsupported",), "SoftMax"),
    # a result the scalar unit stores (SetValue) and MTE3 copies out, against rowmax_spec.py (64 x 256 -> 64)
    "rowmax_ok.py": ("rowmax_spec.py", 0, (), None),
    "rowmax_no_s_mte3.py": ("rowmax_spec.py", 1, ("race",), "DataCopy"),
    # Cast to half and back, against cast_spec.py (16384 floats)
    "cast_ok.py": ("cast_spec.py", 0, (), None),
    "cast_trunc.py": ("cast_spec.py", 1, ("mismatch",), None),
    "cast_half_buf_small.py": ("cast_spec.py", 1, ("out-of-bounds",), "Cast"),
    # MultiKernelBench's five-string form, against ../add_spec.py
    "../mkb_add.py": ("../add_spec.py", 0, (), None),
    "mkb_add_ub_runtime.py": ("../add_spec.py", 1, ("ub-overflow",), None),
    "mkb_add_free_before_copyout.py": ("../add_spec.py", 1, ("use-after-free",), "DataCopy"),
    "mkb_add_alloc_no_free.py": ("../add_spec.py", 1, ("deadlock",), "AllocTensor"),
    "mkb_add_blocklen_ok.py": ("../add_spec.py", 0, (), None),
    "mkb_add_blocklen_bytes.py": ("../add_spec.py", 1, ("ascendc-datacopy", "out-of-bounds"), "blockLen"),
}
