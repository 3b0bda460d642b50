"""Named checks for notebook 10 (the GPU performance toolkit): one ``check_*`` per exercise.

Each check runs the learner's answer against a reference on sizes that are not multiples of a
block, prints ✅ or ❌ with a specific diagnosis (which value, which rule), and registers two
hints (a nudge, then the method) for ``course.checks.hint()``. Rules the values alone cannot
prove are checked too: the custom op must compile as one graph with a fake implementation, the
fixed training loop must not call ``.item()`` or copy to the device on every step (counted by
``torch.profiler``), the launch-configuration picker must not be fooled by a slow first call.
"""

from __future__ import annotations

import inspect
import re
import time

import numpy as np

from course import checks

# ---------------------------------------------------------------------------------------------
# Exercise 1: arithmetic intensity of a matmul


def check_matmul_intensity(fn) -> bool:
    """FLOP per byte of an n×n matmul when A, B and C each cross memory once."""
    name = "matmul_intensity"
    hints = [
        "Intensity is work divided by traffic: count the FLOP of the whole product, then the bytes of "
        "every matrix that crosses memory (inputs and output).",
        "Count the work per output element first: how many multiply-adds does one element of C take, and how "
        "many FLOP is a multiply-add? Then multiply by the number of elements of C. For the traffic, count how many "
        "matrices cross memory, how many elements each has, and how many bytes each element is; "
        "the answer grows with n, because the work grows faster than the data.",
    ]
    cases = [(1, 4), (64, 4), (1024, 4), (4096, 2), (1000, 8)]
    # rtol 1e-6: a formula computed in float32 (np.float32, a float32 tensor) is right to about 1e-7; every
    # wrong count (a factor 2 or 3/2 off) is far outside
    return checks.check_function(fn, lambda n, size: 2 * n**3 / (3 * n**2 * size), cases, name=name,
                                 rtol=1e-6, hints=hints)


# ---------------------------------------------------------------------------------------------
# Exercise 2: effective bandwidth of a vector add


def check_vector_add_bandwidth(fn, measured=None) -> bool:
    """GB/s reached by a float32 vector add of n elements that took ``seconds``; ``measured`` = (n, s) to add."""
    name = "vector_add_bandwidth"
    hints = [
        "Bandwidth is bytes moved per second. A vector add reads two arrays and writes one; "
        "GB means 10⁹ bytes here, not 2³⁰.",
        "Count what crosses memory once: each array the kernel reads or writes has n elements of a known size in "
        "bytes. Their total over the time is bytes per second; then change the unit to the one the question asks "
        "for (decimal gigabytes).",
    ]
    cases = [(1, 1.0), (2**20, 1e-3), (10**8, 0.25)]
    # (the notebook's own measurement, when there is one: a time that was not measured is no case)
    if measured is not None and len(measured) == 2 and all(isinstance(v, (int, float, np.integer, np.floating))
                                                           and v > 0 for v in measured):
        cases.append((int(measured[0]), float(measured[1])))
    # rtol 1e-6: float32 arithmetic passes, every wrong count of bytes or units does not
    return checks.check_function(fn, lambda n, s: 3 * 4 * n / s / 1e9, cases, name=name, rtol=1e-6, hints=hints)


# ---------------------------------------------------------------------------------------------
# Exercise 3: a Triton kernel, fused bias + ReLU


BIAS_RELU_SHAPES = [(1, 1), (3, 5), (4, 16), (7, 130)]


