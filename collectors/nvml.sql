-- collectors/nvml.sql: the energy collector's tables (readings of each GPU and of the CPU),
-- created after schema/schema.sql (conventions there); embedded at build time.

-- Schema 4, energy (collectors/nvml*.c, INFPROF_ENERGY_MS): readings of each GPU (gpu: NVML
-- index) and of the CPU (gpu -1: RAPL packages summed, cpufreq's mean clock in sm_clock), taken
-- by our sampler thread every INFPROF_ENERGY_MS, at every phase change and at start and end.
-- kind: 0 start, 1 periodic, 2 phase change, 3 end. t: ns since t0. energy_mj: the device's
-- cumulative counter (NVML: since the driver loaded). power_mw; sm_clock, mem_clock: MHz; temp:
-- degrees C; reasons: NVML's clock-event (throttle) reasons mask. NULL: not available.
CREATE TABLE energy_samples (
    gpu INTEGER, t INTEGER, kind INTEGER, energy_mj INTEGER, power_mw INTEGER,
    sm_clock INTEGER, mem_clock INTEGER, temp INTEGER, reasons INTEGER
);

-- Each GPU NVML showed: the CUDA device ordinal the process used it as (-1: not used), whether
-- it is in MIG mode, and why a figure is missing (status, empty when all is read).
-- power_limit_mw (from 2026-11-28): NVML's enforced power limit at start, NULL unknown; the
-- report drops power readings above it.
CREATE TABLE energy_gpus (
    gpu INTEGER PRIMARY KEY, cuda_device INTEGER, name TEXT, uuid TEXT, mig INTEGER, status TEXT,
    power_limit_mw INTEGER
);
