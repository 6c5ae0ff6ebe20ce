"""An element-wise add written in C++ (load_inline), used two ways: the difference torch.compile sees.

    get_model()            calls the kernel from a plain torch.autograd.Function: dynamo cannot
                           trace the compiled extension, so the graph breaks around it (GB0007).
    get_model_custom_op()  registers the same kernel with torch.library.custom_op + register_fake:
                           dynamo treats it as an opaque op and the model compiles as one graph.

Profile both and compare the graph breaks and latency:

    python3 main.py profile resources/models/custom_kernel.py --backend eager --out out/fn
    python3 main.py profile resources/models/custom_kernel.py:get_model_custom_op --backend eager --out out/op

The C++ (and, when CUDA is present, CUDA) build needs a C++ compiler and the ninja package; it is
cached under ~/.cache/torch_extensions, so only the first load is slow.
"""

import hashlib

import torch

CPP_SOURCE = r"""
#include <torch/extension.h>

torch::Tensor add_cpu(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.sizes() == b.sizes(), "add_cpu: shapes differ");
    auto a_c = a.contiguous().to(torch::kFloat);
    auto b_c = b.contiguous().to(torch::kFloat);
    auto out = torch::empty_like(a_c);
    const float* pa = a_c.data_ptr<float>();
    const float* pb = b_c.data_ptr<float>();
    float* po = out.data_ptr<float>();
    const int64_t n = a_c.numel();
    at::parallel_for(0, n, 2048, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) po[i] = pa[i] + pb[i];
    });
    return out;
}
"""

CUDA_SOURCE = r"""
#include <torch/extension.h>

__global__ void add_kernel(const float* a, const float* b, float* out, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b) {
    auto a_c = a.contiguous().to(torch::kFloat);
    auto b_c = b.contiguous().to(torch::kFloat);
    auto out = torch::empty_like(a_c);
    const int64_t n = a_c.numel();
    const int threads = 256;
    add_kernel<<<(n + threads - 1) / threads, threads>>>(a_c.data_ptr<float>(), b_c.data_ptr<float>(),
                                                           out.data_ptr<float>(), n);
    return out;
}
"""

_extension = None


def build_extension():
    """Build (or load the cached build of) the kernel; a clear error when the toolchain is missing."""
    global _extension
    if _extension is not None:
        return _extension
    from torch.utils import cpp_extension

    with_cuda = torch.cuda.is_available() and cpp_extension.CUDA_HOME is not None
    sources = CPP_SOURCE + (CUDA_SOURCE if with_cuda else "")
    name = "profiler_add_" + hashlib.sha1(sources.encode()).hexdigest()[:10]  # cache key: the source
    functions = ["add_cpu"] + (["add_cuda"] if with_cuda else [])
    try:
        if with_cuda:
            _extension = cpp_extension.load_inline(
                name=name,
                cpp_sources="torch::Tensor add_cpu(torch::Tensor a, torch::Tensor b);\n"
                "torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b);",
                cuda_sources=CPP_SOURCE + CUDA_SOURCE,
                functions=functions,
                verbose=False,
            )
        else:
            _extension = cpp_extension.load_inline(
                name=name, cpp_sources=CPP_SOURCE, functions=functions, verbose=False
            )
    except (RuntimeError, OSError, ImportError) as exc:
        raise RuntimeError(
            "building the C++ add kernel failed: it needs a C++ compiler (g++) and the ninja package "
            f"(pip install ninja). torch said: {str(exc).strip().splitlines()[-1] if str(exc).strip() else exc}"
        ) from exc
    return _extension


def _add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    ext = build_extension()
    if a.is_cuda and hasattr(ext, "add_cuda"):
        return ext.add_cuda(a, b)
    return ext.add_cpu(a, b)


# ---- way 1: a plain autograd.Function (dynamo cannot see inside the extension: graph break)


class AddFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        return _add(a, b)

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


# ---- way 2: a registered custom op with a fake (meta) implementation (no graph break)


@torch.library.custom_op("profiler_examples::add", mutates_args=())
def custom_add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return _add(a, b)


@custom_add.register_fake
def _(a, b):
    return torch.empty_like(a)


class KernelModel(torch.nn.Module):
    def __init__(self, add):
        super().__init__()
        self.add = add
        self.scale = torch.nn.Parameter(torch.full((1,), 0.5))

    def forward(self, x):
        y = torch.sin(x) * self.scale
        z = self.add(y, x)
        return torch.relu(z) + 1


def get_model():
    build_extension()
    return KernelModel(AddFunction.apply)


def get_model_custom_op():
    build_extension()
    return KernelModel(custom_add)


def get_example_inputs():
    torch.manual_seed(0)
    return (torch.randn(256, 1024),)
