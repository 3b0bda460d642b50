"""Getting a model out of PyTorch with ONNX: export, look inside, run, compare (notebook 09).

Notebook 09 first does each step in the open; these helpers are the same steps, for reuse:

    path = export_onnx(model, (example,), out / "unet.onnx")   # dynamic batch, saved, checked
    graph_summary(path)                                       # opset, operators, inputs/outputs
    session = ort_session(path, threads=4)                    # ONNX Runtime, explicit threads
    got = run_session(session, images)[0]                     # tensors or arrays in, arrays out
    report = compare_outputs(expected, got, atol=1e-4, rtol=1e-3)
    assert report.ok, report
    binding = bind_torch(session, [images], [logits])          # IOBinding: torch tensors in place, no copies
    session.run_with_iobinding(binding)

onnx and onnxruntime are imported inside the functions: ``import course`` stays fast and works
without them; ``require_onnx()`` says how to install them (``pip install "torch-cuda-course[onnx]"``,
and ``onnxruntime-gpu`` instead of ``onnxruntime`` for the CUDA and TensorRT providers).
"""

from __future__ import annotations

import collections
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["require_onnx", "export_onnx", "op_counts", "graph_summary", "GraphSummary", "providers_for",
           "ort_session", "run_session", "bind_torch", "tensorrt_available", "tensorrt_providers",
           "compare_outputs", "Parity", "file_size", "format_bytes",
           "Table"]


# ---------------------------------------------------------------- install

#: What the ONNX lessons import, and the oldest version that works (the dynamo exporter of
#: torch >= 2.11 needs onnxscript >= 0.6, the first with its exporter API).
_ONNX_PACKAGES = {"onnx": "1.16", "onnxruntime": "1.18", "onnxscript": "0.6"}


def _version_tuple(text: str) -> tuple:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def require_onnx() -> dict:
    """Versions of onnx, onnxruntime and onnxscript; a clear error saying how to install them (notebook 09).

    Raises ``ModuleNotFoundError`` naming what is missing (or too old) and the command that
    installs it: on Colab, re-running the notebook's setup cell; elsewhere the course's ``[onnx]`` extra.
    """
    import importlib

    found, problems = {}, []
    for name, oldest in _ONNX_PACKAGES.items():
        try:
            module = importlib.import_module(name)
        except ImportError:
            problems.append(f"{name} is not installed")
            continue
        found[name] = getattr(module, "__version__", "?")
        if found[name] != "?" and _version_tuple(found[name]) < _version_tuple(oldest):
            problems.append(f"{name} {found[name]} is older than {oldest}")
    if problems:
        from course import env

        how = ("run the setup cell at the top of the notebook again (on Colab it installs them)" if env.in_colab()
               else 'install them with `pip install -U "torch-cuda-course[onnx]"` (or `make lab`), then restart the kernel')
        raise ModuleNotFoundError(f"{'; '.join(problems)}: this lesson needs onnx, onnxruntime and onnxscript — {how}. "
                                  "On an NVIDIA GPU, `pip install onnxruntime-gpu` (instead of onnxruntime) adds the "
                                  "CUDA and TensorRT providers.")
    return found


# ---------------------------------------------------------------- export

