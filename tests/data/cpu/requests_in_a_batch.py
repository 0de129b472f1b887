import queue, threading, torch, torch.nn as nn
torch.set_num_threads(1)
m = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 64)).eval()
req, rep = queue.Queue(), queue.Queue()
def worker():
    with torch.inference_mode():
        while req.get() is not None:
            m(torch.randn(8, 64))
            rep.put(1)
t = threading.Thread(target=worker)
t.start()
rf = torch.autograd.profiler.record_function
for i in range(30):
    with rf('iteration_batch'):
        for j in range(4):
            with rf('iteration_request'):
                req.put(1)
                rep.get()
req.put(None)
t.join()
print('done')
