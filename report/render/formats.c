/*
 * formats.c: the output formats `--format` accepts, each a descriptor in its own file
 * (render.h); a new format is a file and a line here.
 */
#include "render_impl.h"

extern const struct output_format out_text, out_json, out_csv, out_md, out_html;

const struct output_format *const output_formats[] = {&out_text, &out_json, &out_csv, &out_md,
                                                      &out_html};
const int output_format_count = (int)(sizeof output_formats / sizeof output_formats[0]);
