"""`tune --start my.dsl` where the file gives one requirement of one task its own layout (a tutorial-style DAXPY's
`Layout daxpy input_blocks CPU AOS C_order;`): the search writes one Layout line for every requirement, with the layout
most of them get, so its programs had `Layout * * * SOA F_order;` and no note said the file's layout was gone. Here on
tests/app/twofields.cc (`scale` index launched over the partition `blocks`, `total` on the whole region), discovered by
a real run: the start's note names each statement whose effect the search's programs do not have."""

from __future__ import annotations

from mapperopt.benchmarks.userapp import app_from_command, discover
from mapperopt.descriptions import parse_machine_spec
from mapperopt.optimizer.space import SearchSpace

START = """\
Task * CPU;
Region * * CPU SYSMEM;
Layout scale blocks CPU AOS C_order;
InstanceLimit scale 2;
mcpu = Machine(CPU);
def spread(Task task) {
    return mcpu[0, task.ipoint[0] % mcpu.size[1]];
}
IndexTaskMap scale spread;
"""


def test_a_start_layout_of_one_requirement_is_named_as_not_kept(twofields_exe):
    space = SearchSpace(discover(app_from_command(str(twofields_exe))), parse_machine_spec("1x0x1"))
    searched = space.render(space.project(START))
    assert "AOS" not in searched and "InstanceLimit scale 2" not in searched, searched
    note = space.not_kept(START, "my.dsl")
    assert note is not None
    for part in ("its IndexTaskMap statements as written (they change nothing on this machine and are left out)",
                 "what these statements decide here: line 3's `Layout scale blocks CPU AOS C_order;` (they write "
                 "`Layout * * * SOA F_order;` for every requirement, the layout most requirements get), line 4's "
                 "`InstanceLimit scale 2;` (they write `InstanceLimit scale 1;`)."):
        assert part in note, (part, note)
