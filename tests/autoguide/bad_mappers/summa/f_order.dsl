# Column-major (F_order) tiles, which the BLAS leaf task_4 of the matrix multiplies cannot use: check finds it
# (E223; the capture keeps the abort with DGEMM's illegal-parameter message it used to get).
# expect: dsl-e223-rejected-layout
Task * CPU;
Layout * * * SOA F_order;
