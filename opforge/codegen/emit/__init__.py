"""What every backend's emitter shares, backend-neutral: the row kernel's pass schedule
(row_kernel.py) and the Python side of the row-wise (rows.py) and pointwise (pointwise.py)
launchers. Each backend's emitters live in its folder, opforge/backends/<name>/emit/."""
