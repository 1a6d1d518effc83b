# Fig. A5 of the paper: best Circuit mapper, iteration 10 (docs/dsl-reference.md §14)
Task * GPU,OMP,CPU;
Task calculate_new_currents GPU;
Task update_voltages GPU;
Region * * GPU FBMEM;
Layout * * * C_order AOS Align==128;
mgpu = Machine(GPU);
m_2d = Machine(GPU);
def same_point(Task task) { return m_2d[*task.parent.processor(m_2d)]; }
