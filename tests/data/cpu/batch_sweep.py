# A plain user benchmark: does batch 32 pay for its latency? which phase sets peak memory?
import sys, time, json, statistics, os
import torch, torch.nn as nn
torch.manual_seed(0)

class SmallCNN(nn.Module):
    def __init__(s):
        super().__init__()
        s.f = nn.Sequential(nn.Conv2d(3,32,3,padding=1), nn.ReLU(), nn.Conv2d(32,64,3,stride=2,padding=1), nn.ReLU(),
                            nn.Conv2d(64,128,3,stride=2,padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        s.head = nn.Linear(128,10)
    def forward(s,x): return s.head(torch.flatten(s.f(x),1))

def status(key):
    for line in open('/proc/self/status'):
        if line.startswith(key): return int(line.split()[1]) * 1024
def reset_hwm():
    try:
        with open('/proc/self/clear_refs','w') as f: f.write('5')
        return True
    except OSError: return False

WARM = 5
PLAN = [  # (label, batch, steady forwards, mode)
    ("no_grad bs1", 1, 1500, "no_grad"),
    ("no_grad bs8", 8, 1200, "no_grad"),
    ("no_grad bs32", 32, 300, "no_grad"),
    ("inference_mode bf16 bs8", 8, 150, "inf_bf16"),
]
scale = float(os.environ.get("SCALE", "1"))
model = SmallCNN().eval()
results = []
total_forwards = 0
for label, bs, n, mode in PLAN:
    n = max(10, int(n * scale))
    x = torch.randn(bs, 3, 32, 32)
    if mode == "no_grad":
        ctx = lambda: torch.no_grad()
        ac = lambda: torch.autocast('cpu', enabled=False)
    else:
        ctx = lambda: torch.inference_mode()
        ac = lambda: torch.autocast('cpu', dtype=torch.bfloat16)
    rss0 = status('VmRSS'); ok = reset_hwm()
    lat = []
    with ctx(), ac():
        t_loop0 = time.perf_counter()
        for i in range(WARM + n):
            t = time.perf_counter()
            y = model(x)
            dt = time.perf_counter() - t
            if i >= WARM: lat.append(dt)
            if i == WARM - 1: t_steady0 = time.perf_counter()
        t_end = time.perf_counter()
    total_forwards += WARM + n
    hwm = status('VmHWM')
    p50 = statistics.median(lat)
    lat.sort()
    r = dict(label=label, batch=bs, forwards=WARM+n, steady=n,
             p50_ms=p50*1e3, p95_ms=lat[int(0.95*len(lat))]*1e3, mean_ms=statistics.mean(lat)*1e3,
             samples_per_s_p50=bs/p50, samples_per_s_loop=bs*n/(t_end-t_steady0),
             loop_s=t_end-t_loop0, rss_before_MiB=rss0/2**20, hwm_MiB=hwm/2**20,
             hwm_delta_MiB=(hwm-rss0)/2**20, hwm_reset=ok)
    results.append(r)
    print(f"{label:26s} fwd={WARM+n:5d} p50={r['p50_ms']:8.3f}ms p95={r['p95_ms']:8.3f}ms "
          f"thr(p50)={r['samples_per_s_p50']:8.1f}/s thr(loop)={r['samples_per_s_loop']:8.1f}/s "
          f"loop={r['loop_s']:.1f}s rss0={r['rss_before_MiB']:.1f}MiB hwm={r['hwm_MiB']:.1f}MiB (+{r['hwm_delta_MiB']:.1f})", flush=True)

if "--witness" in sys.argv:
    # torch.profiler as a second witness: one short stretch per batch size
    from torch.profiler import profile, ProfilerActivity
    for bs in (1, 8, 32):
        x = torch.randn(bs, 3, 32, 32)
        with torch.no_grad(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            for _ in range(5): model(x)
        ev = [e for e in prof.key_averages() if e.key == 'aten::conv2d' or e.key == 'aten::linear' or e.key=='aten::relu']
        tot = sum(e.cpu_time_total for e in prof.key_averages() if e.key in ('aten::conv2d','aten::linear','aten::relu','aten::adaptive_avg_pool2d'))
        print(f"witness bs{bs}: profiler top-level ops cpu time/forward = {tot/5/1e3:.3f} ms")
        prof.export_chrome_trace(f"/tmp/fe28u-a/witness_bs{bs}.json")
print("TOTAL_FORWARDS", total_forwards)
json.dump(results, open(os.environ.get("OUTJSON", "/tmp/fe28u-a/last_plain.json"), "w"), indent=1)
