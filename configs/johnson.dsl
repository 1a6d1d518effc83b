# Johnson / COSMA expert mapper (docs/gemm.md) with the portable prelude: on a machine without GPUs, mgpu is
# the CPU model and every task runs its CPU variant. One process holds all processors, so the "rank" dimension of
# the original is the merged processor dimension `mall`.
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
def place_faces(Task task) {        # linearise the face's point in the (g, g, g) grid, round-robin over processors
    g = task.ispace[0] > task.ispace[2] ? task.ispace[0] : task.ispace[2];
    lin = task.ipoint[0] + task.ipoint[1] * g + task.ipoint[2] * g * g;
    return mall[lin % mall.size[0]];
}
def cpu_rows(Task task) { return mcpu.merge(0, 1)[task.ipoint[0] % mcpu.merge(0, 1).size[0]]; }
IndexTaskMap taco_fill,task_1,task_2,task_3 place_faces;
IndexTaskMap task_4,init_cublas cube_block;
IndexTaskMap taco_validate cpu_rows;
