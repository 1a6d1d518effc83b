# Stencil expert mapper (tests/dsl/examples/e2_stencil.dsl) with the portable prelude: on a machine without GPUs,
# mgpu is the CPU model, every task falls back to its CPU variant, and the placement functions return CPU processors.
Task * GPU,CPU;
# Framebuffer first; a tile that does not fit spills to zero-copy memory (the `tight` size: 8 tiles of 113 MB
# against a 768 MiB framebuffer).
Region * * GPU FBMEM,ZCMEM;
Region * * CPU SYSMEM;
Layout * * * SOA F_order;  # x fastest: the CPU kernel asserts a unit x stride
mcpu = Machine(CPU);
mgpu = Machine(GPU).volume > 0 ? Machine(GPU) : Machine(CPU);
def gpu_block(Task task) {
    lin = task.ipoint[0] * mgpu.volume / task.ispace[0];
    return mgpu[lin / mgpu.size[1], lin % mgpu.size[1]];
}
def cpu_node_block(Task task) {
    return mcpu[task.ipoint[0] * mcpu.size[0] / task.ispace[0], 0];
}
IndexTaskMap stencil,increment gpu_block;
IndexTaskMap check cpu_node_block;
