"""Notebook 09's exercise checks: the stub is "not attempted", the most common wrong answer of each
exercise is ❌ with a specific diagnosis, and the reference passes."""

import copy

import numpy as np
import pytest
import torch

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("onnxscript")

from course import deploy  # noqa: E402
from course.exercises import onnx_export as ex  # noqa: E402


def stub(*args, **kwargs):
    raise NotImplementedError


def verdict(capsys):
    return capsys.readouterr().out


# ---------------------------------------------------------------- count_op

@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("onnx")
    unet = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(4, 2, 1)).eval()
    path = deploy.export_onnx(unet, (torch.rand(2, 3, 8, 8),), folder / "net.onnx")
    return [path, deploy.export_onnx(ex._tiny_net(), (torch.rand(2, 3, 8, 8),), folder / "tiny.onnx")]


def test_count_op(exported, capsys):
    import onnx

    assert not ex.check_count_op(stub, exported) and "not attempted" in verdict(capsys)
    # the usual mistake: counting every node, whatever its operator
    assert not ex.check_count_op(lambda proto, op: len(proto.graph.node), exported)
    assert "differ" in verdict(capsys) or "expected" in verdict(capsys)
    assert ex.check_count_op(lambda proto, op: sum(n.op_type == op for n in proto.graph.node), exported)
    assert ex.check_count_op(lambda proto, op: deploy.op_counts(onnx.load(str(exported[0])) if False else proto)[op],
                             exported)


# ---------------------------------------------------------------- count_outside

def test_count_outside(capsys):
    assert not ex.check_count_outside(stub) and "not attempted" in verdict(capsys)
    # the usual mistake: rtol times the signed reference, so negative references get no allowance
    wrong = lambda e, g, atol, rtol: int((np.abs(g - e) > atol + rtol * e).sum())
    assert not ex.check_count_outside(wrong)
    assert "expected 0, got 1" in verdict(capsys)  # the -100 reference gets no allowance
    assert not ex.check_count_outside(lambda e, g, atol, rtol: np.abs(g - e) > atol + rtol * np.abs(e))
    assert ex.check_count_outside(lambda e, g, atol, rtol: int((np.abs(g - e) > atol + rtol * np.abs(e)).sum()))


# ---------------------------------------------------------------- export_and_prove

def export_and_prove(model, example, path, dynamic=True):
    shapes = ({0: torch.export.Dim("batch")},) if dynamic else None
    program = torch.onnx.export(model, (example,), dynamo=True, dynamic_shapes=shapes, verbose=False)
    program.save(str(path))
    session = deploy.ort_session(path, threads=1)
    reports = []
    for n in (1, 5):
        x = example[torch.arange(n) % len(example)]
        with torch.inference_mode():
            expected = model(x)
        reports.append(deploy.compare_outputs(expected, deploy.run_session(session, x)[0], atol=1e-4, rtol=1e-3))
    return reports


def test_export_and_prove(capsys):
    assert not ex.check_export_and_prove(stub) and "not attempted" in verdict(capsys)
    # the usual mistake: no dynamic_shapes, so the file keeps the example's batch of 2
    assert not ex.check_export_and_prove(lambda m, x, p: export_and_prove(m, x, p, dynamic=False))
    out = verdict(capsys)
    assert "dimension 0 fixed at 2" in out, out
    # proving parity at one batch size only
    assert not ex.check_export_and_prove(lambda m, x, p: export_and_prove(m, x, p)[:1])
    assert "two different batch sizes" in verdict(capsys)
    assert ex.check_export_and_prove(export_and_prove)


# ---------------------------------------------------------------- RoadCalibration

class Reader:
    def __init__(self, images, input_name="images", batch_size=8):
        self.batches = iter([{input_name: images[i:i + batch_size].numpy()} for i in range(0, len(images), batch_size)])

    def get_next(self):
        return next(self.batches, None)


class ReaderOfTensors(Reader):  # the usual mistake: torch tensors instead of NumPy arrays
    def __init__(self, images, input_name="images", batch_size=8):
        self.batches = iter([{input_name: images[i:i + batch_size]} for i in range(0, len(images), batch_size)])


class ReaderWithoutEnd(Reader):  # raises StopIteration instead of returning None
    def get_next(self):
        return next(self.batches)


class ReaderWithFixedName(Reader):
    def __init__(self, images, input_name="images", batch_size=8):
        super().__init__(images, "images", batch_size)


class StubReader:
    def __init__(self, images, input_name="images", batch_size=8):
        ...

    def get_next(self):
        raise NotImplementedError


def test_calibration_reader(capsys):
    assert not ex.check_calibration_reader(StubReader) and "not attempted" in verdict(capsys)
    assert not ex.check_calibration_reader(ReaderOfTensors)
    assert "float32 NumPy arrays" in verdict(capsys)
    assert not ex.check_calibration_reader(ReaderWithoutEnd)
    assert "StopIteration" in verdict(capsys)
    assert not ex.check_calibration_reader(ReaderWithFixedName)
    assert "'pixels'" in verdict(capsys)
    assert ex.check_calibration_reader(Reader)


def test_the_reference_reader_calibrates_onnx_runtime(tmp_path):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

    class RoadCalibration(Reader, CalibrationDataReader):
        pass

    path = deploy.export_onnx(ex._tiny_net(), (torch.rand(2, 3, 8, 8),), tmp_path / "tiny.onnx", input_names=["images"])
    quantize_static(str(path), str(tmp_path / "int8.onnx"), RoadCalibration(torch.rand(10, 3, 8, 8), batch_size=4),
                    quant_format=QuantFormat.QDQ)
    assert deploy.op_counts(tmp_path / "int8.onnx")["QuantizeLinear"] > 0


