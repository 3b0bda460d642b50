"""Notebook 07's exercise checks (DCGAN): sizes, losses, a training-step change, safe saving, latent walks.

Each ``check_*`` runs the learner's code against a reference on small generators, prints ✅ or
❌ with a diagnosis (which value, which layer, which rule) through ``course.checks``, registers
the exercise's hints for ``course.checks.hint()`` and returns a bool. It never raises because
of the learner's code. The answers are only in the notebook's folded solution cells.
"""

from __future__ import annotations

import copy
import inspect
import math
import tempfile
from pathlib import Path

from course import checks
from course.checks import called as _called, verdict as _verdict

__all__ = ["check_convtranspose_out", "check_discriminator_loss", "check_save_and_load",
           "check_smoothed_train_step", "check_interpolate", "check_slerp"]


# --- Exercise 1: the transposed-convolution size formula -------------------------------------

def check_convtranspose_out(fn) -> bool:
    """``fn(size, kernel, stride, padding)`` must give nn.ConvTranspose2d's output size."""
    import torch
    from torch import nn

    def measured(size, kernel, stride, padding):  # ask PyTorch itself
        layer = nn.ConvTranspose2d(1, 1, kernel, stride, padding)
        with torch.no_grad():
            return layer(torch.zeros(1, 1, size, size)).shape[-1]

    cases = [(1, 4, 1, 0), (4, 4, 2, 1), (8, 4, 2, 1), (16, 4, 2, 1), (7, 3, 2, 1), (5, 5, 3, 2), (3, 2, 1, 0)]
    return checks.check_function(fn, measured, cases, name="convtranspose_out", hints=[
        "Follow one row of pixels: every input pixel becomes a kernel-wide patch in the output, and "
        "neighbouring patches start `stride` pixels apart. Where does the last patch start and end?",
        "The first patch starts at 0, the last at (size − 1) × stride, and it is `kernel` pixels wide; "
        "that span is the output before cropping. Then `padding` pixels are cut from *each* side.",
    ])


# --- Exercise 2: the discriminator's loss ----------------------------------------------------

def check_discriminator_loss(fn) -> bool:
    """``fn(real_logits, fake_logits)``: mean BCE(real, 1) + mean BCE(fake, 0), finite for logits of ±100."""
    import torch
    import torch.nn.functional as F

    def reference(real_logits, fake_logits):
        return (F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
                + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits)))

    g = torch.Generator().manual_seed(5)
    cases = [(torch.randn(8, generator=g), torch.randn(8, generator=g)),
             (torch.randn(64, generator=g) * 3, torch.randn(32, generator=g) * 3),  # batches may differ in size
             (torch.tensor([100.0, -100.0]), torch.tensor([-100.0, 100.0]))]       # stays finite?
    return checks.check_function(fn, reference, cases, name="discriminator_loss", rtol=1e-4, atol=1e-5, hints=[
        "Two separate averages, one per batch: D should say 1 on every real image and 0 on every "
        "fake. And D gives logits, not probabilities — which loss function takes logits?",
        "Use F.binary_cross_entropy_with_logits(logits, targets) twice, with targets made by "
        "torch.ones_like / torch.zeros_like, and add the two results. Computing log(sigmoid(x)) "
        "yourself gives -inf for large |x|.",
    ])


# --- Exercise 3: save and load a generator safely -------------------------------------------

def _small_generator(image_size: int, ngf: int, seed: int):
    """A small DCGAN generator whose BatchNorm buffers have moved away from their defaults."""
    import torch

    from course.models.dcgan import DCGANGenerator, weights_init

    torch.manual_seed(seed)
    G = DCGANGenerator(nz=8, image_size=image_size, channels=1, ngf=ngf).apply(weights_init)
    with torch.no_grad():
        G.train()(torch.randn(16, 8, 1, 1))  # one forward pass in train mode moves the running statistics
    return G.eval()


def _holds_a_pickled_object(path: Path) -> str | None:
    """A diagnosis when ``path`` is neither a safetensors file nor a tensors-only torch file."""
    import torch

    try:
        from safetensors.torch import load_file

        load_file(str(path))
        return None
    except Exception:
        pass
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:
        first = str(error).strip().splitlines()[0][:160] if str(error).strip() else type(error).__name__
        return (f"{path.name} cannot be read as tensors only (torch.load with weights_only=True says: "
                f"{first}). It holds a pickled Python object — save G.state_dict(), not G.")
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        return f"{path.name} holds {type(state).__name__}, not a dict of tensors: save G.state_dict()."
    return None


