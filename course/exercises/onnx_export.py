"""Named checks for notebook 09 (ONNX and edge deployment): one ``check_*`` per exercise.

Each check runs the learner's function on cases it builds itself (small models, tiny ONNX
graphs), compares with a reference, prints ✅ or ❌ with a specific diagnosis and registers
the exercise's hints for ``course.checks.hint()``. Rules the values alone cannot prove are
checked too: the exported file must keep its batch symbolic, the IOBinding run must write into
the buffer it was given without ``session.run``'s copies, structural pruning must leave a
narrower block and the original untouched.
"""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path

import numpy as np

from course import checks

HINTS = {
    "count_op": [
        "Every node of model_proto.graph.node says which operator it applies.",
        "Go through the nodes once and count those whose op_type equals the operator you were given; "
        "an operator that does not occur counts zero.",
    ],
    "count_outside": [
        "The rule has two parts: a fixed allowance atol, plus an allowance that grows with the size of the reference.",
        "Work element by element on arrays: the absolute difference against atol plus rtol times the absolute "
        "reference; count the elements where it is larger, and return a plain int.",
    ],
    "export_and_prove": [
        "Without being told, the exporter fixes every dimension at the example's size; a file that "
        "runs at batch 2 only fails at any other batch.",
        "Give torch.onnx.export a dynamic_shapes entry that names dimension 0 of the input with "
        "torch.export.Dim, save the program, then for two batch sizes run PyTorch and an ONNX Runtime "
        "session on the same batch and compare with deploy.compare_outputs.",
    ],
    "RoadCalibration": [
        "ONNX Runtime's calibrator calls get_next() again and again: each call hands over one batch, "
        "and a call after the last batch must say that there is no more.",
        "In __init__ cut the images into consecutive slices of batch_size and keep an iterator over "
        "them; get_next returns {input_name: that slice as a float32 NumPy array}, and None once the "
        "iterator is exhausted (and on every call after that).",
    ],
    "run_with_binding": [
        "session.run takes and returns NumPy arrays, so every call copies; an IOBinding tells ONNX "
        "Runtime where the input already is and where to write the output.",
        "Ask the session for an io_binding(), bind the input and the output by name with their device, "
        "element type, shape and data_ptr(), run it with run_with_iobinding, and return the tensor you "
        "were given as the output.",
    ],
    "narrow_double_conv": [
        "A channel of the middle of the block is produced by one filter of the first convolution, "
        "scaled by one γ of the batch norm, and read by one input slice of the second convolution.",
        "Rank the middle channels by |γ| of the first batch norm, keep the top `keep`, and build new, "
        "narrower layers that copy those filters, those batch-norm entries (weight, bias, running mean "
        "and variance) and those input slices of the second convolution's weight; leave the block "
        "you were given unchanged.",
    ],
    "choose_deployment": [
        "Two conditions make a candidate acceptable; among the acceptable ones, one property decides.",
        "Keep the candidates whose latency is within the budget and whose mIoU reaches the floor; "
        "return the name of the one with the highest mIoU (the faster one on a tie), or None when no "
        "candidate is acceptable.",
    ],
    "scale_to_unit_exportable": [
        "The exporter traces with shapes but no values, so it cannot decide a Python if on a tensor's value.",
        "Compute both possible results and let a tensor operation choose between them element by "
        "element with the comparison as a 0-dimensional boolean tensor.",
    ],
}


def _register(name: str) -> None:
    checks.register_hints(name, HINTS[name])


def _result(name: str, ok: bool, detail: str) -> bool:
    """Print ✅ or ❌ with ``detail`` for exercise ``name`` (through course.checks, which points at hint())."""
    return checks.check_true(lambda: ok, name=name, fail=detail, success=detail)


# ---------------------------------------------------------------------------------------------
# Exercise: count an operator


def check_count_op(fn, paths) -> bool:
    """``count_op(model_proto, op_type)`` against ``deploy.op_counts`` on the notebook's exported files."""
    import onnx

    from course import deploy

    protos = [onnx.load(str(p)) for p in paths]
    ops = sorted({op for proto in protos for op in deploy.op_counts(proto)})
    cases = [(proto, op) for proto in protos for op in ops[:6]] + [(protos[0], "LSTM")]
    return checks.check_function(fn, lambda proto, op: deploy.op_counts(proto)[op], cases, name="count_op",
                                 hints=HINTS["count_op"], copy_inputs=False)


