"""course.deploy: ONNX export, graph summary, ONNX Runtime sessions, parity reports."""

import numpy as np
import pytest
import torch

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402

from course import deploy  # noqa: E402


def tiny_graph_with_if():
    """y = (sum(x) > 0) ? Relu(x) : Neg(x), batch symbolic: an If whose branches hold ops."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])
    then_out = helper.make_tensor_value_info("then_y", TensorProto.FLOAT, None)
    else_out = helper.make_tensor_value_info("else_y", TensorProto.FLOAT, None)
    then_branch = helper.make_graph([helper.make_node("Relu", ["x"], ["then_y"])], "then", [], [then_out])
    else_branch = helper.make_graph([helper.make_node("Neg", ["x"], ["else_y"])], "else", [], [else_out])
    w = helper.make_tensor("w", TensorProto.FLOAT, [4], [1.0, 2.0, 3.0, 4.0])
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
        helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("z", TensorProto.FLOAT, [], [0.0])),
        helper.make_node("Greater", ["s", "zero"], ["positive"]),
        helper.make_node("If", ["positive"], ["branch"], then_branch=then_branch, else_branch=else_branch),
        helper.make_node("Mul", ["branch", "w"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "gate", [x], [y], initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def test_op_counts_and_summary_include_subgraphs_and_symbolic_batch(tmp_path):
    model = tiny_graph_with_if()
    counts = deploy.op_counts(model)
    assert counts == {"ReduceSum": 1, "Constant": 1, "Greater": 1, "If": 1, "Relu": 1, "Neg": 1, "Mul": 1}
    path = tmp_path / "gate.onnx"
    onnx.save(model, path)
    summary = deploy.graph_summary(path)
    assert summary.opset == 17 and summary.parameters == 4 and summary.nodes == 7
    assert summary.inputs == [("x", "float32", ("batch", 4))]  # the initializer w is not an input
    assert summary.outputs == [("y", "float32", ("batch", 4))]
    assert "batch × 4" in str(summary) and "<table>" in summary._repr_html_()
    with pytest.raises(FileNotFoundError, match="export one first"):
        deploy.graph_summary(tmp_path / "missing.onnx")


def test_session_runs_both_branches_with_explicit_threads(tmp_path):
    path = tmp_path / "gate.onnx"
    onnx.save(tiny_graph_with_if(), path)
    session = deploy.ort_session(path, threads=1)
    assert session.get_providers() == ["CPUExecutionProvider"]
    x = torch.tensor([[1.0, -2.0, 3.0, 4.0]] * 3)
    (y,) = deploy.run_session(session, x)
    np.testing.assert_allclose(y, torch.relu(x).numpy() * [1, 2, 3, 4])
    (y,) = deploy.run_session(session, -x.numpy())  # NumPy in works too; the sum is negative
    np.testing.assert_allclose(y, x.numpy() * [1, 2, 3, 4])
    with pytest.raises(ValueError, match="takes 1 input"):
        deploy.run_session(session, x, x)
    with pytest.raises(ValueError, match="positive int"):
        deploy.ort_session(path, threads=0)


def test_providers_for_cpu_and_a_clear_error_without_the_cuda_provider():
    assert deploy.providers_for("cpu") == ["CPUExecutionProvider"]
    assert deploy.providers_for(torch.device("cpu")) == ["CPUExecutionProvider"]
    if "CUDAExecutionProvider" in ort.get_available_providers():
        assert deploy.providers_for("cuda:0")[0] == "CUDAExecutionProvider"
    else:
        with pytest.raises(RuntimeError, match="onnxruntime-gpu"):
            deploy.providers_for("cuda")
    with pytest.raises(ValueError, match="'cpu'"):  # the course's one device parser says what to write
        deploy.providers_for("tpu")


def test_compare_outputs_uses_atol_plus_rtol_times_reference():
    expected = np.array([0.0, 1.0, 100.0, -5.0])
    close = expected + np.array([1e-6, 1e-6, 1e-3, 0.0])  # the 1e-3 passes only through rtol·100
    report = deploy.compare_outputs(expected, close, atol=1e-5, rtol=1e-4, name="logits")
    assert report.ok and report.outside == 0 and report.size == 4
    assert report.max_abs == pytest.approx(1e-3) and "✅ logits" in str(report)
    report = deploy.compare_outputs(torch.tensor(expected), torch.tensor(close), atol=1e-5, rtol=1e-6)
    assert not report.ok and report.outside == 1 and "❌" in str(report)
    assert not deploy.compare_outputs([1.0, 2.0], [1.0, float("nan")], atol=1, rtol=1).ok
    with pytest.raises(ValueError, match="shapes differ"):
        deploy.compare_outputs(np.zeros(3), np.zeros(4), atol=0, rtol=0)
    with pytest.raises(TypeError):
        deploy.compare_outputs(np.zeros(3), np.zeros(3))  # tolerances must be stated


def test_export_refuses_training_mode_and_inputs_without_a_batch(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
    with pytest.raises(ValueError, match="model.eval"):
        deploy.export_onnx(model, (torch.randn(2, 4),), tmp_path / "m.onnx")
    with pytest.raises(ValueError, match="batch dimension"):
        deploy.export_onnx(model.eval(), (torch.tensor(1.0),), tmp_path / "m.onnx")
    with pytest.raises(TypeError, match="tuple"):
        deploy.export_onnx(model, torch.randn(2, 4), tmp_path / "m.onnx")
    assert not (tmp_path / "m.onnx").exists()


def test_export_has_a_symbolic_batch_and_matches_pytorch(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(64, 2))
    model.eval()
    path = deploy.export_onnx(model, (torch.randn(2, 3, 6, 6),), tmp_path / "net.onnx", batch_name="n",
                              input_names=["images"], output_names=["scores"])
    summary = deploy.graph_summary(path)
    assert summary.inputs == [("images", "float32", ("n", 3, 6, 6))]
    assert summary.outputs == [("scores", "float32", ("n", 2))]
    assert summary.ops["Conv"] == 1 and summary.parameters == sum(p.numel() for p in model.parameters())
    assert deploy.file_size(path) > 4 * summary.parameters  # float32 weights are in the file
    assert not list(tmp_path.glob("*.part"))  # written atomically: no temporary file left
    session = deploy.ort_session(path, threads=1)
    for batch in (1, 5):  # other batch sizes than the example's
        x = torch.randn(batch, 3, 6, 6)
        with torch.no_grad():
            expected = model(x)
        report = deploy.compare_outputs(expected, deploy.run_session(session, x)[0], atol=1e-5, rtol=1e-4)
        assert report.ok, report


def test_file_size_format_bytes_and_table(tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(b"x" * 3000)
    assert deploy.file_size(path) == 3000
    (tmp_path / "m.onnx.data").write_bytes(b"x" * 100)
    assert deploy.file_size(path) == 3100
    with pytest.raises(FileNotFoundError):
        deploy.file_size(tmp_path / "nope.onnx")
    assert deploy.format_bytes(512) == "512 B" and deploy.format_bytes(163840) == "160 KiB"
    assert deploy.format_bytes(3 * 2**20) == "3 MiB"
    assert deploy.format_bytes(1000 * 2**10) == "1000 KiB"  # no '1e+03' 
    table = deploy.Table(["model", "ms"], [["cnn", 1.5], ["unet", 12]], title="latency")
    text = str(table).splitlines()
    assert text[0] == "latency" and text[1].split() == ["model", "ms"] and text[3].split() == ["cnn", "1.5"]
    assert "<caption>latency</caption>" in table._repr_html_()
    with pytest.raises(ValueError, match="2 values"):
        deploy.Table(["a", "b"], [[1]])


def test_require_onnx_names_what_is_missing_and_how_to_install_it(monkeypatch):
    versions = deploy.require_onnx()
    assert set(versions) == {"onnx", "onnxruntime", "onnxscript"}
    import builtins

    real_import = builtins.__import__

    def without_onnxscript(name, *args, **kwargs):
        if name == "onnxscript":
            raise ImportError("No module named 'onnxscript'")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(__import__("sys").modules, "onnxscript", raising=False)
    monkeypatch.setattr(builtins, "__import__", without_onnxscript)
    monkeypatch.setattr("importlib.import_module", lambda name: without_onnxscript(name))
    with pytest.raises(ModuleNotFoundError, match=r"onnxscript is not installed.*torch-cuda-course\[onnx\]"):
        deploy.require_onnx()


def test_require_onnx_rejects_an_onnxscript_too_old_for_the_dynamo_exporter(monkeypatch):
    import onnxscript

    monkeypatch.setattr(onnxscript, "__version__", "0.2.5")
    with pytest.raises(ModuleNotFoundError, match="onnxscript 0.2.5 is older than 0.6"):
        deploy.require_onnx()


def test_bind_torch_reads_and_writes_torch_tensors_in_place(tmp_path):
    path = tmp_path / "gate.onnx"
    onnx.save(tiny_graph_with_if(), path)
    session = deploy.ort_session(path, threads=1)
    x = torch.tensor([[1.0, -2.0, 3.0, 4.0]] * 3)
    y = torch.full((3, 4), float("nan"))
    address = y.data_ptr()
    binding = deploy.bind_torch(session, [x], [y])
    session.run_with_iobinding(binding)
    assert y.data_ptr() == address  # the result was written where y lives: no new array
    torch.testing.assert_close(y, torch.relu(x) * torch.tensor([1.0, 2.0, 3.0, 4.0]))
    x.mul_(-1)  # the binding holds x's address: a second run reads the new values
    session.run_with_iobinding(binding)
    torch.testing.assert_close(y, -x * torch.tensor([1.0, 2.0, 3.0, 4.0]))


def test_bind_torch_refuses_what_would_be_read_wrongly(tmp_path):
    path = tmp_path / "gate.onnx"
    onnx.save(tiny_graph_with_if(), path)
    session = deploy.ort_session(path, threads=1)
    x, y = torch.ones(3, 4), torch.empty(3, 4)
    with pytest.raises(TypeError, match="tensor\\(float\\) in the model, the tensor is torch.float64"):
        deploy.bind_torch(session, [x.double()], [y])
    with pytest.raises(ValueError, match="not contiguous"):
        deploy.bind_torch(session, [torch.ones(4, 3).t()], [y])
    with pytest.raises(ValueError, match="shape \\['batch', 4\\]"):
        deploy.bind_torch(session, [torch.ones(3, 5)], [y])
    with pytest.raises(ValueError, match="1 output"):
        deploy.bind_torch(session, [x], [y, y])
    with pytest.raises(TypeError, match="torch tensors"):
        deploy.bind_torch(session, [x.numpy()], [y])


def test_tensorrt_providers_need_the_provider_and_describe_a_shape_range(tmp_path, monkeypatch):
    if not deploy.tensorrt_available():
        with pytest.raises(RuntimeError, match="TensorrtExecutionProvider"):
            deploy.tensorrt_providers(tmp_path)
        monkeypatch.setattr(deploy, "tensorrt_available", lambda: True)
    providers = deploy.tensorrt_providers(tmp_path / "engines", shapes={"images": ((1, 3, 8, 8), (4, 3, 8, 8),
                                                                                   (16, 3, 8, 8))})
    name, options = providers[0]
    assert name == "TensorrtExecutionProvider" and providers[-1] == "CPUExecutionProvider"
    assert options["trt_profile_min_shapes"] == "images:1x3x8x8" and options["trt_profile_max_shapes"] == "images:16x3x8x8"
    assert options["trt_fp16_enable"] is True and (tmp_path / "engines").is_dir()
