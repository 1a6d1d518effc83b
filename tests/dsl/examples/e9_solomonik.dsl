# Expert mapper E9 Solomonik as the DSL's authors wrote it for the original program: a language example, not the mapper
# of mapperopt's solomonik (configs/solomonik.dsl; docs/dsl-reference.md §14)
Task * GPU,OMP,CPU;
Region * * * SOCKMEM,SYSMEM;
Region * * GPU FBMEM,ZCMEM;
Layout * * * SOA C_order;
InstanceLimit task_4 1;
CollectMemory task_4 *;
mgpu = Machine(GPU);
mall = mgpu.merge(0, 1);
def blk(IPoint p, ISpace s, MSpace m, int pd, int md) { return p[pd] * m.size[md] / s[pd]; }
def cyc(IPoint p, MSpace m, int pd, int md) { return p[pd] % m.size[md]; }
def grid3d(Task task) {             # task_5 over (r, r, c): block over nodes, cyclic over GPUs
    n = mgpu.auto_split(0, task.ispace);
    g = n.auto_split(3, task.ispace / n[:-1]);
    hi = tuple(blk(task.ipoint, task.ispace, g, d, d) for d in (0, 1, 2));
    lo = tuple(cyc(task.ipoint, g, d, d + 3) for d in (0, 1, 2));
    return g[*hi, *lo];
}
def layer0_cyclic(Task task) {      # placement over (r, r, 1): linearise, cyclic over nodes then GPUs
    s = task.ispace;
    lin = task.ipoint[0] + s[0] * task.ipoint[1] + s[0] * s[1] * task.ipoint[2];
    return mgpu[lin % mgpu.size[0], lin / mgpu.size[0] % mgpu.size[1]];
}
def gpu_block1d(Task task) { return mall[blk(task.ipoint, task.ispace, mall, 0, 0)]; }
def with_parent(Task task) { return mgpu[*task.parent.processor(mgpu)]; }
SingleTaskMap task_4 with_parent;
IndexTaskMap task_5 grid3d;
IndexTaskMap task_1,task_2,task_3 layer0_cyclic;
IndexTaskMap init_cublas gpu_block1d;
