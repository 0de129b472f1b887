# Turns schema/schema.sql into a C string (build time), so the library and the CLI carry the one
# schema. Usage: cmake -DIN=schema.sql -DOUT=schema_sql.c -P embed_schema.cmake
file(READ "${IN}" sql)
string(REPLACE "\\" "\\\\" sql "${sql}")
string(REPLACE "\"" "\\\"" sql "${sql}")
string(REPLACE "\n" "\\n\"\n\"" sql "${sql}")
file(WRITE "${OUT}" "/* Generated from schema/schema.sql by cmake/embed_schema.cmake. */\n"
    "const char ip_schema_sql[] =\n\"${sql}\";\n")
