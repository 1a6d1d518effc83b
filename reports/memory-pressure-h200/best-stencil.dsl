Task * GPU,CPU;
Region * * GPU FBMEM;
Region * * CPU SYSMEM;
Region init_tile private GPU FBMEM,ZCMEM;
Region init_tile pxm_out GPU FBMEM,ZCMEM;
Region init_tile pxp_out GPU FBMEM,ZCMEM;
Region init_tile pym_out GPU FBMEM,ZCMEM;
Region init_tile pyp_out GPU FBMEM,ZCMEM;
Region stencil private GPU FBMEM,ZCMEM;
Region stencil pxm_in GPU FBMEM,ZCMEM;
Region stencil pxp_in GPU FBMEM,ZCMEM;
Region stencil pym_in GPU FBMEM,ZCMEM;
Region stencil pyp_in GPU FBMEM,ZCMEM;
Region increment private GPU FBMEM,ZCMEM;
Region increment pxm_out GPU FBMEM,ZCMEM;
Region increment pxp_out GPU FBMEM,ZCMEM;
Region increment pym_out GPU FBMEM,ZCMEM;
Region increment pyp_out GPU FBMEM,ZCMEM;
Layout * * * SOA F_order;
mcpu = Machine(CPU);
mgpu = Machine(GPU);
def cyclic_cpu1d(Task task) {  # round-robin over nodes, then processors
    lin = task.ipoint[0];
    return mcpu[lin % mcpu.size[0], lin / mcpu.size[0] % mcpu.size[1]];
}
IndexTaskMap check cyclic_cpu1d;
