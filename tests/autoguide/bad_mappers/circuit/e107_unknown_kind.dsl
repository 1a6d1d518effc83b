# A processor kind that does not exist (Legion's LOC_PROC name instead of the DSL's).
# expect: dsl-e107-unknown-kind
Task * GPU,PROC;
