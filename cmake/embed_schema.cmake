# Turns schema/schema.sql (or a collector's fragment, collectors/<name>.sql) into a C string
# (build time), so the library carries the schema. Usage: cmake -DIN=schema.sql -DOUT=schema_sql.c [-DNAME=symbol] -P embed_schema.cmake
# (NAME defaults to ip_schema_sql; schema/views.sql is embedded as ip_views_sql.)
if(NOT NAME)
  set(NAME ip_schema_sql)
endif()
get_filename_component(in_name "${IN}" NAME)
file(READ "${IN}" sql)
string(REPLACE "\\" "\\\\" sql "${sql}")
string(REPLACE "\"" "\\\"" sql "${sql}")
string(REPLACE "\n" "\\n\"\n\"" sql "${sql}")
file(WRITE "${OUT}" "/* Generated from ${in_name} by cmake/embed_schema.cmake. */\n"
    "const char ${NAME}[] =\n\"${sql}\";\n")
