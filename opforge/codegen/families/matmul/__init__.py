"""The matmul family: one aten.mm/aten.bmm, its operands' views and its epilogue (plan.py), over
symbolic shapes (shapes.py)."""
