"""Named checks for notebook 05 (a CIFAR-10 CNN): one ``check_*`` per exercise.

Each check runs the learner's function on small inputs it builds itself, compares with a
reference (PyTorch's own layers where one exists), prints ✅ or ❌ with a specific diagnosis and
returns a bool. None of them needs CIFAR-10 or a GPU; ``device`` (default: the course's device)
is where the tensors live, so the same check runs on a GPU.
"""

from __future__ import annotations

from course import checks

SEED_FEATURES = 64 * 13 * 13  # the seed's wrong flattened size: 10,816


def _device(device):
    import torch

    from course import env

    return torch.device(device) if device is not None else env.device()


# ---------------------------------------------------------------------------------------------
# Exercise 1: the output size of a convolution or pooling layer

CONV_CASES = [(32, 5, 1, 0), (28, 2, 2, 0), (32, 3, 1, 1), (31, 3, 2, 1), (7, 7, 1, 0), (33, 2, 2, 0),
              (224, 7, 2, 3), (5, 3, 3, 0)]


def check_conv_output_size(fn) -> bool:
    """Exercise 1: ``conv_output_size(size, kernel, stride, padding)`` against what ``nn.Conv2d`` produces."""
    import torch
    from torch import nn

    def measured(size, kernel, stride, padding):  # the reference is PyTorch itself
        with torch.no_grad():
            return nn.Conv2d(1, 1, kernel, stride, padding)(torch.zeros(1, 1, size, size)).shape[-1]

    return checks.check_function(fn, measured, CONV_CASES, name="conv_output_size", hints=[
        "Draw one row of pixels: pad it on both sides, slide the kernel from the left edge, and count how many "
        "positions it can take. Try it on paper for size 5, kernel 3, stride 3 first.",
        "The padded row is the input plus the padding on *each* side. The first position uses `kernel` pixels; "
        "every further position needs `stride` more. Count the further positions with whole-number (floor) "
        "division, then add the first one.",
    ])


# ---------------------------------------------------------------------------------------------
# Exercise 2: fix the seed's network


def _is_seed_as_written(cls) -> bool:
    """True when both the constructor and forward still hold the seed's 64 * 13 * 13 (Python folds it to 10816)."""
    try:
        return all(SEED_FEATURES in getattr(cls, method).__code__.co_consts for method in ("__init__", "forward"))
    except AttributeError:
        return False


def check_fixed_seed_net(cls, device=None) -> bool:
    """Exercise 2: the seed's ``Net``, fixed — (N, 10) logits for batches of 4, 1 and 169, one row per image."""
    import torch

    name = "fixed seed network"
    hints = [
        "Run the shape trace above on your class: which layer's output does not match what the next layer "
        "expects? Then ask what `view(-1, …)` does with a batch whose numbers do not divide evenly — or, worse, "
        "do.",
        "Work out the side after the 5×5 convolution and after the 2×2 pooling (Exercise 1 does it for you), "
        "size the first linear layer from that, and flatten in a way that always keeps the batch dimension, "
        "whatever the number of features.",
    ]
    checks.register_hints(name, hints)
    if cls is ... or (isinstance(cls, type) and _is_seed_as_written(cls)):
        return checks.not_attempted(name)
    device = _device(device)

    def diagnosis():
        if not isinstance(cls, type):
            return f"expected the class itself (e.g. `Net`, not `Net()`), got {type(cls).__name__}"
        torch.manual_seed(0)
        model = cls().to(device).eval()
        for n in (4, 1, 169):
            images = torch.randn(n, 3, 32, 32, device=device)
            with torch.no_grad():
                out = model(images)
            if tuple(out.shape) != (n, 10):
                return (f"for a batch of {n} images the output has shape {tuple(out.shape)}, expected ({n}, 10): "
                        "one row of 10 class scores per image")
            changed = images.clone()
            changed[0] += 1.0
            with torch.no_grad():
                others = model(changed)[1:]
            if n > 1 and not torch.allclose(others, out[1:], atol=1e-5):
                row = int((others - out[1:]).abs().amax(1).argmax()) + 1
                return (f"with a batch of {n}, changing image 0 changed the output of image {row}: the rows mix "
                        "pieces of different images")
        return None

    try:
        problem = diagnosis()
    except Exception as error:  # the learner's class: report its error, never raise
        first = str(error).splitlines()[0] if str(error) else ""
        problem = f"building or running the network raised {type(error).__name__}: {first}"
    return checks.check_true(lambda: problem is None, name=name, fail=problem or "",
                             success="(N, 10) logits for batches of 4, 1 and 169, each row from its own image.")


