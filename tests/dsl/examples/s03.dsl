# Strategy S3 of the paper (dsl.md §14.3)
Task * GPU,CPU;             # for any task, run on GPU if supported
Region * * GPU FBMEM;       # any task, any region, on GPU: framebuffer
Region * * CPU SYSMEM;      # on CPU: system memory
mcpu = Machine(CPU);
mgpu = Machine(GPU);
# ========== Above is fixed ==========
Layout * * * AOS;
