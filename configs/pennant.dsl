# Pennant expert mapper (the DSL-mapper paper's) with the portable prelude: on a machine without GPUs, mgpu is the CPU
# model, every task falls back to its CPU variant, and the placement functions return CPU processors.
Task * GPU,CPU;
# Framebuffer first; a region whose instance does not fit spills to zero-copy memory. At the `tight` size (6 GiB
# framebuffer, 9 GB of fields) that is the sides (one 6.6 GB instance of every side field): zones and points stay.
Region * * GPU FBMEM,ZCMEM;
Region * * CPU SYSMEM;
Region * rp_all_shared_p GPU ZCMEM;  # points on piece boundaries, read and reduced by neighbours: zero-copy
Region * rp_all_ghost_p GPU ZCMEM;
Layout * * * SOA C_order;
mcpu = Machine(CPU);
mgpu = Machine(GPU).volume > 0 ? Machine(GPU) : Machine(CPU);
def gpu_cyclic(Task task) {  # cyclic over nodes first, then over the node's GPUs
    p = task.ipoint[0];
    return mgpu[p % mgpu.size[0], p / mgpu.size[0] % mgpu.size[1]];
}
def cpu_node_cyclic(Task task) {  # cyclic over nodes, first CPU of the node
    return mcpu[task.ipoint[0] % mcpu.size[0], 0];
}
IndexTaskMap * gpu_cyclic;
IndexTaskMap initialize_topology cpu_node_cyclic;  # the CPU-only index task