def export_onnx(model, args: tuple, path, *, input_names=None, output_names=None, batch_name: str = "batch",
                check: bool = True) -> Path:
    """Export ``model(*args)`` to an ONNX file with a symbolic batch dimension; check it (notebook 09).

    Every input's dimension 0 becomes the one symbolic dimension ``batch_name``, so the file
    runs at any batch size (give an example batch of 2 or more: older PyTorch versions turn a
    size of 1 into a constant). Uses the current exporter, ``torch.onnx.export(..., dynamo=True)``,
    saves its ``ONNXProgram`` atomically and runs ``onnx.checker.check_model`` on the file.
    """
    import torch

    from course.download import atomic_write

    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"export_onnx needs a torch.nn.Module, got {type(model).__name__}")
    if model.training:
        raise ValueError("the model is in training mode: call model.eval() before exporting, "
                         "so that BatchNorm uses its running statistics and Dropout is off")
    if not isinstance(args, tuple) or not args or not all(isinstance(a, torch.Tensor) for a in args):
        raise TypeError("args must be a non-empty tuple of example tensors, e.g. (torch.randn(2, 3, 32, 32),)")
    if any(a.ndim == 0 for a in args):
        raise ValueError("every example input needs a batch dimension (dimension 0); add one with x.unsqueeze(0)")
    batch = torch.export.Dim(batch_name)  # one symbol: all inputs share the batch size
    program = torch.onnx.export(model, args, dynamo=True, dynamic_shapes=tuple({0: batch} for _ in args),
                                input_names=input_names, output_names=output_names, verbose=False)
    path = Path(path)
    with atomic_write(path) as tmp:
        program.save(str(tmp))
        if check:
            import onnx

            onnx.checker.check_model(str(tmp), full_check=True)  # also runs ONNX's shape inference
    return path


# ---------------------------------------------------------------- inspect

def _load(model):
    """An onnx.ModelProto from a ModelProto, a path, or a torch ONNXProgram."""
    import onnx

    if isinstance(model, onnx.ModelProto):
        return model
    if hasattr(model, "model_proto"):  # torch.onnx.ONNXProgram
        return model.model_proto
    if isinstance(model, (str, os.PathLike)):
        if not Path(model).is_file():
            raise FileNotFoundError(f"no ONNX file at {model}; export one first (course.deploy.export_onnx)")
        return onnx.load(str(model))
    raise TypeError(f"expected an ONNX file path, an onnx.ModelProto or an ONNXProgram, got {type(model).__name__}")


def _graphs(graph):
    """The graph and, recursively, the subgraphs inside its nodes (the branches of If, the body of Loop)."""
    yield graph
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.g is not None and attribute.g.node:
                yield from _graphs(attribute.g)
            for sub in attribute.graphs:
                yield from _graphs(sub)


def op_counts(model) -> collections.Counter:
    """How many nodes of each operator type the model has, subgraphs included (notebook 09)."""
    return collections.Counter(node.op_type for graph in _graphs(_load(model).graph) for node in graph.node)


def _value_info(value) -> tuple:
    """(name, element type, shape) of a graph input or output; symbolic dimensions by name."""
    import onnx

    tensor = value.type.tensor_type
    dims = tuple(d.dim_param if d.dim_param else (d.dim_value if d.HasField("dim_value") else "?")
                 for d in tensor.shape.dim)
    return value.name, onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type).name, dims


@dataclass
class GraphSummary:
    """What an ONNX file holds: opset, operators and counts, inputs and outputs with shapes, weights."""

    opset: int
    ops: collections.Counter
    inputs: list
    outputs: list
    parameters: int
    nodes: int = field(init=False)

    def __post_init__(self):
        self.nodes = sum(self.ops.values())

    def _rows(self):
        io = [(kind, name, dtype, " × ".join(map(str, shape)))
              for kind, values in (("input", self.inputs), ("output", self.outputs))
              for name, dtype, shape in values]
        return io, self.ops.most_common()

    def __str__(self) -> str:
        io, ops = self._rows()
        lines = [f"opset {self.opset} · {self.nodes} nodes · {self.parameters:,} weights"]
        lines += [f"{kind:<6} {name}: {dtype}[{shape}]" for kind, name, dtype, shape in io]
        lines += ["operators: " + ", ".join(f"{op} ×{n}" for op, n in ops)]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        from html import escape

        io, ops = self._rows()
        head = f"<p>opset {self.opset} · {self.nodes} nodes · {self.parameters:,} weights</p>"
        io_rows = "".join(f"<tr><td>{kind}</td><td>{escape(name)}</td><td>{dtype}</td><td>{escape(shape)}</td></tr>"
                          for kind, name, dtype, shape in io)
        op_rows = "".join(f"<tr><td>{escape(op)}</td><td>{n}</td></tr>" for op, n in ops)
        return (f"{head}<table><tr><th></th><th>name</th><th>type</th><th>shape</th></tr>{io_rows}</table>"
                f"<table><tr><th>operator</th><th>count</th></tr>{op_rows}</table>")