# ---------------------------------------------------------------------------------------------
# Exercise 3: the evaluation loop


def _reference_predict(model, images, batch_size):
    import torch

    was_training = model.training
    model.eval()
    with torch.no_grad():
        logits = torch.cat([model(images[i:i + batch_size]) for i in range(0, len(images), batch_size)])
    model.train(was_training)
    return logits


def check_predict(fn, device=None) -> bool:
    """Exercise 3: ``predict(model, images, batch_size)`` — logits of every image, in eval mode, without autograd."""
    import torch
    from torch import nn

    from course.models import SpeedNet

    name = "predict"
    hints = [
        "Two modes matter: the network's (BatchNorm normalises by the batch while training, by its running "
        "averages in evaluation) and autograd's (no graph is needed to evaluate). And count: does every image, "
        "including the last few, get a row?",
        "Switch the model to evaluation mode, switch autograd off for the loop, run the model on consecutive "
        "slices of `batch_size` images up to the end (the last one may be shorter), and join the results "
        "along the batch dimension.",
    ]
    device = _device(device)
    torch.manual_seed(1)

    class Probe(nn.Sequential):  # a small SpeedNet: its BatchNorm answers differently in training mode
        def __repr__(self):
            return "a small SpeedNet"

    probe = Probe(SpeedNet(4)).to(device)
    with torch.no_grad():  # give BatchNorm running statistics unlike a single batch's
        probe.train()
        for _ in range(3):
            probe(torch.randn(16, 3, 32, 32, device=device) * 2 + 0.5)
    images = torch.randn(37, 3, 32, 32, device=device)
    probe.train()
    cases = [(probe, images, 8), (probe, images, 100), (probe, images[:1], 1)]
    if not checks.check_function(fn, _reference_predict, cases, name=name, rtol=1e-4, atol=1e-5, hints=hints,
                                 copy_inputs=False):
        return False

    def without_graph():
        return not fn(probe.train(), images[:2], 2).requires_grad

    return checks.check_true(without_graph, name=f"{name} without autograd", hints=hints,
                             fail="the logits carry an autograd graph (requires_grad=True): evaluation builds no "
                                  "graph, which saves the memory of every layer's activations")


# ---------------------------------------------------------------------------------------------
# Exercise 4: normalise uint8 batches on the device


def _reference_normalise(images, mean, std):
    import torch

    shape = (1, -1, 1, 1)
    x = images.float() / 255
    return (x - torch.tensor(mean, device=x.device).view(shape)) / torch.tensor(std, device=x.device).view(shape)


