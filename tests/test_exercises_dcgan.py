"""Notebook 07's exercise checks: the answer passes, the stub is "not attempted", the usual mistake fails."""

import json

import pytest
import torch
import torch.nn.functional as F

from course import checks
from course.exercises import dcgan as ex
from course.models import DCGANGenerator


def stub(*args, **kwargs):
    raise NotImplementedError


def verdict(capsys, check, *fns):
    ok = check(*fns)
    return ok, capsys.readouterr().out


# --- right answers (the notebook's solution cells hold the same) ----------------------------

def convtranspose_out(size, kernel, stride, padding):
    return (size - 1) * stride - 2 * padding + kernel


def discriminator_loss(real_logits, fake_logits):
    return (F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
            + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits)))


def save_generator(G, path):
    from safetensors.torch import save_file

    save_file(G.state_dict(), str(path), metadata={"config": json.dumps(G.config())})


def load_generator(path, device):
    from safetensors import safe_open
    from safetensors.torch import load_file

    with safe_open(str(path), "pt") as f:
        config = json.loads(f.metadata()["config"])
    G = DCGANGenerator(**config)
    G.load_state_dict(load_file(str(path), device="cpu"))
    return G.to(device).eval()


def smoothed_step(G, D, opt_g, opt_d, real, real_label=0.9, g_label=1.0):
    n = real.shape[0]
    fake = G(torch.randn(n, G.nz, 1, 1, device=real.device))
    real_logits, fake_logits = D(real), D(fake.detach())
    loss_d = (F.binary_cross_entropy_with_logits(real_logits, torch.full((n,), real_label))
              + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros(n)))
    opt_d.zero_grad(set_to_none=True)
    loss_d.backward()
    opt_d.step()
    after = D(fake)
    loss_g = F.binary_cross_entropy_with_logits(after, torch.full((n,), g_label))
    opt_g.zero_grad(set_to_none=True)
    loss_g.backward()
    opt_g.step()
    return {"loss_d": loss_d.item(), "loss_g": loss_g.item(), "D(x)": real_logits.sigmoid().mean().item(),
            "D(G(z)) before": fake_logits.sigmoid().mean().item(), "D(G(z)) after": after.sigmoid().mean().item()}


def interpolate(z0, z1, steps):
    t = torch.linspace(0, 1, steps).view(-1, 1, 1, 1)
    return z0 + t * (z1 - z0)


def slerp(z0, z1, t):
    omega = torch.arccos((z0.flatten() @ z1.flatten() / (z0.norm() * z1.norm())).clamp(-1, 1))
    if torch.sin(omega).abs() < 1e-6:
        return z0 + t * (z1 - z0)
    return (torch.sin((1 - t) * omega) * z0 + torch.sin(t * omega) * z1) / torch.sin(omega)


RIGHT = [
    (ex.check_convtranspose_out, (convtranspose_out,)),
    (ex.check_discriminator_loss, (discriminator_loss,)),
    (ex.check_save_and_load, (save_generator, load_generator)),
    (ex.check_smoothed_train_step, (smoothed_step,)),
    (ex.check_interpolate, (interpolate,)),
    (ex.check_slerp, (slerp,)),
]


@pytest.mark.parametrize("check,fns", RIGHT, ids=lambda v: getattr(v, "__name__", ""))
def test_the_answer_passes_and_the_stub_is_not_attempted(capsys, check, fns):
    ok, out = verdict(capsys, check, *fns)
    assert ok and "✅" in out, out
    ok, out = verdict(capsys, check, *[stub] * len(fns))
    assert not ok and "not attempted yet" in out and "hint" not in out.lower().replace("hint()", ""), out


def test_checks_register_a_nudge_and_a_method_that_are_not_the_answer(capsys):
    for check, fns in RIGHT:
        check(*[stub] * len(fns))
    capsys.readouterr()
    for name in ("convtranspose_out", "discriminator_loss", "save_and_load", "smoothed_train_step",
                 "interpolate", "slerp"):
        first, second = checks.hint(name), checks.hint(name)
        assert "hint 1 of 2" in first and "hint 2 of 2" in second
    assert "- 2 * padding" not in capsys.readouterr().out


