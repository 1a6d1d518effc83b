# Circuit expert mapper (tests/dsl/examples/e1_circuit.dsl) with the portable prelude: on a machine without GPUs,
# mgpu is the CPU model, every task falls back to its CPU variant, and the placement functions return CPU processors.
Task * GPU,CPU;
# Framebuffer first; a region whose instance does not fit spills to zero-copy memory. At the `tight` size (384 MiB
# framebuffer, ~500 MB of wire fields) that is wire instances: the nodes stay.
Region * * GPU FBMEM,ZCMEM;
Region * * CPU SYSMEM;
Region * rp_shared GPU ZCMEM;  # data shared across piece boundaries: zero-copy
Region * rp_ghost GPU ZCMEM;
Layout * * * SOA C_order;
mcpu = Machine(CPU);
mgpu = Machine(GPU).volume > 0 ? Machine(GPU) : Machine(CPU);
def gpu_block(Task task) {  # block over all GPUs, nodes first
    lin = task.ipoint[0] * mgpu.volume / task.ispace[0];
    return mgpu[lin / mgpu.size[1], lin % mgpu.size[1]];
}
def cpu_node_block(Task task) {  # block over nodes, first CPU of the node
    return mcpu[task.ipoint[0] * mcpu.size[0] / task.ispace[0], 0];
}
IndexTaskMap calculate_new_currents,distribute_charge,update_voltages gpu_block;
IndexTaskMap init_piece,init_pointers cpu_node_block;
