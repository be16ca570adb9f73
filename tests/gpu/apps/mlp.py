# PyTorch: 200 training steps of a small MLP on fixed seeds. Prints every loss as the exact
# bits of the float (float.hex), so runs with and without the shim can be compared bit for bit.
import os
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch

torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = torch.device("cuda")

x = torch.randn(512, 64, device=dev)
y = torch.randint(0, 10, (512,), device=dev)
model = torch.nn.Sequential(
    torch.nn.Linear(64, 256), torch.nn.ReLU(),
    torch.nn.Linear(256, 256), torch.nn.GELU(),
    torch.nn.Linear(256, 10)).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = torch.nn.CrossEntropyLoss()
for step in range(200):
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    print(step, loss.item().hex())
print("torch", torch.__version__, "device", torch.cuda.get_device_name(0))
