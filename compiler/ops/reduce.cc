// Being written: shared kernels of the compute ops.
