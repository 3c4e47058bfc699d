"""numba kernels: plain arrays in, plain arrays out; no I/O, no pandas, no user-facing errors."""