def check_save_and_load(save_fn, load_fn) -> bool:
    """``save_fn(G, path)`` then ``load_fn(path, device)`` must give back the same generator, safely."""
    import torch

    from course.models.dcgan import DCGANGenerator

    def judge():
        for fn in (save_fn, load_fn):
            try:
                source = inspect.getsource(fn)
            except (OSError, TypeError):
                source = ""
            if "weights_only=False" in source.replace(" ", ""):
                return (f"{getattr(fn, '__name__', 'your function')} uses weights_only=False: that unpickles "
                        "whatever the file holds and can run code. Load tensors only.")
        for image_size, ngf, seed in [(8, 4, 0), (16, 8, 1)]:  # two configs: the loader must read the config
            G = _small_generator(image_size, ngf, seed)
            with tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / "generator.safetensors"
                save_fn(G, path)
                if not path.is_file():
                    return f"save_fn wrote nothing at the path it was given ({path.name})."
                problem = _holds_a_pickled_object(path)
                if problem:
                    return problem
                loaded = _called(load_fn, path, "cpu")
            if not isinstance(loaded, DCGANGenerator):
                return f"load_fn returned {type(loaded).__name__}; return the rebuilt DCGANGenerator."
            if loaded.config() != G.config():
                return (f"the loaded generator has config {loaded.config()}, the saved one {G.config()}: "
                        "save the constructor's arguments (G.config()) and rebuild from them.")
            if loaded.training:
                return "the loaded generator is in training mode: call .eval() before returning it (BatchNorm)."
            device = next(loaded.parameters()).device
            if device.type != "cpu":
                return f"load_fn(path, 'cpu') returned a generator on {device}: move it to the device asked for."
            expected, got = G.state_dict(), loaded.state_dict()
            for key, value in expected.items():
                if not torch.equal(got[key].cpu(), value):
                    kind = "buffer (BatchNorm statistics)" if "running" in key or "batches" in key else "weight"
                    return (f"with image_size={image_size}: {key} ({kind}) differs from the saved model — "
                            "save the whole state_dict, buffers included, and load it with load_state_dict.")
            z = torch.randn(4, 8, 1, 1, generator=torch.Generator().manual_seed(seed))
            with torch.no_grad():
                if not torch.equal(loaded(z), G(z)):
                    return "the loaded generator's images differ from the saved one's on the same noise."
        return None

    return _verdict("save_and_load", [
        "Two things travel: the tensors (G.state_dict(), weights and BatchNorm buffers) and the "
        "constructor's arguments (G.config()), so the loader can rebuild the model before filling it.",
        "safetensors.torch.save_file(state_dict, path, metadata=...) stores tensors plus a dict of "
        "strings (json.dumps the config into it); safe_open(path, 'pt') reads the metadata back, "
        "load_file(path, device=...) the tensors. Rebuild with DCGANGenerator(**config), "
        "load_state_dict, .to(device), .eval().",
    ], judge, "saved, reloaded and proved equal: every tensor (buffers too) and the images on the same noise.")


# --- Exercise 4: one-sided label smoothing in the training step ------------------------------

_STEP_KEYS = ("loss_d", "loss_g", "D(x)", "D(G(z)) before", "D(G(z)) after")


def _reference_smoothed_step(G, D, opt_g, opt_d, real, real_label=0.9):
    import torch
    import torch.nn.functional as F

    n = real.shape[0]
    fake = G(torch.randn(n, G.nz, 1, 1, device=real.device))
    real_logits, fake_logits = D(real), D(fake.detach())
    loss_d = (F.binary_cross_entropy_with_logits(real_logits, torch.full_like(real_logits, real_label))
              + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits)))
    opt_d.zero_grad(set_to_none=True)
    loss_d.backward()
    opt_d.step()
    after_logits = D(fake)
    loss_g = F.binary_cross_entropy_with_logits(after_logits, torch.ones_like(after_logits))
    opt_g.zero_grad(set_to_none=True)
    loss_g.backward()
    opt_g.step()
    return {"loss_d": loss_d.item(), "loss_g": loss_g.item(), "D(x)": real_logits.sigmoid().mean().item(),
            "D(G(z)) before": fake_logits.sigmoid().mean().item(),
            "D(G(z)) after": after_logits.sigmoid().mean().item()}


