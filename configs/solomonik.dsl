# Solomonik 2.5-D expert mapper (docs/gemm.md) for mapperopt's r3 task_4 launches over (r, r, c) per product
# (DISTAL's task_5 points become task_4 points), with the portable prelude: on a machine without GPUs, mgpu is the
# CPU model and every task runs its CPU variant.
Task * GPU,CPU;
Region * * GPU FBMEM;
Region * * CPU SYSMEM;
Layout * * * SOA C_order;           # row-major tiles: the BLAS leaf (task_4) needs them
CollectMemory task_4 *;             # a step's input tiles may be collected once used
mcpu = Machine(CPU);
mgpu = Machine(GPU).volume > 0 ? Machine(GPU) : Machine(CPU);
mall = mgpu.merge(0, 1);
def blk(IPoint p, ISpace s, MSpace m, int pd, int md) { return p[pd] * m.size[md] / s[pd]; }
def cyc(IPoint p, MSpace m, int pd, int md) { return p[pd] % m.size[md]; }
def grid3d(Task task) {             # (r, r, c): block over nodes, cyclic over each node's processors
    n = mgpu.auto_split(0, task.ispace);
    g = n.auto_split(3, task.ispace / n[:-1]);
    s = task.ispace;
    # A grid that does not divide the domain (3, 5, 6 or 7 processors on 2 x 2 x 2) would leave processors idle:
    # row-major blocks of points over all processors, nodes first, instead.
    even = s[0] % (g.size[0] * g.size[3]) == 0 && s[1] % (g.size[1] * g.size[4]) == 0 &&
           s[2] % (g.size[2] * g.size[5]) == 0;
    lin = ((task.ipoint[0] * s[1] + task.ipoint[1]) * s[2] + task.ipoint[2]) * mall.size[0] / (s[0] * s[1] * s[2]);
    return even ? g[blk(task.ipoint, s, g, 0, 0), blk(task.ipoint, s, g, 1, 1), blk(task.ipoint, s, g, 2, 2),
                    cyc(task.ipoint, g, 0, 3), cyc(task.ipoint, g, 1, 4), cyc(task.ipoint, g, 2, 5)]
                : mall[lin];
}
def faces_cyclic(Task task) {       # placement faces: linearise, cyclic over nodes then processors
    s = task.ispace;
    lin = task.ipoint[0] + s[0] * task.ipoint[1] + s[0] * s[1] * task.ipoint[2];
    return mgpu[lin % mgpu.size[0], lin / mgpu.size[0] % mgpu.size[1]];
}
def cpu_rows(Task task) { return mcpu.merge(0, 1)[task.ipoint[0] % mcpu.merge(0, 1).size[0]]; }
IndexTaskMap taco_fill,task_1,task_2,task_3 faces_cyclic;
IndexTaskMap task_4,init_cublas grid3d;
IndexTaskMap taco_validate cpu_rows;
