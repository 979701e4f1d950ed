"""The sort family: MoE routing read from a graph's ATen ops. topk.py: a row's first k of a sort or
topk along its last dim (softmax router -> top-k weights and expert ids), with the elementwise and
row-reduction prologue before it and the epilogue after it. counting.py: a stable sort of integer keys
bounded by a bincount's minlength (token slots permuted by expert id), with the counts and their
scans."""