def graph_summary(model) -> GraphSummary:
    """Opset, operator counts, inputs/outputs (symbolic batch shown by name) and float weights (notebook 09)."""
    import numpy as np
    import onnx

    proto = _load(model)
    graph = proto.graph
    opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), 0)
    weights = {i.name for i in graph.initializer}
    floats = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16, onnx.TensorProto.DOUBLE}
    # Weights are the floating-point initializers; integer ones are shapes and indices.
    parameters = sum(int(np.prod(i.dims)) for i in graph.initializer if i.data_type in floats)
    return GraphSummary(opset=opset, ops=op_counts(proto),
                        inputs=[_value_info(v) for v in graph.input if v.name not in weights],
                        outputs=[_value_info(v) for v in graph.output], parameters=parameters)


# ---------------------------------------------------------------- run

def providers_for(device="cpu") -> list:
    """ONNX Runtime execution providers for ``device``: CUDA then CPU on "cuda", CPU alone on "cpu".

    Raises a clear error when a GPU is asked for but this onnxruntime has no CUDA provider.
    """
    import onnxruntime as ort

    from course import gpu

    if not gpu.is_cuda(device):  # the course's one device parser: "cpu", "cuda", "cuda:N", torch.device
        return ["CPUExecutionProvider"]
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        raise RuntimeError("this onnxruntime has no CUDAExecutionProvider (available: "
                           f"{', '.join(ort.get_available_providers())}); install the GPU build with "
                           "`pip install onnxruntime-gpu` (instead of onnxruntime) to run ONNX on the GPU")
    return ["CUDAExecutionProvider", "CPUExecutionProvider"]


def ort_session(model, *, device="cpu", threads: int | None = None, providers: list | None = None):
    """An ONNX Runtime ``InferenceSession`` with explicit threads and providers (notebook 09).

    ``threads`` sets ``intra_op_num_threads`` (default: PyTorch's ``torch.get_num_threads()``, so
    both engines get the same cores); one inter-op thread; all graph optimisations on.
    ``model`` is a path or an ``onnx.ModelProto``; ``providers`` (e.g. ``tensorrt_providers(...)``)
    replaces the ones ``providers_for(device)`` picks.
    """
    import onnxruntime as ort

    if threads is None:
        import torch

        threads = torch.get_num_threads()
    if not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive int, got {threads!r}")
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads  # threads inside one operator (a big Conv)
    options.inter_op_num_threads = 1        # operators run one after another
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    source = model.SerializeToString() if hasattr(model, "SerializeToString") else str(model)
    if isinstance(source, str) and not Path(source).is_file():
        raise FileNotFoundError(f"no ONNX file at {source}; export one first (course.deploy.export_onnx)")
    return ort.InferenceSession(source, options, providers=providers if providers is not None else providers_for(device))


def run_session(session, *inputs) -> list:
    """Run ``session`` on positional inputs (tensors or arrays, in the graph's input order); NumPy outputs."""
    import numpy as np

    names = [i.name for i in session.get_inputs()]
    if len(inputs) != len(names):
        raise ValueError(f"the model takes {len(names)} input(s) {names}, got {len(inputs)}")
    feed = {}
    for name, value in zip(names, inputs):
        if hasattr(value, "detach"):  # a torch tensor: ONNX Runtime reads NumPy arrays
            value = value.detach().cpu().numpy()
        feed[name] = np.ascontiguousarray(value)
    return session.run(None, feed)


_TORCH_DTYPES = {"tensor(float)": "float32", "tensor(float16)": "float16", "tensor(double)": "float64",
                 "tensor(int64)": "int64", "tensor(int32)": "int32", "tensor(uint8)": "uint8", "tensor(bool)": "bool"}


