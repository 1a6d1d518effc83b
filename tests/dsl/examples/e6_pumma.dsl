# Expert mapper E6 PUMMA as the DSL's authors wrote it for the original program: a language example, not the mapper
# of mapperopt's pumma (configs/gemm2d.dsl; docs/dsl-reference.md §14)
Task * GPU,OMP,CPU;
Region * * * SOCKMEM,SYSMEM;
Region * * GPU FBMEM,ZCMEM;
Layout * * * SOA C_order;           # row-major tiles: required by the BLAS leaf
InstanceLimit task_4 1;             # one leaf GEMM in flight per processor
InstanceLimit task_6 1;             # one outer step in flight per processor
CollectMemory task_4 *;             # leaf inputs are used once
mgpu = Machine(GPU);
mcpu = Machine(CPU);                # the original used OpenMP processors here
mall = mgpu.merge(0, 1);
def blk(IPoint p, ISpace s, MSpace m, int pd, int md) { return p[pd] * m.size[md] / s[pd]; }
def cyc(IPoint p, MSpace m, int pd, int md) { return p[pd] % m.size[md]; }
def tiles2d(Task task) {            # block over nodes, cyclic over the node's GPUs
    n = mgpu.auto_split(0, task.ispace);
    g = n.auto_split(2, task.ispace / n[:-1]);
    hi = tuple(blk(task.ipoint, task.ispace, g, d, d) for d in (0, 1));
    lo = tuple(cyc(task.ipoint, g, d, d + 2) for d in (0, 1));
    return g[*hi, *lo];
}
def every_gpu(Task task) { return mall[task.ipoint[0] % mall.size[0]]; }
def nodes2d(Task task) {
    n = mcpu.auto_split(0, task.ispace);
    hi = tuple(blk(task.ipoint, task.ispace, n, d, d) for d in (0, 1));
    return n[*hi, 0];
}
def with_parent(Task task) { return mgpu[*task.parent.processor(mgpu)]; }
IndexTaskMap task_1,task_2,task_3,taco_fill,taco_validate tiles2d;
IndexTaskMap init_cublas every_gpu;
IndexTaskMap task_7 nodes2d;
SingleTaskMap task_4 with_parent;