# --- the most common wrong answer of each exercise ------------------------------------------

def test_padding_cropped_on_one_side_only_is_rejected(capsys):
    ok, out = verdict(capsys, ex.check_convtranspose_out, lambda s, k, st, p: (s - 1) * st - p + k)
    assert not ok and "with input (4, 4, 2, 1)" in out and "expected 8, got 9" in out, out


def test_log_of_sigmoid_by_hand_is_rejected_at_large_logits(capsys):
    def by_hand(real_logits, fake_logits):
        return -(torch.log(torch.sigmoid(real_logits)).mean() + torch.log(1 - torch.sigmoid(fake_logits)).mean())

    ok, out = verdict(capsys, ex.check_discriminator_loss, by_hand)
    assert not ok and "100.0" in out and "got inf" in out, out


def test_pickling_the_whole_model_is_rejected(capsys):
    def save_whole(G, path):
        torch.save(G, path)

    def load_whole(path, device):
        return torch.load(path, map_location=device, weights_only=False).eval()

    ok, out = verdict(capsys, ex.check_save_and_load, save_whole, load_whole)
    assert not ok and "weights_only=False" in out, out


def test_saving_parameters_only_loses_the_batchnorm_statistics(capsys):
    def save_parameters(G, path):
        from safetensors.torch import save_file

        save_file(dict(G.named_parameters()), str(path), metadata={"config": json.dumps(G.config())})

    def load_parameters(path, device):
        from safetensors import safe_open
        from safetensors.torch import load_file

        with safe_open(str(path), "pt") as f:
            G = DCGANGenerator(**json.loads(f.metadata()["config"]))
        G.load_state_dict(load_file(str(path)), strict=False)
        return G.to(device).eval()

    ok, out = verdict(capsys, ex.check_save_and_load, save_parameters, load_parameters)
    assert not ok and "running_mean" in out and "buffer" in out, out


def test_forgetting_eval_is_rejected(capsys):
    ok, out = verdict(capsys, ex.check_save_and_load, save_generator, lambda p, d: load_generator(p, d).train())
    assert not ok and ".eval()" in out, out


def test_smoothing_the_generator_target_too_is_rejected(capsys):
    ok, out = verdict(capsys, ex.check_smoothed_train_step,
                      lambda G, D, og, od, real, label: smoothed_step(G, D, og, od, real, label, g_label=label))
    assert not ok and "D is right but G's weights differ" in out and "one-sided" in out, out


def test_no_smoothing_is_rejected_at_d(capsys):
    ok, out = verdict(capsys, ex.check_smoothed_train_step,
                      lambda G, D, og, od, real, label: smoothed_step(G, D, og, od, real, 1.0))
    assert not ok and "D's weights after the step differ" in out and "real_label=0.9, step 1" in out, out


def test_lerp_instead_of_slerp_is_rejected_with_the_lengths(capsys):
    ok, out = verdict(capsys, ex.check_slerp, lambda z0, z1, t: z0 + t * (z1 - z0))
    assert not ok and "straight-line point, of length" in out and "t=0.25" in out, out


def test_slerp_without_the_equal_codes_case_is_rejected(capsys):
    def no_fallback(z0, z1, t):
        omega = torch.arccos((z0.flatten() @ z1.flatten() / (z0.norm() * z1.norm())).clamp(-1, 1))
        return (torch.sin((1 - t) * omega) * z0 + torch.sin(t * omega) * z1) / torch.sin(omega)

    ok, out = verdict(capsys, ex.check_slerp, no_fallback)
    assert not ok and "nearly) identical codes" in out, out


def test_interpolate_without_the_end_point_is_rejected(capsys):
    def no_end(z0, z1, steps):
        t = torch.arange(steps).view(-1, 1, 1, 1) / steps  # stops short of z1
        return z0 + t * (z1 - z0)

    ok, out = verdict(capsys, ex.check_interpolate, no_end)
    assert not ok and "values differ" in out, out