def check_normalise(fn, device=None) -> bool:
    """Exercise 4: ``normalise(images_uint8, mean, std)`` — float32, in [0, 1] first, per channel, on the same device."""
    import torch

    name = "normalise"
    hints = [
        "Three things to get right: the range (uint8 pixels go up to 255, mean and std are for pixels in [0, 1]), "
        "the dtype (uint8 arithmetic wraps around), and which dimension the 3 channel values line up with "
        "when you subtract a tuple of 3 numbers from an N×3×H×W batch.",
        "Convert to float32 first and scale to [0, 1]; make mean and std tensors on the images' device, shaped so "
        "that broadcasting pairs them with dimension 1 (size 3) and repeats them over N, H and W; then subtract "
        "and divide.",
    ]
    device = _device(device)
    generator = torch.Generator().manual_seed(2)
    mean, std = (0.49, 0.48, 0.45), (0.25, 0.24, 0.26)

    def batch(*shape):
        return torch.randint(0, 256, shape, dtype=torch.uint8, generator=generator).to(device)

    # width 3: a mean lined up with the last dimension broadcasts without an error, and is wrong
    cases = [(batch(4, 3, 5, 3), mean, std), (batch(2, 3, 32, 32), mean, std), (batch(1, 3, 1, 1), (0.0,) * 3, (1.0,) * 3)]
    if not checks.check_function(fn, _reference_normalise, cases, name=name, rtol=1e-5, atol=1e-5, hints=hints):
        return False

    def float32_on_device():
        out = fn(cases[0][0].clone(), mean, std)
        return out.dtype == torch.float32 and out.device == cases[0][0].device

    return checks.check_true(float32_on_device, name=f"{name} dtype and device", hints=hints,
                             fail=f"the values are right, but the result should be float32 on {device} (the "
                                  "network's dtype, where the images already are)")


# ---------------------------------------------------------------------------------------------
# Exercise 5: cutout


def cutout_problem(fn, device=None) -> str | None:
    """What is wrong with ``fn`` as a cutout (a diagnosis), or None when it is right."""
    import torch

    device = _device(device)
    torch.manual_seed(3)
    images = torch.rand(64, 3, 32, 32, device=device) + 0.5  # no zeros before: the square is the zeros after
    for size in (8, 5):
        out = fn(images.clone(), size)
        if not torch.is_tensor(out):
            return f"expected a tensor, got {type(out).__name__} — did the function forget to `return`?"
        if out.shape != images.shape:
            return f"cutout {size}: the shape changed from {tuple(images.shape)} to {tuple(out.shape)}"
        if out.device != images.device:
            return f"cutout {size}: the result is on {out.device}, the images on {images.device}"
        blank = (out == 0).all(1)  # N×H×W: pixels zero in every channel
        partly = ((out == 0).any(1) & ~blank).nonzero()
        if len(partly):
            i, y, x = (int(v) for v in partly[0])
            return f"cutout {size}: image {i}, pixel ({y}, {x}) is zero in some channels only; blank all channels"
        kept = ~blank.unsqueeze(1).expand_as(out)
        if not torch.equal(out[kept], images[kept]):
            return f"cutout {size}: pixels outside the blank square changed"
        corners = set()
        for i, mask in enumerate(blank):
            ys, xs = mask.nonzero(as_tuple=True)
            if len(ys) != size * size:
                return (f"cutout {size}: image {i} has {len(ys)} blank pixels, expected {size}×{size} = {size * size}"
                        + (" (part of the square fell outside the image?)" if 0 < len(ys) < size * size else ""))
            if int(ys.max() - ys.min()) != size - 1 or int(xs.max() - xs.min()) != size - 1:
                return f"cutout {size}: image {i}'s blank pixels do not form one {size}×{size} square"
            corners.add((int(ys.min()), int(xs.min())))
        if len(corners) <= 10:
            return (f"cutout {size}: only {len(corners)} different square positions in 64 images; each image "
                    "needs its own random position")
        reach = {c for corner in corners for c in corner}
        if max(reach) < 32 - size - 4:
            return (f"cutout {size}: no square starts beyond row/column {max(reach)}; positions up to "
                    f"{32 - size} keep the square inside and should all be possible")
    return None


