"""The row-wise family: reductions and scans over the same dims with fused prologue and epilogue
(layout.py: the plan as data; plan.py: reading the graph into it; frames.py: where each dim goes)."""
