/*
 * cupti.h: infprof's own declarations of the part of CUPTI 13 it uses, for a build without the
 * CUDA toolkit (a pip install: docs/install.md). Not NVIDIA's header: the constants are the
 * values CUPTI 13.0 defines, the activity records carry only the fields infprof reads, each at
 * its offset in CUPTI's record, padded to the record's full size. tests/build/test_vendored_cuda.py
 * holds every constant, offset and size here to NVIDIA's headers where the toolkit is installed.
 * libcupti itself is loaded at run time (collectors/cupti.c), never linked.
 */
#ifndef INFPROF_VENDORED_CUPTI_H
#define INFPROF_VENDORED_CUPTI_H

#include "cuda.h"

#include <stddef.h>
#include <stdint.h>

#define CUPTIAPI
#define CUPTI_API_VERSION        130001
#define CUPTI_INVALID_CONTEXT_ID ((uint32_t)0xFFFFFFFF)
#define CUPTI_INVALID_STREAM_ID  ((uint32_t)0xFFFFFFFF)
/* CUPTI's activity records: packed, aligned to 8 bytes. */
#define IP_CUPTI_RECORD __attribute__((__packed__)) __attribute__((aligned(8)))

typedef enum {
    CUPTI_SUCCESS = 0,
    CUPTI_ERROR_INVALID_PARAMETER = 1,
    CUPTI_ERROR_INVALID_OPERATION = 7,
    CUPTI_ERROR_MAX_LIMIT_REACHED = 12,
    CUPTI_ERROR_NOT_COMPATIBLE = 14,
    CUPTI_ERROR_NOT_INITIALIZED = 15,
    CUPTI_ERROR_INVALID_KIND = 21,
    CUPTI_ERROR_NOT_SUPPORTED = 27,
    CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED = 39,
    CUPTI_ERROR_UNKNOWN = 999,
    CUPTI_ERROR_FORCE_INT = 0x7fffffff
} CUptiResult;

typedef enum {
    CUPTI_ACTIVITY_KIND_INVALID = 0,
    CUPTI_ACTIVITY_KIND_MEMCPY = 1,
    CUPTI_ACTIVITY_KIND_MEMSET = 2,
    CUPTI_ACTIVITY_KIND_KERNEL = 3,
    CUPTI_ACTIVITY_KIND_DRIVER = 4,
    CUPTI_ACTIVITY_KIND_RUNTIME = 5,
    CUPTI_ACTIVITY_KIND_DEVICE = 8,
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL = 10,
    CUPTI_ACTIVITY_KIND_MEMCPY2 = 22,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION = 38,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION = 39,
    CUPTI_ACTIVITY_KIND_MEMORY2 = 49,
    CUPTI_ACTIVITY_KIND_MEMORY_POOL = 50,
    CUPTI_ACTIVITY_KIND_GRAPH_TRACE = 51,
    CUPTI_ACTIVITY_KIND_COUNT = 56,
    CUPTI_ACTIVITY_KIND_FORCE_INT = 0x7fffffff
} CUpti_ActivityKind;

typedef enum {
    CUPTI_ACTIVITY_MEMCPY_KIND_HTOD = 1,
    CUPTI_ACTIVITY_MEMCPY_KIND_DTOH = 2,
    CUPTI_ACTIVITY_MEMCPY_KIND_DTOD = 8,
    CUPTI_ACTIVITY_MEMCPY_KIND_PTOP = 10,
    CUPTI_ACTIVITY_MEMCPY_KIND_FORCE_INT = 0x7fffffff
} CUpti_ActivityMemcpyKind;

typedef enum {
    CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE = 1,
    CUPTI_ACTIVITY_MEMORY_KIND_PINNED = 2,
    CUPTI_ACTIVITY_MEMORY_KIND_DEVICE = 3,
    CUPTI_ACTIVITY_MEMORY_KIND_FORCE_INT = 0x7fffffff
} CUpti_ActivityMemoryKind;

typedef enum {
    CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION = 1,
    CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE = 2,
    CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_FORCE_INT = 0x7fffffff
} CUpti_ActivityMemoryOperationType;

