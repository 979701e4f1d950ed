"""What the backends' emitters share (each backend's own emitters live in its folder,
opforge/backends/<name>/emit/, and read the same family plans): rows.py, the Python side of a
row-wise launcher."""
