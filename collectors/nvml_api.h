/*
 * nvml_api.h: the few NVML types and functions the energy collector uses, declared here because
 * NVML's header is not part of the build (libnvidia-ml.so.1 ships with the driver and is loaded
 * at run time, never linked). Taken from NVIDIA's documented API: "NVML API Reference Guide"
 * (docs.nvidia.com/deploy/nvml-api, r535 and later: nvmlDeviceGetCurrentClocksEventReasons; the
 * older name nvmlDeviceGetCurrentClocksThrottleReasons is kept as a fallback), nvml.h as shipped
 * with CUDA 12.x / driver 535+. Only values and signatures stable since driver 418 are used;
 * checked against the real header on a device: not yet (docs/energy.md).
 */
#ifndef INFPROF_NVML_API_H
#define INFPROF_NVML_API_H

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_UNKNOWN = 999
};

/* nvmlClockType_t */
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
/* nvmlTemperatureSensors_t */
enum { NVML_TEMPERATURE_GPU = 0 };
/* nvmlDeviceGetMigMode's current mode */
enum { NVML_DEVICE_MIG_DISABLE = 0, NVML_DEVICE_MIG_ENABLE = 1 };

/* nvmlClocksEventReason* (formerly nvmlClocksThrottleReason*): bits of the reasons mask. */
#define NVML_CLOCKS_EVENT_REASON_GPU_IDLE            0x1ull
#define NVML_CLOCKS_EVENT_REASON_APPLICATIONS_CLOCKS 0x2ull
#define NVML_CLOCKS_EVENT_REASON_SW_POWER_CAP        0x4ull
#define NVML_CLOCKS_EVENT_REASON_HW_SLOWDOWN         0x8ull
#define NVML_CLOCKS_EVENT_REASON_SYNC_BOOST          0x10ull
#define NVML_CLOCKS_EVENT_REASON_SW_THERMAL          0x20ull
#define NVML_CLOCKS_EVENT_REASON_HW_THERMAL          0x40ull
#define NVML_CLOCKS_EVENT_REASON_HW_POWER_BRAKE      0x80ull
#define NVML_CLOCKS_EVENT_REASON_DISPLAY_CLOCKS      0x100ull

#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96

typedef nvmlReturn_t (*nvmlInit_v2_fn)(void);
typedef nvmlReturn_t (*nvmlShutdown_fn)(void);
typedef const char *(*nvmlErrorString_fn)(nvmlReturn_t result);
typedef nvmlReturn_t (*nvmlSystemGetDriverVersion_fn)(char *version, unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetCount_v2_fn)(unsigned int *count);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByIndex_v2_fn)(unsigned int index, nvmlDevice_t *dev);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByUUID_fn)(const char *uuid, nvmlDevice_t *dev);
typedef nvmlReturn_t (*nvmlDeviceGetUUID_fn)(nvmlDevice_t dev, char *uuid, unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetName_fn)(nvmlDevice_t dev, char *name, unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetMigMode_fn)(nvmlDevice_t dev, unsigned int *current,
                                                unsigned int *pending);
/* mJ since the driver was last loaded; Volta and later. */
typedef nvmlReturn_t (*nvmlDeviceGetTotalEnergyConsumption_fn)(nvmlDevice_t dev,
                                                               unsigned long long *energy_mj);
/* mW, the board's draw (averaged by the driver over about a second on recent GPUs). */
typedef nvmlReturn_t (*nvmlDeviceGetPowerUsage_fn)(nvmlDevice_t dev, unsigned int *power_mw);
/* MHz */
typedef nvmlReturn_t (*nvmlDeviceGetClockInfo_fn)(nvmlDevice_t dev, int type, unsigned int *mhz);
/* degrees C */
typedef nvmlReturn_t (*nvmlDeviceGetTemperature_fn)(nvmlDevice_t dev, int sensor,
                                                    unsigned int *temp);
typedef nvmlReturn_t (*nvmlDeviceGetCurrentClocksEventReasons_fn)(nvmlDevice_t dev,
                                                                  unsigned long long *reasons);
/* mW, the power limit the driver enforces now (Kepler and later). */
typedef nvmlReturn_t (*nvmlDeviceGetEnforcedPowerLimit_fn)(nvmlDevice_t dev, unsigned int *limit);

#endif