def run_bias_relu(kernel, x, bias):
    """Launch ``kernel(x_ptr, bias_ptr, out_ptr, n_cols, BLOCK_SIZE)`` with one program per row."""
    import torch

    from course import kernels_triton

    rows, cols = x.shape
    block = kernels_triton.triton.next_power_of_2(cols)
    # Each tensor lies in a larger buffer, between guard zones of a sentinel value: Triton checks no bounds (its
    # interpreter on the CPU neither), so a store without the columns' mask, or with a wrong row stride, would
    # land in whatever memory follows (and crash Python later); here it lands in a guard zone, and says so.
    guard = 2 * rows * block + block
    sentinel = 1234.5

    def guarded(values):
        buffer = torch.full((values.numel() + 2 * guard,), sentinel, dtype=values.dtype, device=values.device)
        inside = buffer[guard:guard + values.numel()].view(values.shape)
        inside.copy_(values)
        return buffer, inside

    (x_buffer, x_in), (bias_buffer, bias_in) = guarded(x), guarded(bias)
    out_buffer, out = guarded(torch.full_like(x, float("nan")))  # NaN: an element the kernel never wrote shows up
    kernel[(rows,)](x_in, bias_in, out, cols, BLOCK_SIZE=block)
    for buffer, what in ((out_buffer, "out"), (x_buffer, "x"), (bias_buffer, "bias")):
        outside = torch.cat([buffer[:guard], buffer[buffer.numel() - guard:]]).cpu()
        touched = torch.nonzero(outside != sentinel).flatten()
        if len(touched):
            first = int(touched[0])
            where = (f"{guard - first} element(s) before its first" if first < guard
                     else f"{first - guard + 1} element(s) after its last")
            raise IndexError(f"the kernel stored outside `{what}` ({where}): a store needs the same mask as the "
                             f"loads (the columns past n_cols), and each row starts at row × n_cols")
    return out


def _kernel_source(kernel) -> str | None:
    for attribute in ("src",):
        if isinstance(getattr(kernel, attribute, None), str):
            return kernel.src
    fn = getattr(kernel, "fn", None)
    try:
        return inspect.getsource(fn if fn is not None else kernel)
    except (OSError, TypeError):
        return None


def check_bias_relu(kernel) -> bool:
    """``out[r, c] = max(x[r, c] + bias[c], 0)`` by a Triton kernel, one program per row, on rows that are not powers of two."""
    import torch

    from course import kernels_triton

    name = "bias_relu_kernel"
    hints = [
        "Each program owns one row. It needs the row's offsets into x, the same column offsets into the bias "
        "(the bias is one value per column, shared by all rows), and a mask for the columns past n_cols.",
        "Build the column offsets with tl.arange(0, BLOCK_SIZE); load x at row × n_cols + columns and the bias "
        "at columns (both masked); add first, then take the maximum with 0 (tl.maximum); store at the x offsets.",
    ]
    source = _kernel_source(kernel)
    if kernel is None or kernel is ... or (source is not None and "tl.store" not in source):
        checks.register_hints(name, hints)
        return checks.not_attempted(name)
    if not hasattr(kernel, "__getitem__"):
        checks.register_hints(name, hints)
        return checks._report(name, False, f"expected a @triton.jit kernel, got {type(kernel).__name__}")
    device = torch.device("cpu" if kernels_triton.INTERPRETED else "cuda")
    generator = torch.Generator().manual_seed(3)
    cases = []
    for rows, cols in BIAS_RELU_SHAPES:
        x = torch.randn(rows, cols, generator=generator).to(device)
        bias = torch.randn(cols, generator=generator).to(device)
        cases.append((x, bias))
    return checks.check_function(lambda x, b: run_bias_relu(kernel, x, b),
                                 lambda x, b: torch.relu(x + b), cases, name=name, hints=hints)


# ---------------------------------------------------------------------------------------------
# Exercise 4: a custom op that torch.compile keeps


