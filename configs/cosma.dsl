# COSMA expert mapper (docs/gemm.md): the Johnson policy (configs/johnson.dsl) with the placement of COSMA's
# (gx, gy, gz) grid. Portable prelude: on a machine without GPUs, mgpu is the CPU model.
Task * GPU,CPU;
Region * * GPU FBMEM;
Region * * CPU SYSMEM;
Layout * * * SOA C_order;           # row-major tiles: the BLAS leaf (task_4) needs them
CollectMemory task_4 *;             # the broadcast input tiles may be collected once used
mcpu = Machine(CPU);
mgpu = Machine(GPU).volume > 0 ? Machine(GPU) : Machine(CPU);
mall = mgpu.merge(0, 1);
def blk(IPoint p, ISpace s, MSpace m, int d) { return p[d] * m.size[d] / s[d]; }
def cube_block(Task task) {         # 3-D block decomposition of all processors over the launch domain
    c = mall.auto_split(0, task.ispace);
    s = task.ispace;
    # A processor grid that does not divide the domain (3, 5, 6 or 7 processors on 2 x 2 x 2) would leave
    # processors idle: row-major blocks of points instead, a balanced share each.
    even = s[0] % c.size[0] == 0 && s[1] % c.size[1] == 0 && s[2] % c.size[2] == 0;
    lin = ((task.ipoint[0] * s[1] + task.ipoint[1]) * s[2] + task.ipoint[2]) * mall.size[0] / (s[0] * s[1] * s[2]);
    return even ? c[blk(task.ipoint, s, c, 0), blk(task.ipoint, s, c, 1), blk(task.ipoint, s, c, 2)] : mall[lin];
}
def place_grid(Task task) {         # COSMA: grid (gx, gy, gz) from an even 3-way split of all processors
    e = mall.auto_split(0, (1, 1, 1));
    gx = e.size[2];
    gy = e.size[1];
    lin = task.ipoint[0] + task.ipoint[1] * gx + task.ipoint[2] * gx * gy;
    return mall[lin % mall.size[0]];
}
def cpu_rows(Task task) { return mcpu.merge(0, 1)[task.ipoint[0] % mcpu.merge(0, 1).size[0]]; }
IndexTaskMap taco_fill,task_1,task_2,task_3 place_grid;
IndexTaskMap task_4,init_cublas cube_block;
IndexTaskMap taco_validate cpu_rows;
