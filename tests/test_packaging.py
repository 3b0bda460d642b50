"""The install files agree: pyproject.toml and environment.yml name the same packages."""

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tools/
# conda-forge names for the few packages that PyPI spells differently
CONDA_TO_PYPI = {"pytorch": "torch", "cuda-cccl": "nvidia-cuda-cccl"}
# conda-forge's one cupy is PyPI's build per CUDA major (make lab picks one, tools/gpu_extras.py)
CUPY_BUILDS = {"cupy-cuda12x", "cupy-cuda13x"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def pyproject_packages() -> set:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    names = set()
    for block in re.findall(r"^(?:dependencies|gpu|gpu13|onnx|dev)\s*=\s*\[(.*?)\]\s*$", text, re.S | re.M):
        names |= {_name(r) for r in re.findall(r'"([^"]+)"', block)}
    names.discard("torch-cuda-course")  # the dev extra names the package's own extras
    if CUPY_BUILDS <= names:
        names = (names - CUPY_BUILDS) | {"cupy"}
    return names


def environment_packages() -> set:
    names = set()
    text = (ROOT / "environment.yml").read_text(encoding="utf-8")
    for line in text.split("\ndependencies:", 1)[1].splitlines():
        match = re.match(r"^\s{2}- ([A-Za-z0-9_.-]+)", line)
        if match:
            name = _name(match.group(1))
            names.add(CONDA_TO_PYPI.get(name, name))
    return names - {"python", "pip"}


def test_environment_yml_and_pyproject_name_the_same_packages():
    py, conda = pyproject_packages(), environment_packages()
    assert len(py) >= 15, py  # the parser found the lists
    assert py == conda, f"only in pyproject.toml: {sorted(py - conda)}; only in environment.yml: {sorted(conda - py)}"


def test_colab_preinstalled_versions_satisfy_the_lower_bounds():
    """Colab ships torch 2.11 (torchvision 0.26), cupy-cuda12x 13 and ipywidgets 7.7.1: pip must not replace them."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    bounds = dict(re.findall(r'"(torch|torchvision|ipywidgets|cupy-cuda12x|onnxscript)>=([\d.]+)"', text))
    as_tuple = lambda v: tuple(int(p) for p in v.split("."))
    assert as_tuple(bounds["torch"]) <= (2, 11)
    assert as_tuple(bounds["torchvision"]) <= (0, 26)
    assert as_tuple(bounds["ipywidgets"]) <= (7, 7, 1)
    assert as_tuple(bounds["cupy-cuda12x"]) <= (13,)
    # and high enough for what the code uses: fp32_precision switches and the dynamo exporter (torch 2.9),
    # torch 2.11's exporter API in onnxscript (0.6)
    assert as_tuple(bounds["torch"]) >= (2, 9) and as_tuple(bounds["onnxscript"]) >= (0, 6)


def test_the_installed_torch_has_what_the_floor_promises():
    import torch

    assert hasattr(torch.backends.cuda.matmul, "fp32_precision") and hasattr(torch.backends.cudnn.conv, "fp32_precision")


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make test" in readme and "make lab" in readme
    assert "make test" in ci


def test_make_lab_and_make_test_add_the_gpu_packages_after_the_course():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    stamp_rule = makefile.split("$(STAMP):", 1)[1].split("\n\n", 1)[0]
    assert "tools/gpu_extras.py --install" in stamp_rule and stamp_rule.index("-e '.[dev]'") < stamp_rule.index("gpu_extras.py --install")
    assert re.search(r"^lab: install", makefile, re.M) and re.search(r"^test: install", makefile, re.M)


# ---------------------------------------------------------------- tools/gpu_extras.py, with recorded nvidia-smi outputs

from tools import gpu_extras  # noqa: E402

SMI_CUDA_13 = """\
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 580.95.05              Driver Version: 580.95.05      CUDA Version: 13.0     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
|   0  NVIDIA H200                    On  |   00000000:19:00.0 Off |                    0 |
+-----------------------------------------+------------------------+----------------------+
"""
SMI_CUDA_12 = """\
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15    CUDA Version: 12.4     |
|   0  Tesla T4                       Off | 00000000:00:04.0 Off |                    0 |
+---------------------------------------------------------------------------------------+
"""
SMI_CUDA_11 = "| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |\n"
SMI_NO_DRIVER = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                 "Make sure that the latest NVIDIA driver is installed and running.\n")


@pytest.mark.parametrize("text, version", [(SMI_CUDA_13, (13, 0)), (SMI_CUDA_12, (12, 4)), (SMI_CUDA_11, (11, 4)),
                                           (SMI_NO_DRIVER, None), ("", None), (None, None)])
def test_driver_cuda_version_from_nvidia_smi(text, version):
    assert gpu_extras.driver_cuda_version(text) == version


def test_no_driver_changes_nothing():
    plan = gpu_extras.choose(None)
    assert plan.install == [] and plan.uninstall == [] and "no NVIDIA driver" in plan.notes[0]


def test_cuda_13_driver_gets_cupy_13_and_onnxruntime_gpu():
    plan = gpu_extras.choose((13, 0), torch_cuda=(13, 0))
    assert plan.install == ["cupy-cuda13x[ctk]>=14", "onnxruntime-gpu[cuda,cudnn]>=1.23"]
    assert plan.uninstall == ["onnxruntime"]  # both provide the onnxruntime module
    assert not any("warning" in note for note in plan.notes)


def test_cuda_12_driver_gets_cupy_12_and_keeps_cpu_onnxruntime():
    plan = gpu_extras.choose((12, 4), torch_cuda=(12, 6))
    assert plan.install == ["cupy-cuda12x[ctk]>=14"] and plan.uninstall == []
    assert any("onnxruntime stays the CPU build" in note for note in plan.notes)


def test_torch_built_for_a_newer_cuda_than_the_driver_is_a_warning():
    plan = gpu_extras.choose((12, 4), torch_cuda=(13, 0))
    warning = next(note for note in plan.notes if note.startswith("warning"))
    assert "cannot use this GPU" in warning and "whl/cu126" in warning


def test_old_driver_and_other_platforms():
    assert gpu_extras.choose((11, 4)).install == []
    linux_arm = gpu_extras.choose((13, 0), system="Linux", machine="aarch64")
    assert linux_arm.install == ["cupy-cuda13x[ctk]>=14"] and linux_arm.uninstall == []


def test_the_script_reads_a_recorded_output_and_installs_nothing_without_install(tmp_path, capsys):
    recorded = tmp_path / "smi.txt"
    recorded.write_text(SMI_CUDA_12, encoding="utf-8")
    assert gpu_extras.main(["--smi-output", str(recorded)]) == 0
    out = capsys.readouterr().out
    assert "would install: cupy-cuda12x[ctk]>=14" in out
