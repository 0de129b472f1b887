/*
 * torch.c: placeholder until the collector lands.
 */
#include "collector.h"

const struct ip_collector ip_collector_torch = {.name = "torch"};
