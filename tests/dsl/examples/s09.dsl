# Strategy S9 of the paper (docs/dsl-reference.md §14)
Task * GPU,CPU;             # for any task, run on GPU if supported
Region * * GPU FBMEM;       # any task, any region, on GPU: framebuffer
Region * * CPU SYSMEM;      # on CPU: system memory
Layout * * * SOA C_order;
mcpu = Machine(CPU);
mgpu = Machine(GPU);
# ========== Above is fixed ==========
Region distribute_charge 1 GPU ZCMEM;