typedef enum {
    CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL = 1,
    CUPTI_ACTIVITY_MEMORY_POOL_TYPE_FORCE_INT = 0x7fffffff
} CUpti_ActivityMemoryPoolType;

typedef enum {
    CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED = 1,
    CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_FORCE_INT = 0x7fffffff
} CUpti_ActivityMemoryPoolOperationType;

typedef enum {
    CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE = 3,
    CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE = 4,
    CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_FORCE_INT = 0x7fffffff
} CUpti_ActivitySynchronizationType;

typedef enum {
    CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM = 1,
    CUPTI_ACTIVITY_THREAD_ID_TYPE_FORCE_INT = 0x7fffffff
} CUpti_ActivityThreadIdType;

typedef enum {
    CUPTI_ACTIVITY_FLAG_FLUSH_FORCED = 1 << 0,
    CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC = 1 << 0,
    CUPTI_ACTIVITY_FLAG_FORCE_INT = 0x7fffffff
} CUpti_ActivityFlag;

typedef enum {
    CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1 = 4,
    CUPTI_EXTERNAL_CORRELATION_KIND_FORCE_INT = 0x7fffffff
} CUpti_ExternalCorrelationKind;

typedef enum {
    CUPTI_CB_DOMAIN_DRIVER_API = 1,
    CUPTI_CB_DOMAIN_RUNTIME_API = 2,
    CUPTI_CB_DOMAIN_FORCE_INT = 0x7fffffff
} CUpti_CallbackDomain;

typedef enum {
    CUPTI_API_ENTER = 0,
    CUPTI_API_EXIT = 1,
    CUPTI_API_CBSITE_FORCE_INT = 0x7fffffff
} CUpti_ApiCallbackSite;

/* The sizes of the runtime's and the driver's callback-id tables in CUPTI 13.0. */
enum { CUPTI_RUNTIME_TRACE_CBID_SIZE = 523 };
enum { CUPTI_DRIVER_TRACE_CBID_SIZE = 807 };

typedef uint32_t CUpti_CallbackId;
typedef struct CUpti_Subscriber_st *CUpti_SubscriberHandle;
typedef void(CUPTIAPI *CUpti_CallbackFunc)(void *userdata, CUpti_CallbackDomain domain,
                                           CUpti_CallbackId cbid, const void *cbdata);
typedef void(CUPTIAPI *CUpti_BuffersCallbackRequestFunc)(uint8_t **buffer, size_t *size,
                                                         size_t *maxNumRecords);
typedef void(CUPTIAPI *CUpti_BuffersCallbackCompleteFunc)(CUcontext context, uint32_t streamId,
                                                          uint8_t *buffer, size_t size,
                                                          size_t validSize);
typedef uint64_t(CUPTIAPI *CUpti_TimestampCallbackFunc)(void);

/* The callback's data for an API call (CUPTI_CB_DOMAIN_RUNTIME_API, _DRIVER_API). */
typedef struct {
    CUpti_ApiCallbackSite callbackSite;
    const char *functionName;
    const void *functionParams;
    void *functionReturnValue;
    const char *symbolName;
    CUcontext context;
    uint32_t contextUid;
    uint64_t *correlationData;
    uint32_t correlationId;
} CUpti_CallbackData;

typedef struct {
    size_t structSize;
    const char *subscriberName;
    char *oldSubscriberName;
    size_t oldSubscriberSize;
} CUpti_SubscriberParams;
#define CUpti_SubscriberParams_STRUCT_SIZE                                                         \
    (offsetof(CUpti_SubscriberParams, oldSubscriberSize) + sizeof(size_t))

/* The activity records, each: CUPTI's size; the fields infprof reads, at CUPTI's offsets. */
typedef struct IP_CUPTI_RECORD {
    CUpti_ActivityKind kind;
} CUpti_Activity;

