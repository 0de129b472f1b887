/*
 * advice_registry.c: every advice rule, one line each, in the order the Advice section lists
 * their findings within a stage (advice.h). A rule lives in its own file with its descriptor
 * (name, rank on the first screen, stage); adding one is its file and a line here.
 */
#include "advice.h"

extern const struct advice_rule advice_rule_dropped, advice_rule_grad_mode, advice_rule_train_mode,
    advice_rule_autocast, advice_rule_layout, advice_rule_launch_bound, advice_rule_input_bound,
    advice_rule_page_faults, advice_rule_cudnn_search, advice_rule_cudnn_benchmark,
    advice_rule_pageable, advice_rule_sync_copies;

const struct advice_rule *const advice_rules[] = {
    &advice_rule_dropped,         /* advice_lost.c */
    &advice_rule_grad_mode,       /* advice_modes.c */
    &advice_rule_train_mode,      /* advice_modes.c */
    &advice_rule_autocast,        /* advice_autocast.c */
    &advice_rule_layout,          /* advice_gpu.c */
    &advice_rule_launch_bound,    /* advice_gpu.c */
    &advice_rule_input_bound,     /* advice_input.c */
    &advice_rule_page_faults,     /* advice_faults.c */
    &advice_rule_cudnn_search,    /* advice_cudnn.c */
    &advice_rule_cudnn_benchmark, /* advice_cudnn.c */
    &advice_rule_pageable,        /* advice_copies.c */
    &advice_rule_sync_copies,     /* advice_copies.c */
};
const int advice_rule_count = (int)(sizeof advice_rules / sizeof *advice_rules);