def _largest_difference(model_a, model_b):
    import torch

    worst = (0.0, "")
    for (key, a), b in zip(model_a.state_dict().items(), model_b.state_dict().values()):
        if a.is_floating_point():
            diff = (a - b).abs().max().item() if a.numel() else 0.0
            worst = max(worst, (diff, key))
        elif not torch.equal(a, b):
            worst = max(worst, (math.inf, key))
    return worst


def check_smoothed_train_step(fn) -> bool:
    """``fn(G, D, opt_g, opt_d, real, real_label)``: train_step with one-sided label smoothing and D(G(z)) after."""
    import torch

    from course.models.dcgan import DCGANDiscriminator, weights_init

    def judge():
        for real_label in (0.9, 0.75):
            G = _small_generator(8, 4, seed=3).train()
            torch.manual_seed(4)
            D = DCGANDiscriminator(image_size=8, channels=1, ndf=4).apply(weights_init)
            real = torch.rand(8, 1, 8, 8, generator=torch.Generator().manual_seed(5)) * 2 - 1
            players = {}
            for who in ("reference", "yours"):
                g, d = copy.deepcopy(G), copy.deepcopy(D)
                opts = (torch.optim.Adam(g.parameters(), lr=1e-2, betas=(0.5, 0.999)),
                        torch.optim.Adam(d.parameters(), lr=1e-2, betas=(0.5, 0.999)))
                players[who] = (g, d, *opts)
            for step in range(2):  # two steps: Adam's state carries over
                torch.manual_seed(100 + step)
                expected = _reference_smoothed_step(*players["reference"], real.clone(), real_label)
                torch.manual_seed(100 + step)
                got = _called(fn, *players["yours"], real.clone(), real_label)
                where = f"with real_label={real_label}, step {step + 1}"
                if not isinstance(got, dict) or any(k not in got for k in _STEP_KEYS):
                    keys = sorted(got) if isinstance(got, dict) else type(got).__name__
                    return f"{where}: return a dict with the keys {list(_STEP_KEYS)}; got {keys}."
                (g_ref, d_ref, *_), (g_you, d_you, *_) = players["reference"], players["yours"]
                d_diff, d_key = _largest_difference(d_ref, d_you)
                if d_diff > 1e-5:
                    return (f"{where}: D's weights after the step differ from the reference (by {d_diff:.2g} in "
                            f"{d_key}). D's step is where the smoothing goes: real images get the target "
                            "real_label, fakes keep 0; sample the noise once with torch.randn(n, G.nz, 1, 1).")
                g_diff, g_key = _largest_difference(g_ref, g_you)
                if g_diff > 1e-5:
                    return (f"{where}: D is right but G's weights differ (by {g_diff:.2g} in {g_key}). The "
                            "smoothing is one-sided: G's loss still uses target 1, on the same fakes, judged "
                            "by the updated D.")
                for key in _STEP_KEYS:
                    if not math.isclose(float(got[key]), expected[key], rel_tol=1e-4, abs_tol=1e-6):
                        return f"{where}: {key!r} is {float(got[key]):.6g}, expected {expected[key]:.6g}."
        return None

    return _verdict("smoothed_train_step", [
        "Only D's targets for *real* images change (from 1 to real_label); the fakes keep 0 and G keeps "
        "aiming at 1. 'D(G(z)) after' is what the updated D says about the same fakes.",
        "Copy train_step. In D's step build the real targets with torch.full_like(real_logits, "
        "real_label). In G's step keep the logits of D(fake) in a variable: you need them for G's loss "
        "(target 1) and, through .sigmoid().mean(), for 'D(G(z)) after'.",
    ], judge, "matches the reference step: D's and G's weights, losses and all three D(…) numbers, for two steps.")


# --- Exercise 5: a straight-line walk in latent space ---------------------------------------

