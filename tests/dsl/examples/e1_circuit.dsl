# Expert mapper E1 Circuit as the DSL's authors wrote it for the original program: a language example, not the mapper
# of mapperopt's circuit (configs/circuit.dsl; docs/dsl-reference.md §14)
Task * GPU,CPU;
Region * * GPU FBMEM;
Region * * CPU SYSMEM;
Region * rp_shared GPU ZCMEM;       # data shared across piece boundaries: zero-copy
Region * rp_ghost GPU ZCMEM;
Layout * * * SOA C_order;
mcpu = Machine(CPU);
mgpu = Machine(GPU);
def gpu_block(Task task) {                       # block over all GPUs, nodes first
    lin = task.ipoint[0] * mgpu.volume / task.ispace[0];
    return mgpu[lin / mgpu.size[1], lin % mgpu.size[1]];
}
def cpu_node_block(Task task) {                  # block over nodes, first CPU of the node
    return mcpu[task.ipoint[0] * mcpu.size[0] / task.ispace[0], 0];
}
IndexTaskMap calculate_new_currents,distribute_charge,update_voltages gpu_block;
IndexTaskMap init_piece,init_pointers cpu_node_block;