# ---------------------------------------------------------------------------------------------
# Exercise: a parity check with tolerances


def _count_outside(expected, got, atol, rtol):
    return int((np.abs(got - expected) > atol + rtol * np.abs(expected)).sum())


def check_count_outside(fn) -> bool:
    """``count_outside(expected, got, atol, rtol)``: the misses of ``|got - expected| <= atol + rtol·|expected|``."""
    big = np.array([0.0, 1.0, 100.0, -100.0])
    cases = [
        (big, big + 1e-6, 1e-5, 0.0),                              # all inside
        (big, big + np.array([0, 0, 5e-3, -5e-3]), 1e-5, 1e-4),    # rtol·100 = 1e-2 lets 5e-3 pass
        (big, big + np.array([0, 0, 5e-3, -5e-3]), 1e-5, 1e-6),    # now it does not
        (big, big + np.array([2e-5, 0, 0, 0]), 1e-5, 1e-3),        # near zero only atol helps
        (-big, -big + np.array([0, 0, 5e-3, 5e-3]), 1e-5, 1e-4),   # negative references: |expected|
        (np.ones((2, 3)), np.ones((2, 3)) * 1.1, 0.05, 0.01),      # 2-D, all outside
    ]
    ok = checks.check_function(fn, _count_outside, cases, name="count_outside", hints=HINTS["count_outside"])
    if ok:
        got = fn(*cases[2])
        if not isinstance(got, (int, np.integer)):
            return _result("count_outside", False, f"returns {type(got).__name__}; return a plain int")
    return ok


# ---------------------------------------------------------------------------------------------
# Exercise: export with a dynamic batch and prove parity at two batch sizes


def _tiny_net():
    import torch

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                              torch.nn.AdaptiveAvgPool2d(2), torch.nn.Flatten(), torch.nn.Linear(16, 5))
    with torch.no_grad():
        net[1].running_mean.uniform_(-0.5, 0.5)
        net[1].running_var.uniform_(0.5, 2.0)
    return net.eval()


def _input_dims(path) -> tuple:
    import onnx

    graph = onnx.load(str(path)).graph
    weights = {i.name for i in graph.initializer}
    value = next(v for v in graph.input if v.name not in weights)
    return value.name, tuple(d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim)


def check_export_and_prove(fn) -> bool:
    """``export_and_prove(model, example, path)``: a file with a symbolic batch, and Parity reports at two batch sizes."""
    import torch

    from course import deploy

    name = "export_and_prove"
    _register(name)
    model, example = _tiny_net(), torch.rand(2, 3, 8, 8, generator=torch.Generator().manual_seed(1))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tiny.onnx"

        def fixed_batch() -> str:
            if not path.is_file():
                return ""
            input_name, dims = _input_dims(path)
            if dims and not isinstance(dims[0], str):
                return (f"; the file's input {input_name!r} has dimension 0 fixed at {dims[0]}, so it only "
                        "accepts that batch size")
            return ""

        try:
            reports = fn(model, example, path)
        except NotImplementedError:
            return checks.not_attempted(name)
        except Exception as error:
            first = str(error).strip().splitlines()[0][:200] if str(error).strip() else ""
            return _result(name, False, f"raised {type(error).__name__}: {first}{fixed_batch()}")
        if reports is ... or reports is None and not path.is_file():
            return checks.not_attempted(name)
        if not path.is_file():
            return _result(name, False, f"no file was written at the path it was given ({path.name})")
        problem = fixed_batch()
        if problem:
            return _result(name, False, problem.lstrip("; ").capitalize())
        if not isinstance(reports, (list, tuple)) or not all(isinstance(r, deploy.Parity) for r in reports):
            return _result(name, False, f"should return a list of deploy.Parity reports, got {type(reports).__name__}")
        if len({r.size for r in reports}) < 2:
            return _result(name, False, f"returned {len(reports)} report(s) for one batch size; prove parity at two "
                                               "different batch sizes")
        if not all(r.ok for r in reports):
            return _result(name, False, f"a report of yours says the outputs differ: {next(r for r in reports if not r.ok)}")
        session = deploy.ort_session(path, threads=1)  # the check's own proof, at batch sizes of its choosing
        for n in (1, 7):
            x = torch.rand(n, 3, 8, 8, generator=torch.Generator().manual_seed(n))
            with torch.inference_mode():
                expected = model(x)
            try:
                got = deploy.run_session(session, x)[0]
            except Exception as error:
                return _result(name, False, f"the file does not run at batch {n}: {type(error).__name__}")
            report = deploy.compare_outputs(expected, got, atol=1e-4, rtol=1e-3, name=f"batch {n}")
            if not report.ok:
                return _result(name, False, f"the file disagrees with PyTorch at batch {n}: {report}")
    return _result(name, True, "the batch stays symbolic, and the file matches PyTorch at batch 1 and 7 "
                                      "(your own reports agree).")


