"""The window family: max and average pooling with a fused prologue and epilogue (plan.py)."""
