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
def tiles_on(MSpace procs, Task task) {  # 2-D block decomposition of the tile grid over the processors
    m = procs.auto_split(0, task.ispace);
    return m[blk(task.ipoint, task.ispace, m, 0), blk(task.ipoint, task.ispace, m, 1)];
}
def tiles2d(Task task) { return tiles_on(mgpu.merge(0, 1), task); }
def cpu_tiles2d(Task task) { return tiles_on(mcpu.merge(0, 1), task); }
# A[i,j] stays where it is placed; every step runs on the processor that owns its tile of A.
IndexTaskMap taco_fill,task_1,task_2,task_3,task_4,init_cublas tiles2d;
IndexTaskMap taco_validate cpu_tiles2d;