# ---------------------------------------------------------------------------------------------
# Exercise: a calibration data reader


def check_calibration_reader(reader_class) -> bool:
    """``reader_class(images, input_name=..., batch_size=...)``: consecutive float32 NumPy batches, then None."""
    import torch

    name = "RoadCalibration"
    _register(name)
    images = torch.rand(21, 3, 4, 6, generator=torch.Generator().manual_seed(0))
    for input_name, batch_size in (("images", 8), ("pixels", 5)):
        try:
            reader = reader_class(images.clone(), input_name=input_name, batch_size=batch_size)
            batches = []
            for _ in range(len(images) + 2):
                item = reader.get_next()
                if item is None:
                    break
                batches.append(item)
            after = [reader.get_next(), reader.get_next()]
        except NotImplementedError:
            return checks.not_attempted(name)
        except StopIteration:
            return _result(name, False, "get_next() raised StopIteration after the last batch; the calibrator "
                                               "expects it to return None")
        except Exception as error:
            return _result(name, False, f"with batch_size={batch_size}: raised {type(error).__name__}: {error}")
        sizes = [min(batch_size, len(images) - start) for start in range(0, len(images), batch_size)]
        if not batches or len(batches) > len(images):
            return _result(name, False, f"with batch_size={batch_size}: get_next() handed over {len(batches)} "
                                               f"batches before None; expected {len(sizes)}")
        for i, item in enumerate(batches):
            if not isinstance(item, dict) or set(item) != {input_name}:
                keys = sorted(item) if isinstance(item, dict) else type(item).__name__
                return _result(name, False, f"batch {i} is {keys}; expected a dict with the one key "
                                                   f"{input_name!r} (the model's input name)")
            value = item[input_name]
            if not isinstance(value, np.ndarray) or value.dtype != np.float32:
                kind = f"{type(value).__name__} of {getattr(value, 'dtype', '?')}"
                return _result(name, False, f"batch {i} is a {kind}; ONNX Runtime reads float32 NumPy arrays")
        got_sizes = [len(item[input_name]) for item in batches]
        if got_sizes != sizes:
            return _result(name, False, f"with {len(images)} images and batch_size={batch_size} the batches "
                                               f"hold {got_sizes} images; expected {sizes}")
        together = np.concatenate([item[input_name] for item in batches])
        if not np.array_equal(together, images.numpy()):
            return _result(name, False, "the batches are not the images in their order (each image once)")
        if any(a is not None for a in after):
            return _result(name, False, "after the last batch, get_next() must keep returning None")
    return _result(name, True, "consecutive float32 batches under the input's name, every image once, "
                                      "then None.")


# ---------------------------------------------------------------------------------------------
# Exercise: an IOBinding run that avoids copies


