/*
 * registry.c: the report's sections, in the order `infprof report` shows them and `infprof
 * compare` compares them. Each section's file exports its descriptor (sections.h); a new section
 * is a file of its own and a line here.
 */
#include "sections.h"

#include <string.h>

extern const struct report_section sec_summary, sec_run, sec_phases, sec_series, sec_tails,
    sec_precision, sec_operations, sec_memory, sec_operators, sec_energy, sec_kernels,
    sec_memops_time, sec_memops_size, sec_segments, sec_api, sec_cuda_activity, sec_cudnn, sec_nvtx,
    sec_advice, sec_timeline, sec_windows, sec_requests, sec_operator_series;

const struct report_section *const report_sections[] = {
    &sec_summary,    &sec_run,     &sec_windows,       &sec_phases,
    &sec_series,     &sec_tails,   &sec_requests,      &sec_precision,
    &sec_operations, &sec_memory,  &sec_operators,     &sec_operator_series,
    &sec_energy,     &sec_kernels, &sec_memops_time,   &sec_memops_size,
    &sec_segments,   &sec_api,     &sec_cuda_activity, &sec_cudnn,
    &sec_nvtx,       &sec_advice,  &sec_timeline,
};
const int report_section_count = (int)(sizeof report_sections / sizeof report_sections[0]);

