"""gen_records.py: writes the activity records of vendor/cuda/include/cupti.h, between its
"records:" markers, from a CUDA toolkit's CUPTI: for each record infprof reads, the fields it
reads (FIELDS below), each with CUPTI's type and at CUPTI's offset (a compiled probe measures
them), padded to CUPTI's size. Run it when infprof reads a new field or moves to a new CUPTI;
tests/build/test_vendored_cuda.py then holds the result to the toolkit's headers.

usage: python3 vendor/cuda/gen_records.py [CUDA_INCLUDE]   (default /usr/local/cuda/include)"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = os.path.join(HERE, "include", "cupti.h")
# record: the fields infprof reads (a dotted name: a field of a nested struct).
FIELDS = {
    "CUpti_ActivityKernel10": ["start", "end", "deviceId", "contextId", "streamId",
                               "correlationId", "gridX", "gridY", "gridZ", "blockX", "blockY",
                               "blockZ", "registersPerThread", "staticSharedMemory",
                               "dynamicSharedMemory", "name", "graphId", "graphNodeId"],
    "CUpti_ActivityMemcpy6": ["copyKind", "srcKind", "dstKind", "flags", "bytes", "start", "end",
                              "deviceId", "streamId", "correlationId", "runtimeCorrelationId",
                              "graphNodeId", "graphId"],
    "CUpti_ActivityMemcpyPtoP4": ["copyKind", "srcKind", "dstKind", "flags", "bytes", "start",
                                  "end", "srcDeviceId", "dstDeviceId", "streamId",
                                  "correlationId", "graphNodeId", "graphId"],
    "CUpti_ActivityMemset4": ["value", "bytes", "start", "end", "deviceId", "streamId",
                              "correlationId", "flags", "memoryKind", "graphNodeId", "graphId"],
    "CUpti_ActivityMemory4": ["memoryOperationType", "memoryKind", "correlationId", "address",
                              "bytes", "timestamp", "deviceId", "streamId", "isAsync",
                              "memoryPoolConfig.memoryPoolType", "memoryPoolConfig.address"],
    "CUpti_ActivityMemoryPool3": ["memoryPoolOperationType", "memoryPoolType", "correlationId",
                                  "address", "releaseThreshold", "size", "utilizedSize",
                                  "timestamp", "deviceId"],
    "CUpti_ActivityAPI": ["cbid", "start", "end", "threadId", "correlationId", "returnValue"],
    "CUpti_ActivitySynchronization2": ["type", "start", "end", "correlationId", "contextId",
                                       "streamId", "cudaEventId"],
    "CUpti_ActivityExternalCorrelation": ["externalKind", "externalId", "correlationId"],
    "CUpti_ActivityGraphTrace2": ["correlationId", "start", "end", "deviceId", "graphId",
                                  "streamId"],
    "CUpti_ActivityDevice5": ["globalMemorySize", "coreClockRate", "numMultiprocessors", "id",
                              "computeCapabilityMajor", "computeCapabilityMinor", "uuid",
                              "name"],
}


def body_of(text, record):
    """The text of the typedef struct named record."""
    end = re.search(r"\n\}\s*" + record + r"\s*;", text)
    start = text.rfind("typedef struct", 0, end.start())
    return text[start:end.start()]


def type_of(body, field):
    """A field's declared type in a struct body (outside comments)."""
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    m = re.search(r"^\s*([A-Za-z_][\w\s\*]*?)\s*\b" + field + r"\s*(\[\d+\])?\s*;", body, re.M)
    if not m:
        sys.exit(f"gen_records.py: no field {field} found")
    return m.group(1).replace("const char*", "const char *"), m.group(2) or ""


def measure(include, fields):
    src = "#include <cupti.h>\n#include <stddef.h>\n#include <stdio.h>\nint main(void) {\n"
    for rec, names in fields.items():
        src += f'    printf("{rec} .sizeof %zu\\n", sizeof({rec}));\n'
        for f in names:
            src += (f'    printf("{rec} {f} %zu %zu\\n", offsetof({rec}, {f}),'
                    f" sizeof((({rec} *)0)->{f}));\n")
    src += "    return 0;\n}\n"
    with tempfile.TemporaryDirectory() as d:
        c, exe = os.path.join(d, "p.c"), os.path.join(d, "p")
        with open(c, "w") as f:
            f.write(src)
        subprocess.check_call(["cc", "-I", include, c, "-o", exe])
        out = subprocess.check_output([exe], text=True)
    got = {}
    for line in out.splitlines():
        p = line.split()
        if p[1] == ".sizeof":
            got[(p[0], None)] = int(p[2])
        else:
            got[(p[0], p[1])] = (int(p[2]), int(p[3]))
    return got


def emit_fields(lines, items, base, indent):
    """items: [(offset, size, name, type, array)] sorted; base: the struct's own offset."""
    at = base
    for off, size, name, typ, arr in items:
        if off > at:
            lines.append(f"{indent}unsigned char ip_pad_{at - base}[{off - at}];")
        lines.append(f"{indent}{typ} {name}{arr};")
        at = off + size
    return at


def main():
    include = sys.argv[1] if len(sys.argv) > 1 else "/usr/local/cuda/include"
    text = ""
    for name in sorted(os.listdir(include)):
        if name.startswith("cupti") and name.endswith(".h"):
            with open(os.path.join(include, name)) as f:
                text += f.read() + "\n"
    got = measure(include, FIELDS)
    out = []
    for rec, names in FIELDS.items():
        body = body_of(text, rec)
        size = got[(rec, None)]
        flat, nested = [], {}
        for f in names:
            off, fsize = got[(rec, f)]
            if "." in f:
                outer, inner = f.split(".")
                typ, arr = type_of_nested(body, outer, inner)
                nested.setdefault(outer, []).append((off, fsize, inner, typ, arr))
            else:
                typ, arr = type_of(body, f)
                flat.append((off, fsize, f, typ, arr))
        out.append("typedef struct IP_CUPTI_RECORD {")
        out.append("    CUpti_ActivityKind kind;")
        items = sorted(flat)
        for outer, inner in nested.items():
            inner.sort()
            start = inner[0][0]
            end = inner[-1][0] + inner[-1][1]
            items.append((start, end - start, outer, None, inner))
        items.sort(key=lambda x: x[0])
        at = 4
        for off, fsize, name, typ, arr in items:
            if off > at:
                out.append(f"    unsigned char ip_pad_{at}[{off - at}];")
            if typ is None:  # a nested struct: its fields, padded from its first one read
                out.append("    struct __attribute__((__packed__)) {")
                emit_fields(out, arr, off, "        ")
                out.append(f"    }} {name};")
            else:
                out.append(f"    {typ} {name}{arr};")
            at = off + fsize
        if size > at:
            out.append(f"    unsigned char ip_pad_{at}[{size - at}];")
        out.append(f"}} {rec};")
        out.append(f"_Static_assert(sizeof({rec}) == {size}, \"{rec}: CUPTI 13.0's size\");")
    with open(HEADER) as f:
        h = f.read()
    a = h.index("/* records: */\n") + len("/* records: */\n")
    b = h.index("/* :records */")
    h = h[:a] + "\n".join(out) + "\n" + h[b:]
    with open(HEADER, "w") as f:
        f.write(h)


def type_of_nested(body, outer, inner):
    i = body.index("} " + outer)
    start = body.rfind("struct", 0, i)
    return type_of(body[start:i], inner)


if __name__ == "__main__":
    main()