def _scale_relu_graph():
    """y = Relu(x) · [1, 2, 3, 4] with a symbolic batch: a tiny ONNX model for the binding check."""
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("images", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 4])
    w = helper.make_tensor("w", TensorProto.FLOAT, [4], [1.0, 2.0, 3.0, 4.0])
    nodes = [helper.make_node("Relu", ["images"], ["r"]), helper.make_node("Mul", ["r", "w"], ["logits"])]
    model = helper.make_model(helper.make_graph(nodes, "scale_relu", [x], [y], initializer=[w]),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


class _NoCopySession:
    """A session that offers everything but ``run``: the check's way to see that no copy was made."""

    def __init__(self, session):
        self._session = session

    def run(self, *args, **kwargs):
        raise RuntimeError("session.run was called: it takes and returns NumPy arrays, i.e. it copies")

    def __getattr__(self, attribute):
        return getattr(self._session, attribute)


def check_run_with_binding(fn) -> bool:
    """``run_with_binding(session, images, logits)`` writes the result into ``logits`` through an IOBinding."""
    import torch

    from course import deploy

    name = "run_with_binding"
    _register(name)
    session = _NoCopySession(deploy.ort_session(_scale_relu_graph(), threads=1))
    for batch in (3, 1):
        images = torch.randn(batch, 4, generator=torch.Generator().manual_seed(batch))
        before = images.clone()
        logits = torch.full((batch, 4), float("nan"))
        expected = torch.relu(before) * torch.tensor([1.0, 2.0, 3.0, 4.0])
        try:
            got = fn(session, images, logits)
        except NotImplementedError:
            return checks.not_attempted(name)
        except Exception as error:
            return _result(name, False, f"at batch {batch}: raised {type(error).__name__}: {error}")
        if got is ...:
            return checks.not_attempted(name)
        if torch.isnan(logits).all():
            return _result(name, False, f"at batch {batch}: `logits` still holds what it held before — the "
                                               "result was not written into the buffer you were given")
        if not torch.allclose(logits, expected, atol=1e-6):
            index = tuple(int(i) for i in torch.nonzero(~torch.isclose(logits, expected, atol=1e-6))[0])
            return _result(name, False, f"at batch {batch}: logits{list(index)} is {logits[index].item():.4g}, "
                                               f"expected {expected[index].item():.4g}")
        if not isinstance(got, torch.Tensor) or got.data_ptr() != logits.data_ptr():
            return _result(name, False, "return the tensor you were given as `logits` (the one ONNX Runtime wrote)")
        if not torch.equal(images, before):
            return _result(name, False, "the input `images` was changed")
    return _result(name, True, "ONNX Runtime read `images` and wrote `logits` in place, without session.run.")


# ---------------------------------------------------------------------------------------------
# Exercise: structural pruning of a (Conv → BN → ReLU) × 2 block


def _double_conv(c_in, c_mid, c_out, seed):
    import torch
    from torch import nn

    torch.manual_seed(seed)
    block = nn.Sequential(nn.Conv2d(c_in, c_mid, 3, padding=1, bias=False), nn.BatchNorm2d(c_mid), nn.ReLU(),
                          nn.Conv2d(c_mid, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU())
    with torch.no_grad():
        for bn in (block[1], block[4]):
            bn.weight.uniform_(-1.5, 1.5)
            bn.bias.uniform_(-0.3, 0.3)
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
    return block.eval()


def _masked_output(block, kept, x):
    """What the block computes when only the middle channels ``kept`` are left (the others set to zero)."""
    import torch

    with torch.no_grad():
        middle = block[2](block[1](block[0](x)))
        mask = torch.zeros(middle.shape[1], dtype=torch.bool)
        mask[list(kept)] = True
        middle = middle * mask.view(1, -1, 1, 1)
        return block[5](block[4](block[3](middle)))


def check_narrow_double_conv(fn) -> bool:
    """``narrow_double_conv(block, keep)``: a new, narrower block that keeps the ``keep`` channels of largest |γ|."""
    import torch

    name = "narrow_double_conv"
    _register(name)
    for c_in, c_mid, c_out, keep, seed in ((3, 8, 6, 3, 0), (4, 6, 5, 1, 1), (2, 5, 4, 5, 2)):
        block = _double_conv(c_in, c_mid, c_out, seed)
        state = {k: v.clone() for k, v in block.state_dict().items()}
        x = torch.randn(2, c_in, 5, 7, generator=torch.Generator().manual_seed(seed))
        try:
            narrow = fn(block, keep)
        except NotImplementedError:
            return checks.not_attempted(name)
        except Exception as error:
            return _result(name, False, f"with {c_mid} middle channels and keep={keep}: raised "
                                               f"{type(error).__name__}: {error}")
        if narrow is ... or narrow is None:
            return checks.not_attempted(name)
        if any(not torch.equal(v, block.state_dict()[k]) for k, v in state.items()):
            return _result(name, False, "the block you were given was changed; build new layers (or work on "
                                               "a copy.deepcopy of it)")
        if not isinstance(narrow, torch.nn.Module) or len(list(narrow.children())) != 6:
            return _result(name, False, "return a block of the same six layers (Conv, BN, ReLU, Conv, BN, ReLU)")
        conv1, bn1, _, conv2, _, _ = narrow.children()
        shapes = {"first conv's out_channels": (getattr(conv1, "out_channels", None), keep),
                  "first BN's num_features": (getattr(bn1, "num_features", None), keep),
                  "first BN's running_mean": (tuple(getattr(bn1, "running_mean", torch.empty(0)).shape), (keep,)),
                  "second conv's in_channels": (getattr(conv2, "in_channels", None), keep),
                  "second conv's weight": (tuple(conv2.weight.shape), (c_out, keep, 3, 3))}
        for what, (got, expected) in shapes.items():
            if got != expected:
                return _result(name, False, f"with {c_mid} middle channels and keep={keep}: the {what} is "
                                                   f"{got}, expected {expected}")
        narrow.eval()
        try:
            with torch.no_grad():
                got = narrow(x)
        except Exception as error:
            return _result(name, False, f"the narrow block does not run: {type(error).__name__}: {error}")
        kept = torch.argsort(block[1].weight.abs(), descending=True)[:keep].tolist()
        expected = _masked_output(block, kept, x)
        if got.shape != expected.shape or not torch.allclose(got, expected, atol=1e-5, rtol=1e-4):
            detail = f"the output differs from the block with only the {keep} channels of largest |γ| kept {sorted(kept)}"
            if torch.allclose(got, _masked_output(block, range(keep), x), atol=1e-5, rtol=1e-4) and keep < c_mid:
                detail += f"; yours matches keeping channels 0…{keep - 1}, the first ones rather than the most important"
            return _result(name, False, detail)
    return _result(name, True, "narrower layers, the channels of largest |γ| kept, the same output as the "
                                      "original block with the others removed, and the original untouched.")


# ---------------------------------------------------------------------------------------------
# Exercise: meet an edge latency budget


def _choose(candidates, budget_ms, miou_floor):
    fitting = [(-c["mIoU"], c["ms"], name) for name, c in candidates.items()
               if c["ms"] <= budget_ms and c["mIoU"] >= miou_floor]
    return min(fitting)[2] if fitting else None


def check_choose_deployment(fn, measured=None, budget_ms=None, miou_floor=None) -> bool:
    """``choose_deployment(candidates, budget_ms, miou_floor)``: the most accurate candidate that fits, or None."""
    table = {"fp32": {"ms": 10.0, "mIoU": 0.80}, "int8": {"ms": 6.0, "mIoU": 0.77},
             "pruned": {"ms": 5.0, "mIoU": 0.74}, "pruned int8": {"ms": 3.0, "mIoU": 0.70}}
    cases = [(table, 12.0, 0.5), (table, 7.0, 0.5), (table, 5.5, 0.5), (table, 5.5, 0.75), (table, 2.0, 0.5),
             ({"a": {"ms": 4.0, "mIoU": 0.7}, "b": {"ms": 3.0, "mIoU": 0.7}}, 5.0, 0.6)]
    if measured is not None:
        cases.append((measured, budget_ms, miou_floor))

    def shown(choose):  # None is a right answer here; compare it as the text 'None'
        def call(*args):
            choice = choose(*args)
            return "None" if choice is None else choice
        return call

    return checks.check_function(shown(fn), shown(_choose), cases, name="choose_deployment",
                                 hints=HINTS["choose_deployment"])


# ---------------------------------------------------------------------------------------------
# Exercise: make a data-dependent function exportable


def scale_to_unit(x):
    """Divide by the maximum when it is above 1, else leave x alone: a Python `if` on the data."""
    if x.max() > 1:
        return x / x.max()
    return x


def check_scale_to_unit_exportable(fn) -> bool:
    """The same values as ``scale_to_unit`` on inputs taking each branch, and ``torch.export.export`` traces it."""
    import contextlib
    import io

    import torch

    name = "scale_to_unit_exportable"
    cases = [(torch.tensor([0.5, 3.0, 2.0]),), (torch.tensor([0.2, 0.9]),), (torch.tensor([[1.0, 0.0], [0.5, 1.0]]),),
             (torch.tensor([-4.0, 2.0, 8.0]),), (torch.tensor([-1.0, -0.5]),)]
    if not checks.check_function(fn, scale_to_unit, cases, name=name, hints=HINTS[name]):
        return False

    class Wrapped(torch.nn.Module):
        def forward(self, x):
            return fn(x)

    def exports() -> bool:
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                torch.export.export(Wrapped(), (torch.rand(2, 3) * 3,))
        except Exception:  # the exporter's error is long; the message below says what to look for
            return False
        return True

    return checks.check_true(exports, name=name,
                             fail="right values, but torch.export.export fails: is there still an `if` on a tensor's value?",
                             success="right values on both branches, and torch.export.export traces it.")
