# Expert mapper E2 Stencil as the DSL's authors wrote it for the original program: a language example, not the mapper
# of mapperopt's stencil (configs/stencil.dsl; docs/dsl-reference.md §14)
Task * GPU,CPU;
Region * * GPU FBMEM;
Region * * CPU SYSMEM;
Layout * * * SOA F_order;           # x fastest: the CPU kernel asserts a unit x stride
mcpu = Machine(CPU);
mgpu = Machine(GPU);
def gpu_block(Task task) {
    lin = task.ipoint[0] * mgpu.volume / task.ispace[0];
    return mgpu[lin / mgpu.size[1], lin % mgpu.size[1]];
}
def cpu_node_block(Task task) {
    return mcpu[task.ipoint[0] * mcpu.size[0] / task.ispace[0], 0];
}
IndexTaskMap stencil,increment gpu_block;
IndexTaskMap check cpu_node_block;
