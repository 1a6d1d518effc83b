# Contradictory constraints in one Layout statement.
# expect: dsl-e214-contradictory-layout
Layout * * * SOA AOS C_order;