def check_custom_op(op) -> bool:
    """``op`` (a ``torch.library.custom_op``) computes tanh through NumPy, passes opcheck and compiles as one graph."""
    import torch

    name = "custom_op"
    hints = [
        "torch.compile runs your function on FakeTensors — tensors with a shape and a dtype but no memory — "
        "so NumPy cannot run there. The op must be opaque to the compiler and say what it returns without "
        "running.",
        "Decorate the NumPy function with torch.library.custom_op(\"namespace::name\", mutates_args=()) (its "
        "arguments and result annotated as torch.Tensor); then register a second function with the op's "
        "register_fake decorator that returns an empty tensor like its input.",
    ]
    checks.register_hints(name, hints)
    if op is None or op is ...:
        return checks.not_attempted(name)
    is_custom_op = type(op).__name__ in ("CustomOpDef", "OpOverload", "OpOverloadPacket")
    if not is_custom_op:
        return checks._report(name, False, f"expected a torch.library custom op, got {type(op).__name__}: "
                                           "decorate the function with torch.library.custom_op")
    x = torch.linspace(-3, 3, 13)
    if not checks.check_function(op, torch.tanh, [(x,), (torch.randn(4, 5),)], name=name, rtol=1e-5, atol=1e-6):
        return False
    try:
        torch.library.opcheck(op, (torch.randn(3, 4),))
    except Exception as error:
        reason = str(error).split("(scroll up")[0].strip()
        if "fake" in reason.lower():
            reason = ("torch.compile has no fake implementation of your op, so it cannot know the output's "
                      "shape without running NumPy: " + reason[-220:])
        return checks._report(name, False, f"opcheck failed: {reason[:400]}")
    torch._dynamo.reset()
    try:
        explanation = torch._dynamo.explain(lambda t: op(t * 2) + 1)(torch.randn(8))
    except Exception as error:
        return checks._report(name, False, f"torch.compile failed on `op(t * 2) + 1`: {str(error).splitlines()[0]}")
    if (explanation.graph_count, explanation.graph_break_count) != (1, 0):
        return checks._report(name, False, f"`op(t * 2) + 1` compiled as {explanation.graph_count} graphs with "
                                           f"{explanation.graph_break_count} breaks; expected 1 graph, 0 breaks")
    return checks._report(name, True, "right values, opcheck passes, and torch.compile keeps it in one graph.")


# ---------------------------------------------------------------------------------------------
# Exercise 5: find the performance bug with the profiler and remove it

TRAIN_STEPS = 8


def training_problem(device, steps: int = TRAIN_STEPS):
    """A tiny model, its optimizer and a data set on the host: (model, optimizer, batches, targets)."""
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    generator = torch.Generator().manual_seed(1)
    batches = torch.randn(steps, 8, 16, generator=generator)       # on the host, as a data set is
    targets = torch.randint(0, 4, (steps, 8), generator=generator)
    return model, optimizer, batches, targets


def train_slow(model, optimizer, batches, targets, device):
    """The loop with the two performance bugs (the notebook shows it): a copy and a sync per step."""
    import torch.nn.functional as F

    losses = []
    for x, y in zip(batches, targets):
        x, y = x.to(device), y.to(device)          # host → device, every step
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())                 # waits for the GPU, every step
    return losses


def count_syncs_and_copies(train, device, steps: int = TRAIN_STEPS):
    """Run ``train`` under torch.profiler: (its losses as a list, number of .item() calls, number of .to() calls)."""
    import torch

    model, optimizer, batches, targets = training_problem(device, steps)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        losses = train(model, optimizer, batches, targets, device)
    counts = {event.key: event.count for event in profile.key_averages()}
    items = counts.get("aten::item", 0)
    copies = counts.get("aten::to", 0)
    if hasattr(losses, "tolist"):
        losses = losses.tolist()
    return losses, items, copies


