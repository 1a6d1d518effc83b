# An alignment written with a single '='.
# expect: dsl-e108-malformed-constraint
Layout * * * SOA Align=64;
