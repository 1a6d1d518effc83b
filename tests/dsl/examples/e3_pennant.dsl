# Expert mapper E3 Pennant as the DSL's authors wrote it for the original program: a language example, not the mapper
# of mapperopt's pennant (configs/pennant.dsl; docs/dsl-reference.md §14)
Task * GPU,CPU;
Region * * GPU FBMEM;
Region * * CPU SYSMEM;
Region * rp_all_shared_p GPU ZCMEM;
Region * rp_all_ghost_p GPU ZCMEM;
Layout * * * SOA C_order;
mcpu = Machine(CPU);
mgpu = Machine(GPU);
def gpu_cyclic(Task task) {                      # cyclic over nodes first, then over the node's GPUs
    p = task.ipoint[0];
    return mgpu[p % mgpu.size[0], p / mgpu.size[0] % mgpu.size[1]];
}
def cpu_node_cyclic(Task task) {
    return mcpu[task.ipoint[0] % mcpu.size[0], 0];
}
IndexTaskMap * gpu_cyclic;
IndexTaskMap init_pointers,initialize_topology cpu_node_cyclic;    # the CPU-only index tasks