def bind_torch(session, inputs, outputs):
    """An ``IOBinding`` that reads ``inputs`` and writes ``outputs`` where they are: no copies (notebook 09).

    ``inputs`` and ``outputs`` are lists of contiguous torch tensors, in the graph's order, on the
    CPU or on a CUDA GPU (then the session needs the CUDA or TensorRT provider); ``outputs`` are
    preallocated with the right shapes. Run with ``session.run_with_iobinding(binding)``, as often
    as you like: ONNX Runtime reads the inputs' memory and writes the results into the outputs'.
    On a GPU, let PyTorch finish writing the inputs first (``course.gpu.synchronize(device)``);
    ``run_with_iobinding`` returns when ONNX Runtime's own GPU work is done. Keep the tensors alive
    while the binding is in use: it holds their addresses, not the tensors.
    """
    import numpy as np

    binding = session.io_binding()
    for kind, values, declared in (("input", inputs, session.get_inputs()), ("output", outputs, session.get_outputs())):
        values = list(values)
        if len(values) != len(declared):
            raise ValueError(f"the model has {len(declared)} {kind}(s) {[d.name for d in declared]}, got {len(values)}")
        for value, spec in zip(values, declared):
            if not hasattr(value, "data_ptr") or not hasattr(value, "is_contiguous"):
                raise TypeError(f"{kind} {spec.name!r}: bind_torch binds torch tensors, got {type(value).__name__}")
            dtype = _TORCH_DTYPES.get(spec.type)
            if dtype is None or str(value.dtype) != f"torch.{dtype}":
                raise TypeError(f"{kind} {spec.name!r} is {spec.type} in the model, the tensor is {value.dtype}")
            if not value.is_contiguous():
                raise ValueError(f"{kind} {spec.name!r} is not contiguous: bind value.contiguous() (and keep it alive)")
            fixed = [(i, d, s) for i, (d, s) in enumerate(zip(spec.shape, value.shape)) if isinstance(d, int) and d != s]
            if len(spec.shape) != value.ndim or fixed:
                raise ValueError(f"{kind} {spec.name!r} has shape {spec.shape} in the model, the tensor {tuple(value.shape)}")
            if value.device.type == "cuda":
                if not {"CUDAExecutionProvider", "TensorrtExecutionProvider"} & set(session.get_providers()):
                    raise RuntimeError(f"{kind} {spec.name!r} is on {value.device} but the session runs on "
                                       f"{session.get_providers()}: create it with device='cuda' (onnxruntime-gpu)")
                where = ("cuda", value.device.index or 0)
            elif value.device.type == "cpu":
                where = ("cpu", 0)
            else:
                raise ValueError(f"{kind} {spec.name!r} is on {value.device}: bind CPU or CUDA tensors")
            bind = binding.bind_input if kind == "input" else binding.bind_output
            bind(spec.name, *where, np.dtype(dtype), tuple(value.shape), value.data_ptr())
    return binding


def tensorrt_available() -> bool:
    """True when this onnxruntime has the TensorRT execution provider (onnxruntime-gpu with TensorRT)."""
    import onnxruntime as ort

    return "TensorrtExecutionProvider" in ort.get_available_providers()


def tensorrt_providers(cache_dir, *, fp16: bool = True, shapes: dict | None = None, device_id: int = 0) -> list:
    """ONNX Runtime providers for TensorRT (then CUDA, then CPU for what TensorRT cannot run) (notebook 09).

    TensorRT compiles the graph into an *engine* for this GPU the first time a session runs
    (seconds to minutes); ``cache_dir`` keeps it for the next session. ``fp16`` lets it choose
    float16 kernels. ``shapes`` = ``{input name: (smallest, typical, largest shape)}`` builds one
    engine for that range of batch sizes instead of one per new shape.
    """
    if not tensorrt_available():
        raise RuntimeError("this onnxruntime has no TensorrtExecutionProvider: install onnxruntime-gpu and "
                           "NVIDIA's TensorRT libraries (pip install tensorrt), or use Torch-TensorRT")
    Path(cache_dir).mkdir(parents=True, exist_ok=True)
    options = {"device_id": device_id, "trt_fp16_enable": bool(fp16), "trt_engine_cache_enable": True,
               "trt_engine_cache_path": str(cache_dir)}
    for key, index in (("trt_profile_min_shapes", 0), ("trt_profile_opt_shapes", 1), ("trt_profile_max_shapes", 2)):
        if shapes:
            options[key] = ",".join(f"{name}:{'x'.join(str(d) for d in sizes[index])}" for name, sizes in shapes.items())
    return [("TensorrtExecutionProvider", options), ("CUDAExecutionProvider", {"device_id": device_id}),
            "CPUExecutionProvider"]


