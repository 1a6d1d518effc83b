# One region of a leaf task mapped virtually (no instance), which a leaf task cannot accept: check finds it.
# expect: dsl-e222-unusable-memory
Task * CPU;
Region calculate_new_currents 3 CPU VIRTUAL;
