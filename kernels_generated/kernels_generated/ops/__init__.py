"""One module per op: the verified kernel source followed by its entry points (generated)."""
