"""tests/gpu/fork.sh: a small MLP trained on random data, fixed seed, deterministic, with a
DataLoader of 4 worker processes (forked after CUDA is up, at every epoch). Each batch goes
through gp_fork_scale (scale.py) on its way in. Prints every loss as a hex float, then the threads
gp_fork_scale ran: "threads N"."""
import os
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale  # noqa: E402

torch.manual_seed(1234)
torch.use_deterministic_algorithms(True)
torch.backends.cudnn.benchmark = False
dev = "cuda"
X = torch.randn(4096, 64)
Y = (X[:, :8].sum(1, keepdim=True) > 0).float()
data = TensorDataset(X, Y)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 1)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
lossf = torch.nn.BCEWithLogitsLoss()
threads = 0
for epoch in range(3):
    g = torch.Generator()
    g.manual_seed(epoch)
    loader = DataLoader(data, batch_size=128, shuffle=True, num_workers=4, generator=g)
    for step, (xb, yb) in enumerate(loader):
        xb, yb = xb.to(dev), yb.to(dev)
        xb, n = scale.launch(xb.contiguous())
        threads += n
        opt.zero_grad()
        loss = lossf(model(xb), yb)
        loss.backward()
        opt.step()
        print("epoch %d step %d loss %s" % (epoch, step, float(loss.item()).hex()))
torch.cuda.synchronize()
print("threads %d" % threads)