def check_cutout(fn, device=None) -> bool:
    """Exercise 5: ``random_cutout(images, size)`` — one random size×size square per image, zero in every channel."""
    name = "random_cutout"
    hints = [
        "Think of one boolean mask of shape N×H×W that is True inside each image's square. Each image needs its "
        "own random corner, drawn so that the whole square stays inside; every channel is blanked.",
        "Draw N random top rows and N random left columns (the largest valid corner is the side minus the square's "
        "size), shaped N×1×1 so they broadcast; compare a column of row indices and a row of column indices with "
        "them to build the mask; give it a channel dimension and fill the images there with zero.",
    ]
    checks.register_hints(name, hints)
    try:
        problem = cutout_problem(fn, device)
    except NotImplementedError:
        return checks.not_attempted(name)
    except Exception as error:
        problem = f"the function raised {type(error).__name__}: {error}"
    return checks.check_true(lambda: problem is None, name=name, fail=problem or "",
                             success="a random square per image, inside the image, the rest untouched.")


# ---------------------------------------------------------------------------------------------
# Exercise 6: gradient accumulation


def _small_network(device):
    """The check's network: conv → ReLU → linear in float64, no BatchNorm (so micro-batches can be exact)."""
    import torch
    from torch import nn

    torch.manual_seed(4)
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 10)).to(device).double()


def _reference_accumulation(model, optimizer, images, labels, micro_batches):
    import torch.nn.functional as F

    optimizer.zero_grad(set_to_none=True)
    F.cross_entropy(model(images), labels).backward()  # one full batch: the update accumulation must reproduce
    optimizer.step()


def check_accumulation_step(fn, device=None) -> bool:
    """Exercise 6: ``accumulation_step(model, optimizer, images, labels, micro_batches)`` — one update equal to a full-batch step."""
    import torch

    name = "accumulation_step"
    hints = [
        "After the step, the parameters must be exactly where one ordinary step on the whole batch would put them. "
        "What does the full batch's loss average over, what does each micro-batch's loss average over, and how "
        "many optimizer steps does one full-batch step make?",
        "Clear the gradients once; for each of the equal micro-batches, compute its loss, scale it so the "
        "micro-batch losses add up to the full batch's mean, and call backward (gradients add up in .grad); then "
        "step the optimizer once.",
    ]
    checks.register_hints(name, hints)
    device = _device(device)
    generator = torch.Generator().manual_seed(5)
    for n, micro in ((12, 1), (12, 3), (12, 4), (8, 8)):
        images = torch.randn(n, 3, 8, 8, generator=generator, dtype=torch.float64).to(device)
        labels = torch.randint(0, 10, (n,), generator=generator).to(device)
        runs = {}
        for who, step in (("reference", _reference_accumulation), ("yours", fn)):
            model = _small_network(device)
            before = [p.detach().clone() for p in model.parameters()]
            optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
            try:
                result = step(model, optimizer, images.clone(), labels.clone(), micro)
            except NotImplementedError:
                return checks.not_attempted(name)
            except Exception as error:
                return checks.check_true(lambda: False, name=name, hints=hints,
                                         fail=f"with {n} images in {micro} micro-batches it raised "
                                              f"{type(error).__name__}: {error}")
            if result is ... and who == "yours":
                return checks.not_attempted(name)
            runs[who] = torch.cat([(p.detach() - b).flatten() for p, b in zip(model.parameters(), before)])
        expected, got = runs["reference"], runs["yours"]
        if not torch.allclose(got, expected, rtol=1e-7, atol=1e-10):
            if got.abs().max() == 0:
                problem = "the parameters did not move: no optimizer step was taken (or no gradient reached it)"
            else:
                ratio = float(got @ expected / (expected @ expected))
                residual = float((got - ratio * expected).norm() / expected.norm())
                if residual < 1e-6:
                    problem = (f"the update points the right way but is {ratio:.3g}× the full-batch update "
                               f"(with {n} images in {micro} micro-batches)")
                else:
                    k = int((got - expected).abs().argmax())
                    problem = (f"with {n} images in {micro} micro-batches, the update differs from one full-batch "
                               f"step: parameter element {k} moved {float(got[k]):.4g}, expected {float(expected[k]):.4g}")
            return checks.check_true(lambda: False, name=name, fail=problem, hints=hints)
    return checks.check_true(lambda: True, name=name, fail="",
                             success="one update identical to a full-batch step, for 1 to 8 micro-batches.")
