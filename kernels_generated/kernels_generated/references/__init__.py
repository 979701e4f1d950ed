"""The op specs the kernels were verified against, verbatim: the fallback and the tests' reference."""
