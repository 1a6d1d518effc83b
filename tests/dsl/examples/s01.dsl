# Strategy S1 of the paper (docs/dsl-reference.md §14)
Task * GPU,CPU;             # for any task, run on GPU if supported
Region * * GPU FBMEM;       # any task, any region, on GPU: framebuffer
Region * * CPU SYSMEM;      # on CPU: system memory
Layout * * * SOA C_order;
mcpu = Machine(CPU);
mgpu = Machine(GPU);
# ========== Above is fixed ==========
def linearblock(Task task) { return mgpu[task.ipoint[0] / mgpu.size[1], task.ipoint[0] % mgpu.size[1]]; }
IndexTaskMap calculate_new_currents,distribute_charge,update_voltages linearblock;
