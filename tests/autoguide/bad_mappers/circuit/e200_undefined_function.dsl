# An IndexTaskMap names a function that is never defined.
# expect: dsl-e200-undefined-function
Task * CPU;
IndexTaskMap calculate_new_currents blockwise;
