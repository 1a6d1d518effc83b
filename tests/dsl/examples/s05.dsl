# Strategy S5 of the paper (docs/dsl-reference.md §14)
Task * GPU,CPU;             # for any task, run on GPU if supported
Region * * GPU FBMEM;       # any task, any region, on GPU: framebuffer
Region * * CPU SYSMEM;      # on CPU: system memory
mcpu = Machine(CPU);
mgpu = Machine(GPU);
# ========== Above is fixed ==========
Layout * * * Align==64 F_order;
