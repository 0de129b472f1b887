"""server_prog.py: a small inference server, as people write them: Python's ThreadingHTTPServer on
127.0.0.1 (a free port, printed as "port N"), a small torch MLP under inference_mode; GET /infer
runs one forward and answers with the server's own time of it ("own NS", perf_counter around the
forward) and the request's number; GET /quit stops the server. Each handler thread's forward is
one Python module call: an iteration to infprof."""
import http.server
import threading
import time

import torch

torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                            torch.nn.Linear(512, 512), torch.nn.ReLU(),
                            torch.nn.Linear(512, 10)).eval()
lock = threading.Lock()
count = 0


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        global count
        if self.path == "/quit":
            self.send_response(200)
            self.end_headers()
            threading.Thread(target=server.shutdown).start()
            return
        x = torch.randn(8, 256)
        with torch.inference_mode():
            t0 = time.perf_counter_ns()
            model(x)
            own = time.perf_counter_ns() - t0
        with lock:
            count += 1
            n = count
        body = f"{n} own {own}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print("port", server.server_address[1], flush=True)
server.serve_forever()
