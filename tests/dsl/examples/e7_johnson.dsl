# Expert mapper E7 Johnson as the DSL's authors wrote it for the original program: a language example, not the mapper
# of mapperopt's johnson (configs/johnson.dsl; docs/dsl-reference.md §14)
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
def place_faces(Task task) {        # Johnson: linearise the (g,g,g) grid, round-robin over GPUs
    g = task.ispace[0] > task.ispace[2] ? task.ispace[0] : task.ispace[2];
    lin = task.ipoint[0] + task.ipoint[1] * g + task.ipoint[2] * g * g;
    return mall[lin % mall.size[0]];
}
def every_gpu(Task task) { return mall[task.ipoint[0] % mall.size[0]]; }
IndexTaskMap task_1,task_2,task_3 place_faces;
IndexTaskMap task_4 cube_block;
IndexTaskMap init_cublas every_gpu;
