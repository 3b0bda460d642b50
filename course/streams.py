"""Streams, events, pinned memory and CUDA Graphs, behind helpers that also run on a CPU (notebook 10).

A GPU runs queued work in order *per stream*; work on two streams may overlap (a copy under a
computation). Each helper takes a ``device`` (read by ``course.gpu.parse_device``; None means
``course.env.device()``) and says what it does on a CPU, where every operation has finished when
it returns and there is nothing to order or overlap:

- ``stream``: run a block on a side stream (the same function as ``course.gpu.stream``);
- ``pinned``: page-locked host memory for fast, asynchronous host→GPU copies;
- ``record_event`` / ``wait_for``: order work between two streams;
- ``CapturedGraph``: capture a sequence of kernels once as a CUDA Graph, replay it with one launch.
"""

from __future__ import annotations

from course import gpu
from course.gpu import stream  # defined with the device model, where course.gpu.stream has always been

__all__ = ["stream", "pinned", "record_event", "wait_for", "CapturedGraph"]


def pinned(tensor, device=None):
    """A page-locked (pinned) copy of a CPU ``tensor``, for copies to the GPU ``device``.

    The GPU's copy engine reads pinned memory directly, so the copy is faster and can be
    asynchronous (``non_blocking=True``). On a CPU there is no copy engine (and pinning needs
    a GPU driver): the tensor itself is returned.
    """
    if tensor.device.type != "cpu":
        raise ValueError(f"only CPU tensors can be pinned, got one on {tensor.device}")
    return tensor.pin_memory() if gpu.is_cuda(device) else tensor


def record_event(device=None):
    """A CUDA event marking the work queued so far on ``device``'s current stream; None on a CPU.

    On a CPU every operation has finished when it returns, so there is nothing to mark.
    """
    device = gpu.parse_device(device)
    if device.type != "cuda":
        return None
    import torch

    event = torch.cuda.Event()
    event.record(torch.cuda.current_stream(device))
    return event


def wait_for(event, *tensors):
    """Make the current stream wait for ``event`` before using ``tensors`` made on another stream.

    Also tells PyTorch's caching allocator that the tensors are used on this stream, so their
    memory is not reused before this stream is done with it. Nothing to do when ``event`` is
    None (CPU).
    """
    if event is None:
        return
    import torch

    current = torch.cuda.current_stream()
    current.wait_event(event)
    for tensor in tensors:
        tensor.record_stream(current)


class CapturedGraph:
    """``fn(*static_inputs)`` captured once as a CUDA Graph on ``device``, replayed with one launch.

    Put new data into the *same* input tensors (``x.copy_(new)``) and call ``replay()``: it
    reruns the recorded kernels and returns the same output tensor, overwritten. On a CPU
    there are no graphs: ``captured`` is False and ``replay()`` just calls ``fn`` again.
    """

    def __init__(self, fn, *static_inputs, device=None, warmup: int = 3):
        device = gpu.parse_device(device)
        self.fn, self.static_inputs = fn, static_inputs
        self.captured = device.type == "cuda"
        self._graph = None
        if not self.captured:
            self.output = fn(*static_inputs)
            return
        import torch

        # Warm up on a side stream first (lazy initialisation, cuBLAS workspaces), as the
        # PyTorch documentation advises, then record one call.
        side = torch.cuda.Stream(device=device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):
            for _ in range(warmup):
                fn(*static_inputs)
        torch.cuda.current_stream(device).wait_stream(side)
        self._graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self._graph):
            self.output = fn(*static_inputs)

    def replay(self):
        """Run the captured kernels again on the inputs' current contents; returns the output."""
        if self._graph is None:
            self.output = self.fn(*self.static_inputs)
        else:
            self._graph.replay()
        return self.output
