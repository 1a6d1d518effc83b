# A misspelt task name.
# expect: dsl-e202-unknown-task
Task calc_new_currents CPU;
