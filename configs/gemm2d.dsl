# Cannon / SUMMA / PUMMA expert mapper (docs/gemm.md, for mapperopt's one task_4 launch per step) with the
# portable prelude: on a machine without GPUs, mgpu is the CPU model and every task runs its CPU variant.
Task * GPU,CPU;
Region * * GPU FBMEM;
Region * * CPU SYSMEM;
Layout * * * SOA C_order;           # row-major tiles: the BLAS leaf (task_4) needs them
CollectMemory task_4 *;             # a step's input tiles may be collected once used
mcpu = Machine(CPU);
mgpu = Machine(GPU).volume > 0 ? Machine(GPU) : Machine(CPU);
def blk(IPoint p, ISpace s, MSpace m, int d) { return p[d] * m.size[d] / s[d]; }
# 2-D block decomposition of the tile grid over the processors. A processor count whose grid does not divide the
# tiles (3, 5, 6 or 7 on 4 x 4) would leave processors idle: row-major blocks of tiles instead, a balanced share each.
def tiles_on(MSpace procs, Task task) {
    m = procs.auto_split(0, task.ispace);
    s = task.ispace;
    even = s[0] % m.size[0] == 0 && s[1] % m.size[1] == 0;
    lin = (task.ipoint[0] * s[1] + task.ipoint[1]) * procs.size[0] / (s[0] * s[1]);
    return even ? m[blk(task.ipoint, s, m, 0), blk(task.ipoint, s, m, 1)] : procs[lin];
}
def tiles2d(Task task) { return tiles_on(mgpu.merge(0, 1), task); }
def cpu_tiles2d(Task task) { return tiles_on(mcpu.merge(0, 1), task); }
# A[i,j] stays where it is placed; every step runs on the processor that owns its tile of A.
IndexTaskMap taco_fill,task_1,task_2,task_3,task_4,init_cublas tiles2d;
IndexTaskMap taco_validate cpu_tiles2d;