# ---------------------------------------------------------------- compare

@dataclass
class Parity:
    """How far an output is from its reference, and whether it is within ``atol + rtol·|reference|``."""

    name: str
    max_abs: float
    max_rel: float
    outside: int
    size: int
    atol: float
    rtol: float

    @property
    def ok(self) -> bool:
        return self.outside == 0

    def __str__(self) -> str:
        mark = "✅" if self.ok else "❌"
        return (f"{mark} {self.name}: max |Δ| {self.max_abs:.2e}, max |Δ|/|ref| {self.max_rel:.2e}; "
                f"{self.outside} of {self.size:,} values outside atol {self.atol:g} + rtol {self.rtol:g}·|ref|")

    __repr__ = __str__


def compare_outputs(expected, got, *, atol: float, rtol: float, name: str = "output") -> Parity:
    """Compare two outputs element by element as ``np.allclose`` does; report the worst errors (notebook 09).

    A value passes when ``|got - expected| <= atol + rtol·|expected|``: ``atol`` covers values
    near zero, ``rtol`` large ones. Tolerances are required: say what "the same" means.
    """
    import numpy as np

    def as_array(x):
        return x.detach().cpu().numpy() if hasattr(x, "detach") else np.asarray(x)

    expected, got = as_array(expected).astype(np.float64), as_array(got).astype(np.float64)
    if expected.shape != got.shape:
        raise ValueError(f"{name}: shapes differ, expected {expected.shape}, got {got.shape}")
    if atol < 0 or rtol < 0:
        raise ValueError(f"tolerances must be non-negative, got atol={atol}, rtol={rtol}")
    error = np.abs(got - expected)
    bad = ~(error <= atol + rtol * np.abs(expected))  # NaN counts as outside
    relative = error / np.maximum(np.abs(expected), np.finfo(np.float64).tiny)
    return Parity(name, float(error.max(initial=0.0)), float(relative.max(initial=0.0)), int(bad.sum()),
                  int(expected.size), atol, rtol)


# ---------------------------------------------------------------- sizes and tables

def file_size(path) -> int:
    """Bytes of an ONNX file, with its external-data file (``<name>.data``) when it has one."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no file at {path}")
    extra = Path(str(path) + ".data")
    return path.stat().st_size + (extra.stat().st_size if extra.is_file() else 0)


def format_bytes(n: int) -> str:
    """163840 → '160 KiB'."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= scale:
            value = n / scale
            return f"{value:.3g} {unit}" if abs(value) < 999.5 else f"{value:.0f} {unit}"  # not '1e+03 KiB'
    return f"{n} B"


class Table:
    """A small table of rows that prints as text and shows as HTML in a notebook (notebook 09)."""

    def __init__(self, columns, rows, title: str = ""):
        self.columns, self.rows, self.title = list(columns), [list(r) for r in rows], title
        if any(len(r) != len(self.columns) for r in self.rows):
            raise ValueError(f"every row needs {len(self.columns)} values: {self.columns}")

    def __str__(self) -> str:
        cells = [self.columns] + [[str(c) for c in r] for r in self.rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(self.columns))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in cells]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(([self.title] if self.title else []) + lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        from html import escape

        head = "".join(f"<th>{escape(str(c))}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in r) + "</tr>" for r in self.rows)
        caption = f"<caption>{escape(self.title)}</caption>" if self.title else ""
        return f"<table>{caption}<tr>{head}</tr>{body}</table>"