/* records: */
typedef struct IP_CUPTI_RECORD {
    CUpti_ActivityKind kind;
    unsigned char ip_pad_4[2];
    uint16_t registersPerThread;
    unsigned char ip_pad_8[8];
    uint64_t start;
    uint64_t end;
    unsigned char ip_pad_32[8];
    uint32_t deviceId;
    uint32_t contextId;
    uint32_t streamId;
    int32_t gridX;
    int32_t gridY;
    int32_t gridZ;
    int32_t blockX;
    int32_t blockY;
    int32_t blockZ;
    int32_t staticSharedMemory;
    int32_t dynamicSharedMemory;
    unsigned char ip_pad_84[8];
    uint32_t correlationId;
    unsigned char ip_pad_96[8];
    const char *name;
    unsigned char ip_pad_112[32];
    uint64_t graphNodeId;
    unsigned char ip_pad_152[4];
    uint32_t graphId;
    unsigned char ip_pad_160[56];
} CUpti_ActivityKernel10;
_Static_assert(sizeof(CUpti_ActivityKernel10) == 216, "CUpti_ActivityKernel10: CUPTI 13.0's size");
typedef struct IP_CUPTI_RECORD {
    CUpti_ActivityKind kind;
    uint8_t copyKind;
    uint8_t srcKind;
    uint8_t dstKind;
    uint8_t flags;
    uint64_t bytes;
    uint64_t start;
    uint64_t end;
    uint32_t deviceId;
    unsigned char ip_pad_36[4];
    uint32_t streamId;
    uint32_t correlationId;
    uint32_t runtimeCorrelationId;
    unsigned char ip_pad_52[12];
    uint64_t graphNodeId;
    uint32_t graphId;
    unsigned char ip_pad_76[20];
} CUpti_ActivityMemcpy6;
_Static_assert(sizeof(CUpti_ActivityMemcpy6) == 96, "CUpti_ActivityMemcpy6: CUPTI 13.0's size");
typedef struct IP_CUPTI_RECORD {
    CUpti_ActivityKind kind;
    uint8_t copyKind;
    uint8_t srcKind;
    uint8_t dstKind;
    uint8_t flags;
    uint64_t bytes;
    uint64_t start;
    uint64_t end;
    unsigned char ip_pad_32[8];
    uint32_t streamId;
    uint32_t srcDeviceId;
    unsigned char ip_pad_48[4];
    uint32_t dstDeviceId;
    unsigned char ip_pad_56[4];
    uint32_t correlationId;
    unsigned char ip_pad_64[8];
    uint64_t graphNodeId;
    uint32_t graphId;
    unsigned char ip_pad_84[12];
} CUpti_ActivityMemcpyPtoP4;
_Static_assert(sizeof(CUpti_ActivityMemcpyPtoP4) == 96,
               "CUpti_ActivityMemcpyPtoP4: CUPTI 13.0's size");
typedef struct IP_CUPTI_RECORD {
    CUpti_ActivityKind kind;
    uint32_t value;
    uint64_t bytes;
    uint64_t start;
    uint64_t end;
    uint32_t deviceId;
    unsigned char ip_pad_36[4];
    uint32_t streamId;
    uint32_t correlationId;
    uint16_t flags;
    uint16_t memoryKind;
    unsigned char ip_pad_52[12];
    uint64_t graphNodeId;
    uint32_t graphId;
    unsigned char ip_pad_76[12];
} CUpti_ActivityMemset4;
_Static_assert(sizeof(CUpti_ActivityMemset4) == 88, "CUpti_ActivityMemset4: CUPTI 13.0's size");
typedef struct IP_CUPTI_RECORD {
    CUpti_ActivityKind kind;
    CUpti_ActivityMemoryOperationType memoryOperationType;
    CUpti_ActivityMemoryKind memoryKind;
    uint32_t correlationId;
    uint64_t address;
    uint64_t bytes;
    uint64_t timestamp;
    unsigned char ip_pad_40[12];
    uint32_t deviceId;
    unsigned char ip_pad_56[4];
    uint32_t streamId;
    unsigned char ip_pad_64[8];
    uint32_t isAsync;
    unsigned char ip_pad_76[4];
    struct __attribute__((__packed__)) {
        CUpti_ActivityMemoryPoolType memoryPoolType;
        unsigned char ip_pad_4[4];
        uint64_t address;
    } memoryPoolConfig;
    unsigned char ip_pad_96[32];
} CUpti_ActivityMemory4;
_Static_assert(sizeof(CUpti_ActivityMemory4) == 128, "CUpti_ActivityMemory4: CUPTI 13.0's size");
typedef struct IP_CUPTI_RECORD {
    CUpti_ActivityKind kind;
    CUpti_ActivityMemoryPoolOperationType memoryPoolOperationType;
    CUpti_ActivityMemoryPoolType memoryPoolType;
    uint32_t correlationId;
    unsigned char ip_pad_16[4];
    uint32_t deviceId;
    unsigned char ip_pad_24[8];
    uint64_t address;
    uint64_t size;
    uint64_t releaseThreshold;
    uint64_t timestamp;
    uint64_t utilizedSize;
    unsigned char ip_pad_72[8];
} CUpti_ActivityMemoryPool3;
_Static_assert(sizeof(CUpti_ActivityMemoryPool3) == 80,
               "CUpti_ActivityMemoryPool3: CUPTI 13.0's size");
