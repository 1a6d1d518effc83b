# A misspelt task name.
# expect: dsl-e202-unknown-task
Task stencill CPU;
