"""The program behind sampled-operators-mlp.db.xz (README.md here), kept as it ran: written by a
fresh-eyes check of 2026-11-26 (its own timers, printed as JSON to --out). Data, not a test."""
import os, sys, time, json, argparse, statistics as st
import torch, torchvision

p = argparse.ArgumentParser()
p.add_argument('--model', default='mlp')          # mlp | resnet18 | mobilenet
p.add_argument('--iters', type=int, default=200)
p.add_argument('--mark', type=int, default=1)
p.add_argument('--mode', default='inference')    # inference | nograd
p.add_argument('--prep_ms', type=float, default=0.0)   # pure python prep between forwards
p.add_argument('--slow_every', type=int, default=0)
p.add_argument('--slow_kind', default='python')  # python | sleep
p.add_argument('--slow_ms', type=float, default=20.0)
p.add_argument('--batch', type=int, default=8)
p.add_argument('--out', default=None)
p.add_argument('--tt', type=int, default=1)
p.add_argument('--warm', type=int, default=0)
a = p.parse_args()
torch.manual_seed(0)
if a.model == 'mlp':
    m = torch.nn.Sequential(torch.nn.Linear(512,1024), torch.nn.ReLU(), torch.nn.Linear(1024,1024), torch.nn.ReLU(), torch.nn.Linear(1024,10)).eval()
    mk = lambda: torch.randn(a.batch, 512)
elif a.model == 'resnet18':
    m = torchvision.models.resnet18().eval(); mk = lambda: torch.randn(a.batch, 3, 112, 112)
else:
    m = torchvision.models.mobilenet_v3_small().eval(); mk = lambda: torch.randn(a.batch, 3, 160, 160)
ctx = torch.inference_mode if a.mode == 'inference' else torch.no_grad
def spin(ms):
    t_end = time.perf_counter_ns() + int(ms*1e6); x = 0
    while time.perf_counter_ns() < t_end: x += 1
    return x
fw, tt, btw, it_wall = [], [], [], []
slow_idx = []
last_end = None
t0 = time.perf_counter_ns()
with ctx():
    x = mk()
    for i in range(a.iters):
        if a.prep_ms: spin(a.prep_ms); x = mk()
        s = time.perf_counter_ns(); c = time.thread_time_ns() if a.tt else 0
        if last_end is not None: btw.append(s - last_end)
        if a.mark:
            with torch.autograd.profiler.record_function("iteration"):
                if a.slow_every and i % a.slow_every == a.slow_every - 1:
                    slow_idx.append(i)
                    if a.slow_kind == 'sleep': time.sleep(a.slow_ms/1000)
                    else: spin(a.slow_ms)
                if i < a.warm: spin(30)
                f0 = time.perf_counter_ns(); y = m(x); f1 = time.perf_counter_ns()
        else:
            f0 = time.perf_counter_ns(); y = m(x); f1 = time.perf_counter_ns()
        e = time.perf_counter_ns(); ce = time.thread_time_ns() if a.tt else 0
        fw.append(f1 - f0); it_wall.append(e - s); tt.append(ce - c); last_end = e
total = time.perf_counter_ns() - t0
def p50(v): v = sorted(v); return v[(len(v)-1)//2]
half = len(fw)//4  # skip first quarter as warm-up for stats
r = dict(iters=a.iters, fw_p50=p50(fw[half:]), it_p50=p50(it_wall[half:]), cpu_p50=p50(tt[half:]),
         btw_p50=p50(btw[half:]), btw_pct=100*sum(btw[half:])/(sum(btw[half:])+sum(it_wall[half+1:])),
         total_ms=total/1e6, slow_idx=slow_idx[:6],
         fw_offcpu_p50=p50([w-c for w,c in zip(it_wall[half:],tt[half:])]))
if a.slow_every:
    sl=[it_wall[i] for i in slow_idx]; ty=[it_wall[i] for i in range(len(it_wall)) if i not in slow_idx]
    r['slow_mean']=st.mean(sl); r['typ_p50']=p50(ty)
    r['slow_cpu_mean']=st.mean([tt[i] for i in slow_idx]); r['typ_cpu_p50']=p50([tt[i] for i in range(len(tt)) if i not in slow_idx])
print(json.dumps({k:(round(v/1e6,3) if isinstance(v,int) and k not in('iters',) and k.endswith(('p50','mean')) else v) for k,v in r.items()}))
if a.out: json.dump(dict(fw=fw, it=it_wall, tt=tt, btw=btw), open(a.out,'w'))
