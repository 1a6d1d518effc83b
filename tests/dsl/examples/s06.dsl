# Strategy S6 of the paper (docs/dsl-reference.md §14)
Task * GPU,CPU;             # for any task, run on GPU if supported
Region * * GPU FBMEM;       # any task, any region, on GPU: framebuffer
Region * * CPU SYSMEM;      # on CPU: system memory
mcpu = Machine(CPU);
mgpu = Machine(GPU);
Layout * * * SOA C_order;
# ========== Above is fixed ==========
Task calculate_new_currents CPU;