def check_training_loop(train, device=None) -> bool:
    """The same losses as ``train_slow`` (a list or a tensor), with neither a ``.item()`` nor a ``.to(device)`` per step."""
    import torch

    from course import gpu

    name = "fast_training_loop"
    hints = [
        "Open the profiler table of the slow loop: which aten:: ops are called once per step that a GPU "
        "must wait for or pay a transfer for? The data set is small enough to live on the device.",
        "Move the whole data set to the device once, before the loop; inside it, keep each loss as a tensor "
        "(detached), and return them stacked into one tensor: whoever reads it waits once.",
    ]
    checks.register_hints(name, hints)
    device = gpu.parse_device(device)
    try:
        losses, items, copies = count_syncs_and_copies(train, device)
    except NotImplementedError:
        return checks.not_attempted(name)
    except Exception as error:
        return checks._learner_error(name, "your loop", error)
    if losses is None or losses is ...:
        return checks.not_attempted(name)
    expected, slow_items, slow_copies = count_syncs_and_copies(train_slow, device)
    try:
        checks.compare(np.asarray(losses, dtype=np.float64), np.asarray(expected), rtol=1e-5, atol=1e-6,
                       path="losses")
    except checks.Mismatch as mismatch:
        return checks._report(name, False, f"{mismatch} (the fixed loop must train exactly as the slow one)")
    except Exception as error:
        return checks._report(name, False, f"return the list of {TRAIN_STEPS} losses, one per step ({error})")
    if items >= TRAIN_STEPS:
        return checks._report(name, False, f"the profiler counts {items} aten::item calls in {TRAIN_STEPS} steps: "
                                           "a .item() per step waits for the GPU each time (return the losses as "
                                           "one tensor; the caller reads it once)")
    internal = slow_copies - 2 * TRAIN_STEPS  # .to() calls PyTorch makes itself (the slow loop adds 2 a step)
    if copies - internal >= TRAIN_STEPS:
        return checks._report(name, False, f"the profiler counts {copies - internal} aten::to calls of yours in "
                                           f"{TRAIN_STEPS} steps: a copy to the device per step")
    return checks._report(name, True, f"same losses; the profiler counts {items} .item() and {copies - internal} "
                                      f".to() calls of yours (the slow loop: {slow_items} and {slow_copies - internal}).")


# ---------------------------------------------------------------------------------------------
# Exercise 6: gradient accumulation equal to the big batch


def accumulation_problem(batch: int = 10):
    """A small classifier and one batch: (model, inputs, targets), the same every call."""
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.Tanh(), torch.nn.Linear(12, 3)).double()
    generator = torch.Generator().manual_seed(2)
    inputs = torch.randn(batch, 6, generator=generator, dtype=torch.float64)
    targets = torch.randint(0, 3, (batch,), generator=generator)
    return model, inputs, targets


def full_batch_gradients(model, inputs, targets):
    """The gradients of the mean cross-entropy over the whole batch (what accumulation must reproduce)."""
    import torch.nn.functional as F

    model.zero_grad(set_to_none=True)
    F.cross_entropy(model(inputs), targets).backward()
    return [p.grad.clone() for p in model.parameters()]


def check_accumulate_gradients(fn) -> bool:
    """``fn(model, inputs, targets, micro_batch)`` leaves in ``.grad`` the full batch's gradients, any micro size."""
    name = "accumulate_gradients"
    hints = [
        "backward() adds into .grad, so several backward calls sum their gradients. The full batch's loss is a "
        "mean over all samples, and a micro-batch's loss is a mean over fewer: each must be weighted.",
        "Loop over slices of the batch; for each, compute the mean loss, multiply it by (samples in this slice / "
        "samples in the whole batch), call backward. Zero the gradients once, before the loop — not inside it.",
    ]
    checks.register_hints(name, hints)
    for batch, micro in [(10, 4), (10, 5), (10, 10), (7, 1)]:
        model, inputs, targets = accumulation_problem(batch)
        expected = full_batch_gradients(model, inputs, targets)
        for p in model.parameters():
            p.grad = None
        try:
            result = fn(model, inputs, targets, micro)
        except NotImplementedError:
            return checks.not_attempted(name)
        except Exception as error:
            return checks._learner_error(name, f"with a batch of {batch} in micro-batches of {micro}", error)
        if result is ...:
            return checks.not_attempted(name)
        got = [p.grad for p in model.parameters()]
        if any(g is None for g in got):
            return checks._report(name, False, f"batch {batch}, micro-batches of {micro}: some parameters have no "
                                               ".grad — did the function call backward()?")
        ratio = float(got[-1].norm() / expected[-1].norm()) if float(expected[-1].norm()) else 1.0
        for i, (g, e) in enumerate(zip(got, expected)):
            if not np.allclose(g.numpy(), e.numpy(), rtol=1e-7, atol=1e-10):
                detail = f"batch {batch} in micro-batches of {micro}: parameter {i}'s gradient differs from the full batch's"
                if abs(ratio - 1) > 1e-3:
                    detail += f" (the last layer's is {ratio:.3g}× as large)"
                return checks._report(name, False, detail)
    return checks._report(name, True, "the accumulated gradients equal the full batch's, for micro-batches that "
                                      "divide the batch and for ones that do not.")


