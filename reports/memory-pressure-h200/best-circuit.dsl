Task * GPU,CPU;
Region * * GPU FBMEM;
Region * * CPU SYSMEM;
Region calculate_new_currents rp_private GPU FBMEM,ZCMEM;
Region calculate_new_currents rp_shared GPU FBMEM,ZCMEM;
Region calculate_new_currents rp_ghost GPU FBMEM,ZCMEM;
Region calculate_new_currents 3 GPU FBMEM,ZCMEM;
Region calculate_new_currents 4 GPU FBMEM,ZCMEM;
Region distribute_charge rp_private GPU FBMEM,ZCMEM;
Region distribute_charge rp_shared GPU FBMEM,ZCMEM;
Region distribute_charge rp_ghost GPU FBMEM,ZCMEM;
Region distribute_charge rp_wires GPU FBMEM,ZCMEM;
Region update_voltages 0 GPU FBMEM,ZCMEM;
Region update_voltages 1 GPU FBMEM,ZCMEM;
Region update_voltages 2 GPU FBMEM,ZCMEM;
Region update_voltages 3 GPU FBMEM,ZCMEM;
Layout * * * SOA F_order;
mcpu = Machine(CPU);
mgpu = Machine(GPU);
def cyclic_cpu1d(Task task) {  # round-robin over nodes, then processors
    lin = task.ipoint[0];
    return mcpu[lin % mcpu.size[0], lin / mcpu.size[0] % mcpu.size[1]];
}
IndexTaskMap init_pointers cyclic_cpu1d;
