# Column-major (F_order) tiles, which the BLAS leaf task_4 of the matrix multiplies cannot use: it aborts with
# DGEMM's illegal-parameter message rather than computing with them.
# expect: dgemm-illegal-parameter
Task * CPU;
Layout * * * SOA F_order;
