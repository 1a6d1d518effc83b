# Expert mapper E8 COSMA as the DSL's authors wrote it for the original program: a language example, not the mapper
# of mapperopt's cosma (configs/cosma.dsl; docs/dsl-reference.md §14)
Task * GPU,OMP,CPU;
Region * * * SOCKMEM,SYSMEM;
Region * * GPU FBMEM,ZCMEM;
Layout * * * SOA C_order;
CollectMemory task_4 *;
mgpu = Machine(GPU);
mall = mgpu.merge(0, 1);            # one "rank" per GPU
def blk(IPoint p, ISpace s, MSpace m, int pd, int md) { return p[pd] * m.size[md] / s[pd]; }
def cube_block(Task task) {         # 3-D block decomposition of all GPUs over the launch cube
    c = mall.auto_split(0, task.ispace);
    return c[*tuple(blk(task.ipoint, task.ispace, c, d, d) for d in (0, 1, 2))];
}
def place_grid(Task task) {         # COSMA: grid (gx, gy, gz) from an even 3-way split of all GPUs
    e = mall.auto_split(0, (1, 1, 1));
    gx = e.size[2];
    gy = e.size[1];
    lin = task.ipoint[0] + task.ipoint[1] * gx + task.ipoint[2] * gx * gy;
    return mall[lin % mall.size[0]];
}
def every_gpu(Task task) { return mall[task.ipoint[0] % mall.size[0]]; }
IndexTaskMap task_1,task_2,task_3 place_grid;
IndexTaskMap task_4 cube_block;
IndexTaskMap init_cublas every_gpu;