typedef struct IP_CUPTI_RECORD {
    CUpti_ActivityKind kind;
    CUpti_CallbackId cbid;
    uint64_t start;
    uint64_t end;
    unsigned char ip_pad_24[4];
    uint32_t threadId;
    uint32_t correlationId;
    uint32_t returnValue;
} CUpti_ActivityAPI;
_Static_assert(sizeof(CUpti_ActivityAPI) == 40, "CUpti_ActivityAPI: CUPTI 13.0's size");
typedef struct IP_CUPTI_RECORD {
    CUpti_ActivityKind kind;
    CUpti_ActivitySynchronizationType type;
    uint64_t start;
    uint64_t end;
    uint32_t correlationId;
    uint32_t contextId;
    uint32_t streamId;
    uint32_t cudaEventId;
    unsigned char ip_pad_40[16];
} CUpti_ActivitySynchronization2;
_Static_assert(sizeof(CUpti_ActivitySynchronization2) == 56,
               "CUpti_ActivitySynchronization2: CUPTI 13.0's size");
typedef struct IP_CUPTI_RECORD {
    CUpti_ActivityKind kind;
    CUpti_ExternalCorrelationKind externalKind;
    uint64_t externalId;
    uint32_t correlationId;
    unsigned char ip_pad_20[4];
} CUpti_ActivityExternalCorrelation;
_Static_assert(sizeof(CUpti_ActivityExternalCorrelation) == 24,
               "CUpti_ActivityExternalCorrelation: CUPTI 13.0's size");
typedef struct IP_CUPTI_RECORD {
    CUpti_ActivityKind kind;
    uint32_t correlationId;
    uint64_t start;
    uint64_t end;
    uint32_t deviceId;
    uint32_t graphId;
    unsigned char ip_pad_32[4];
    uint32_t streamId;
    unsigned char ip_pad_40[16];
} CUpti_ActivityGraphTrace2;
_Static_assert(sizeof(CUpti_ActivityGraphTrace2) == 56,
               "CUpti_ActivityGraphTrace2: CUPTI 13.0's size");
typedef struct IP_CUPTI_RECORD {
    CUpti_ActivityKind kind;
    unsigned char ip_pad_4[12];
    uint64_t globalMemorySize;
    unsigned char ip_pad_24[12];
    uint32_t coreClockRate;
    unsigned char ip_pad_40[4];
    uint32_t numMultiprocessors;
    unsigned char ip_pad_48[56];
    uint32_t computeCapabilityMajor;
    uint32_t computeCapabilityMinor;
    uint32_t id;
    unsigned char ip_pad_116[4];
    CUuuid uuid;
    const char *name;
    unsigned char ip_pad_144[40];
} CUpti_ActivityDevice5;
_Static_assert(sizeof(CUpti_ActivityDevice5) == 184, "CUpti_ActivityDevice5: CUPTI 13.0's size");
/* :records */

#endif