# ---------------------------------------------------------------------------------------------
# Exercise 7: pick the faster launch configuration, honestly


def _candidates(first_is_faster: bool):
    """Two stand-in configurations: one pays a long first call (compiling, autotuning) and is fast afterwards."""
    state = {"calls": 0}

    def compiles_first():
        state["calls"] += 1
        time.sleep(0.15 if state["calls"] == 1 else 0.001)

    def steady():
        time.sleep(0.012)

    return {"block 1024": compiles_first, "block 128": steady} if first_is_faster else \
        {"block 128": steady, "block 1024": compiles_first}


def check_pick_faster(fn) -> bool:
    """``fn(candidates)`` returns the name of the configuration with the faster steady-state call."""
    name = "pick_faster"
    hints = [
        "The first call of a configuration can include one-time work (compiling, autotuning, allocating) that "
        "later calls do not pay; and one call of each is noise.",
        "Time each candidate with course.timing.benchmark(fn, device=DEVICE, warmup=…, repeat=…), which warms "
        "up and synchronises, and compare the medians; return the name of the smaller one.",
    ]
    checks.register_hints(name, hints)
    for first in (True, False):
        candidates = _candidates(first)
        try:
            picked = fn(candidates)
        except NotImplementedError:
            return checks.not_attempted(name)
        except Exception as error:
            return checks._learner_error(name, "with two candidates", error)
        if picked is ... or picked is None:
            return checks.not_attempted(name)
        if picked not in candidates:
            return checks._report(name, False, f"returned {picked!r}; return one of the names {sorted(candidates)}")
        if picked != "block 1024":
            return checks._report(name, False, "picked 'block 128' (12 ms a call) over 'block 1024' (1 ms a call "
                                               "after a 150 ms first call): the first call was timed")
    return checks._report(name, True, "picks the configuration that is faster once warm, in either order.")


# ---------------------------------------------------------------------------------------------
# Exercise 8: the backward kernel of leaky ReLU, as a custom op

LEAKY_RELU_FORWARD = r"""
extern "C" __global__ void leaky_relu_forward(const scalar_t* x, scalar_t* y, scalar_t slope, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0 ? x[i] : slope * x[i];
}
"""


#: The exercise's stub as the notebook hands it out: a source equal to it (comments and spacing aside) is
#: "not attempted yet"; anything else is an attempt, whatever it stores through (a helper, a pointer).
LEAKY_RELU_BACKWARD_STUB = r"""
extern "C" __global__ void leaky_relu_backward(const scalar_t* x, const scalar_t* grad_y,
                                               scalar_t* grad_x, scalar_t slope, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    // TODO: for the threads that have an element, write grad_x[i]
}
"""