# ---------------------------------------------------------------- run_with_binding

def run_with_binding(session, images, logits):
    binding = session.io_binding()
    binding.bind_input("images", "cpu", 0, np.float32, tuple(images.shape), images.data_ptr())
    binding.bind_output("logits", "cpu", 0, np.float32, tuple(logits.shape), logits.data_ptr())
    session.run_with_iobinding(binding)
    return logits


def test_run_with_binding(capsys):
    assert not ex.check_run_with_binding(stub) and "not attempted" in verdict(capsys)
    # the usual mistakes: session.run (copies through NumPy), a new tensor instead of the buffer
    copying = lambda s, x, y: y.copy_(torch.from_numpy(s.run(None, {"images": x.numpy()})[0]))
    assert not ex.check_run_with_binding(copying)
    assert "session.run was called" in verdict(capsys)

    def own_output(session, images, logits):
        binding = session.io_binding()
        binding.bind_input("images", "cpu", 0, np.float32, tuple(images.shape), images.data_ptr())
        binding.bind_output("logits", "cpu")
        session.run_with_iobinding(binding)
        return torch.from_numpy(binding.copy_outputs_to_cpu()[0])

    assert not ex.check_run_with_binding(own_output)
    assert "not written into the buffer" in verdict(capsys)
    assert ex.check_run_with_binding(run_with_binding)
    assert ex.check_run_with_binding(lambda s, x, y: (s.run_with_iobinding(deploy.bind_torch(s, [x], [y])), y)[1])


# ---------------------------------------------------------------- narrow_double_conv

def narrow_double_conv(block, keep, choose=None):
    conv1, bn1, relu1, conv2, bn2, relu2 = block
    kept = choose(bn1, keep) if choose else torch.argsort(bn1.weight.abs(), descending=True)[:keep]
    new_conv1 = torch.nn.Conv2d(conv1.in_channels, keep, conv1.kernel_size, padding=conv1.padding, bias=False)
    new_bn1 = torch.nn.BatchNorm2d(keep)
    new_conv2 = torch.nn.Conv2d(keep, conv2.out_channels, conv2.kernel_size, padding=conv2.padding, bias=False)
    with torch.no_grad():
        new_conv1.weight.copy_(conv1.weight[kept])
        for name in ("weight", "bias", "running_mean", "running_var"):
            getattr(new_bn1, name).copy_(getattr(bn1, name)[kept])
        new_conv2.weight.copy_(conv2.weight[:, kept])
    return torch.nn.Sequential(new_conv1, new_bn1, copy.deepcopy(relu1), new_conv2, copy.deepcopy(bn2),
                               copy.deepcopy(relu2)).eval()


def test_narrow_double_conv(capsys):
    assert not ex.check_narrow_double_conv(stub) and "not attempted" in verdict(capsys)
    # the usual mistakes: keep the first channels; forget the second convolution's input slice
    assert not ex.check_narrow_double_conv(lambda b, k: narrow_double_conv(b, k, lambda bn, k: torch.arange(k)))
    assert "the first ones rather than the most important" in verdict(capsys)

    def forgot_conv2(block, keep):
        narrow = narrow_double_conv(block, keep)
        narrow[3] = copy.deepcopy(block[3])
        return narrow

    assert not ex.check_narrow_double_conv(forgot_conv2)
    assert "second conv's in_channels" in verdict(capsys)

    def in_place(block, keep):
        narrow = narrow_double_conv(block, keep)
        with torch.no_grad():
            block[1].weight.zero_()
        return narrow

    assert not ex.check_narrow_double_conv(in_place)
    assert "was changed" in verdict(capsys)
    assert ex.check_narrow_double_conv(narrow_double_conv)


# ---------------------------------------------------------------- choose_deployment

def test_choose_deployment(capsys):
    assert not ex.check_choose_deployment(stub) and "not attempted" in verdict(capsys)

    def fastest(candidates, budget_ms, miou_floor):  # the usual mistake: the fastest that fits
        fitting = {n: c for n, c in candidates.items() if c["ms"] <= budget_ms and c["mIoU"] >= miou_floor}
        return min(fitting, key=lambda n: fitting[n]["ms"]) if fitting else None

    assert not ex.check_choose_deployment(fastest)
    assert "expected 'fp32', got 'pruned int8'" in verdict(capsys)
    ignores_floor = lambda c, b, f: max((n for n in c if c[n]["ms"] <= b), key=lambda n: c[n]["mIoU"], default=None)
    assert not ex.check_choose_deployment(ignores_floor)
    assert ex.check_choose_deployment(ex._choose, {"x": {"ms": 1.0, "mIoU": 0.5}}, 2.0, 0.4)


# ---------------------------------------------------------------- scale_to_unit_exportable

def test_scale_to_unit_exportable(capsys):
    assert not ex.check_scale_to_unit_exportable(stub) and "not attempted" in verdict(capsys)
    assert not ex.check_scale_to_unit_exportable(ex.scale_to_unit)  # right values, but not exportable
    assert "torch.export.export fails" in verdict(capsys)
    assert not ex.check_scale_to_unit_exportable(lambda x: x / x.max())  # divides always
    assert ex.check_scale_to_unit_exportable(lambda x: torch.where(x.max() > 1, x / x.max(), x))


def test_every_exercise_has_a_nudge_and_a_method_that_are_not_code():
    for name, hints in ex.HINTS.items():
        assert len(hints) >= 2, name
        for text in hints:  # no hint spells out the solution's code
            assert not any(code in text for code in ("torch.where(", "np.abs(", "argsort(", "dynamic_shapes=",
                                                       "bind_input(", " = ")), (name, text)