def check_interpolate(fn) -> bool:
    """``fn(z0, z1, steps)``: steps codes from z0 to z1 on a straight line, shape steps×nz×1×1."""
    import torch

    def reference(z0, z1, steps):
        t = torch.linspace(0, 1, steps).view(-1, 1, 1, 1)
        return torch.lerp(z0.expand(steps, -1, -1, -1), z1.expand(steps, -1, -1, -1), t)

    g = torch.Generator().manual_seed(7)
    cases = [(torch.randn(100, 1, 1, generator=g), torch.randn(100, 1, 1, generator=g), steps) for steps in (2, 5, 9)]
    cases.append((torch.zeros(3, 1, 1), torch.ones(3, 1, 1), 3))
    return checks.check_function(fn, reference, cases, name="interpolate", hints=[
        "You need `steps` weights t going evenly from 0 to 1, both ends included; each code is z0 moved "
        "a fraction t of the way towards z1. One tensor operation can make all of them at once.",
        "Make t with torch.linspace and reshape it to steps×1×1×1, so that broadcasting against the "
        "nz×1×1 codes gives steps×nz×1×1; then combine z0, z1 and t linearly.",
    ])


# --- Exercise 6: spherical interpolation -----------------------------------------------------

def _reference_slerp(z0, z1, t):
    import torch

    cos = (z0.flatten() @ z1.flatten() / (z0.norm() * z1.norm())).clamp(-1, 1)
    omega = torch.arccos(cos)
    if torch.sin(omega).abs() < 1e-6:  # (nearly) the same direction: the arc is a straight line
        return z0 + t * (z1 - z0)
    return (torch.sin((1 - t) * omega) * z0 + torch.sin(t * omega) * z1) / torch.sin(omega)


def check_slerp(fn) -> bool:
    """``fn(z0, z1, t)``: the point at fraction t of the great-circle arc from z0 to z1."""
    import torch

    def judge():
        g = torch.Generator().manual_seed(11)
        z0, z1 = torch.randn(100, 1, 1, generator=g), torch.randn(100, 1, 1, generator=g)
        near = z0 + 1e-7 * torch.randn(100, 1, 1, generator=g)
        cases = [(z0, z1, t) for t in (0.0, 0.25, 0.5, 1.0)] + [(z0[:3], 2 * z1[:3], 0.3), (z0, near, 0.5)]
        for a, b, t in cases:
            expected = _reference_slerp(a, b, t)
            got = _called(fn, a.clone(), b.clone(), t)
            if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
                shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
                return f"at t={t}: expected a tensor of shape {tuple(expected.shape)}, got {shape}."
            if not torch.isfinite(got).all():
                if b is near:
                    return ("for two (nearly) identical codes you return NaN or inf: the angle is ~0 and you "
                            "divide by sin(0). When sin(ω) is tiny, the arc is a straight line.")
                return (f"at t={t} you return NaN or inf. arccos needs a cosine in [-1, 1]: divide the dot "
                        "product by both lengths (and clamp).")
            if not torch.allclose(got, expected, rtol=1e-4, atol=1e-4):
                lerp = a + t * (b - a)
                if torch.allclose(got, lerp, rtol=1e-4, atol=1e-4) and b is not near:
                    return (f"at t={t} you return the straight-line point, of length {got.norm():.2f}; on the "
                            f"arc the length is {expected.norm():.2f}. Slerp walks the great circle.")
                return (f"at t={t}: {int((~torch.isclose(got, expected, rtol=1e-4, atol=1e-4)).sum())} of "
                        f"{got.numel()} numbers differ; first: expected {expected.flatten()[0]:.4f}, "
                        f"got {got.flatten()[0]:.4f}.")
        return None

    return _verdict("slerp", [
        "Think of z0 and z1 as two arrows from the origin. Find the angle ω between them; the point at "
        "fraction t is the arrow turned by t·ω from z0 towards z1 in their common plane.",
        "cos ω = (z0 · z1) / (‖z0‖ ‖z1‖), clamped to [-1, 1], and ω = arccos. Weight z0 by "
        "sin((1 − t)ω) and z1 by sin(tω), then divide by sin ω; when sin ω is ~0, use the straight line.",
    ], judge, "walks the great circle, ends included, and stays finite for (nearly) equal codes.")