def check_leaky_relu_backward(backward_source, device=None, slope: float = 0.1) -> bool:
    """The CUDA C backward of leaky ReLU: gradients equal PyTorch's on odd sizes, then gradcheck in float64."""
    import torch
    import torch.nn.functional as F

    from course import gpu, kernels_torch

    name = "leaky_relu_backward"
    hints = [
        "The chain rule: grad_x is grad_y times the derivative of the forward at x. Leaky ReLU's derivative "
        "takes one of two values, depending on the sign of x.",
        "Write down the forward's derivative for each sign of x (the forward kernel's two branches tell you "
        "both), then apply the chain rule element by element: each thread with an element (the same guard as "
        "the forward) scales the incoming gradient at its position by that derivative and stores the product "
        "at the same position of grad_x. Keep every value in scalar_t.",
    ]
    checks.register_hints(name, hints)
    if not isinstance(source := backward_source, str) or not source.strip():
        return checks.not_a_kernel(name, source or "", name)  # (a function, bytes: what the exercise takes)
    without_comments = re.sub(r"//[^\n]*|/\*.*?\*/", " ", source, flags=re.S)
    if " ".join(without_comments.split()) == " ".join(re.sub(r"//[^\n]*|/\*.*?\*/", " ", LEAKY_RELU_BACKWARD_STUB,
                                                               flags=re.S).split()):
        return checks.not_attempted(name)  # (the stub as the notebook hands it out)
    if (wrong := checks.not_cuda_source(source, name)) is not None:
        return checks._report(name, False, wrong)
    # The element type: the check runs float32 and float64 tensors through the same source, so the kernel is
    # written once with scalar_t (a float parameter would take the float32 copy and refuse the float64 one)
    signature = re.search(r"\bleaky_relu_backward\s*\(([^)]*)\)", without_comments)
    fixed = [p.strip() for p in (signature.group(1).split(",") if signature else []) if re.search(r"\b(float|double)\b", p)]
    if fixed:
        return checks._report(name, False, f"`{' '.join(fixed[0].split())}` has a fixed element type: write the "
                              "parameters with scalar_t (const scalar_t* x, …, scalar_t slope), as the stub has them — "
                              "the check makes a float and a double copy of your kernel and runs float32 and float64 "
                              "tensors through them")
    # Compile the learner's kernel alone first (scalar_t as float), so that a compile error names their kernel once,
    # with the lines of their own source (the op's source is the forward kernel's and theirs, twice)
    from course import cuda

    try:
        cuda.RawKernel(re.sub(r"\bscalar_t\b", "float", source), name, backend="cpu").compile()
    except Exception as error:
        text = str(error)
        return checks._report(name, False, text if "does not compile" in text else f"does not compile: {text}")
    device = gpu.parse_device(device)
    try:
        op = kernels_torch.elementwise_op(LEAKY_RELU_FORWARD + source, "leaky_relu_forward",
                                          "leaky_relu_backward", n_scalars=1)
    except Exception as error:
        return checks._report(name, False, f"{type(error).__name__}: {error}")

    def gradient(x, function):
        x = x.clone().requires_grad_()
        weights = torch.linspace(-1, 2, x.numel(), dtype=x.dtype, device=x.device)  # a grad_y that is not all ones
        (function(x) * weights).sum().backward()
        return x.grad

    generator = torch.Generator().manual_seed(4)
    cases = [(torch.randn(n, generator=generator, dtype=dtype).to(device),)
             for n, dtype in [(1, torch.float32), (255, torch.float32), (1000, torch.float32), (257, torch.float64)]]
    if not checks.check_function(lambda x: gradient(x, lambda t: op(t, slope)),
                                 lambda x: gradient(x, lambda t: F.leaky_relu(t, slope)), cases, name=name):
        return False
    x = torch.randn(200, generator=generator, dtype=torch.float64).to(device)
    x = (x + 0.1 * x.sign()).requires_grad_()   # away from the kink at 0, where there is no derivative
    return checks.check_true(
        lambda: torch.autograd.gradcheck(lambda t: op(t, slope), (x,), raise_exception=False),
        name=name, fail="gradcheck disagrees with your backward kernel",
        success="your backward kernel matches finite differences of the forward one, as a custom op.")
