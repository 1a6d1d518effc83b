# The file ends inside the last statement.
# expect: dsl-e105-end-of-input
Task * CPU;
Region * rp_shared CPU SYSMEM
