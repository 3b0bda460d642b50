"""Notebook 08's exercise checks (UNet road segmentation): skips, mIoU, Dice, joint augmentation,
early stopping, gradient accumulation and a data-loading bottleneck.

Each ``check_*`` runs the learner's code against a reference on small inputs, prints ✅ or ❌
with a diagnosis (which value, which epoch, which rule) through ``course.checks``, registers the
exercise's hints for ``course.checks.hint()`` and returns a bool. It never raises because of
the learner's code. The answers are only in the notebook's folded solution cells.
"""

from __future__ import annotations

import time

from course import checks
from course.checks import called as _called, verdict as _verdict

__all__ = ["check_crop_and_concat", "check_iou_from_confusion", "check_soft_dice", "check_joint_flip_crop",
           "check_early_stopping", "check_accumulated_step", "check_scene_to_tensors", "SlowScenes"]


# --- Exercise 1: the paper's skip connection -------------------------------------------------

def check_crop_and_concat(fn) -> bool:
    """``fn(skip, x)``: centre-crop ``skip`` to ``x``'s H×W, then concatenate [skip, x] on channels."""
    import torch

    def reference(skip, x):
        dh, dw = (skip.shape[-2] - x.shape[-2]) // 2, (skip.shape[-1] - x.shape[-1]) // 2
        return torch.cat([skip[..., dh:dh + x.shape[-2], dw:dw + x.shape[-1]], x], dim=1)

    g = torch.Generator().manual_seed(0)
    cases = [(torch.randn(1, 2, 8, 8, generator=g), torch.randn(1, 3, 4, 4, generator=g)),
             (torch.randn(2, 4, 10, 14, generator=g), torch.randn(2, 1, 6, 6, generator=g)),  # unequal margins
             (torch.randn(1, 1, 5, 5, generator=g), torch.randn(1, 2, 5, 5, generator=g))]    # nothing to crop
    return checks.check_function(fn, reference, cases, name="crop_and_concat", hints=[
        "The encoder's map is larger by the same margin on both sides: the crop is centred, and its "
        "size is x's height and width. Which tensor comes first in the concatenation?",
        "Compute the top margin as half the height difference (and the left one from the widths), "
        "slice skip from the margin for exactly x's height and width, then torch.cat along dim=1 "
        "with the cropped skip first.",
    ])


# --- Exercise 2: IoU of every class from a confusion matrix ----------------------------------

def check_iou_from_confusion(fn) -> bool:
    """``fn(confusion)`` (C×C, true class in rows): the IoU of each class, NaN for a class never seen."""
    import numpy as np

    from course import segmentation as seg

    rng = np.random.default_rng(1)
    cases = [np.array([[3, 1, 0], [0, 4, 0], [1, 0, 7]]),          # the notebook's 4×4 example
             rng.integers(0, 20, (5, 5)),
             np.array([[9, 0, 0], [0, 0, 0], [0, 0, 0]]),           # classes 1 and 2 never occur: NaN
             np.array([[0, 4], [6, 0]])]                            # all wrong: IoU 0, not NaN
    reference = lambda confusion: seg.iou_per_class(confusion).numpy()
    return checks.check_function(fn, reference, cases, name="iou_from_confusion", hints=[
        "Read the matrix: the diagonal holds the pixels labelled right. A row adds up all pixels that "
        "truly are class c; a column all pixels predicted as c. Which of them make up the union?",
        "union = (row sum) + (column sum) − diagonal, because the diagonal is in both sums; "
        "IoU = diagonal / union, and NaN where the union is 0 (use np.where to avoid dividing by zero).",
    ])


# --- Exercise 3: a Dice loss ------------------------------------------------------------------

def check_soft_dice(fn) -> bool:
    """``fn(logits, target)``: 1 − mean over classes of (2·Σpt + 1) / (Σp + Σt + 1), sums over batch and pixels."""
    import torch

    from course import segmentation as seg

    g = torch.Generator().manual_seed(0)
    cases = [(torch.randn(2, 3, 4, 5, generator=g), torch.randint(0, 3, (2, 4, 5), generator=g)),
             (torch.randn(1, 4, 6, 6, generator=g) * 5, torch.zeros(1, 6, 6, dtype=torch.long)),
             (torch.randn(3, 2, 1, 7, generator=g), torch.randint(0, 2, (3, 1, 7), generator=g))]
    return checks.check_function(fn, seg.dice_loss, cases, name="soft_dice_loss", rtol=1e-4, atol=1e-5, hints=[
        "Replace the counts of IoU by sums of probabilities: softmax over the class dimension, and "
        "the target as one channel per class. Sum over everything except the class dimension.",
        "One-hot encode the target and move its class axis to dimension 1 so it lines up with the "
        "softmax; sum products and sizes over dims (0, 2, 3), add the smoothing 1 to numerator and "
        "denominator, average the per-class Dice and subtract it from 1.",
    ])


# --- Exercise 4: a joint augmentation that keeps image and mask aligned -------------------------

def _position_pair(height: int, width: int):
    """An image whose red channel and a mask that both encode each pixel's position."""
    import torch

    index = torch.arange(height * width).reshape(height, width)
    image = torch.stack([index.float() / (height * width), torch.rand(height, width), torch.rand(height, width)])
    return image, index


def check_joint_flip_crop(fn) -> bool:
    """``fn(image, mask, size)``: the same random crop of ``size`` and the same random flip for both."""
    import torch

    def judge():
        height, width, size = 12, 16, (8, 10)
        image, mask = _position_pair(height, width)
        torch.manual_seed(0)
        corners, flips = set(), set()
        for trial in range(40):
            result = _called(fn, image.clone(), mask.clone(), size)
            if not (isinstance(result, tuple) and len(result) == 2):
                return f"return the pair (image, mask); got {type(result).__name__}"
            out_image, out_mask = result
            if tuple(out_image.shape) != (3, *size) or tuple(out_mask.shape) != size:
                return (f"call {trial}: expected image (3, {size[0]}, {size[1]}) and mask {size}, got "
                        f"{tuple(out_image.shape)} and {tuple(out_mask.shape)}")
            if out_mask.dtype != mask.dtype:
                return f"call {trial}: the mask must keep its dtype {mask.dtype} (labels), got {out_mask.dtype}"
            from_image = (out_image[0] * height * width).round().long()
            if not torch.equal(from_image, out_mask):
                bad = (from_image != out_mask).nonzero()[0].tolist()
                return (f"call {trial}: image and mask disagree at pixel {tuple(bad)} — the image shows input pixel "
                        f"{int(from_image[tuple(bad)])}, the mask {int(out_mask[tuple(bad)])}: draw the crop and "
                        "the flip once and apply the same ones to both")
            rows, cols = out_mask // width, out_mask % width
            if not (torch.all(rows[1:] - rows[:-1] == 1) and torch.all((cols[:, 1:] - cols[:, :-1]).abs() == 1)):
                return f"call {trial}: the result is not a crop (with or without a flip) of the input"
            corners.add((int(rows.min()), int(cols.min())))
            flips.add(bool(cols[0, 0] > cols[0, 1]))
        if len(flips) < 2:
            return "in 40 calls the flip was always " + ("applied" if True in flips else "skipped") + ": flip half the time"
        if len(corners) < 4:
            return f"in 40 calls the crop started at only {sorted(corners)}: draw its corner at random"
        return None

    return _verdict("joint_flip_crop", [
        "Draw every random number once — the crop's corner and whether to flip — and then apply the "
        "same slice and the same flip to the image (3×H×W) and to the mask (H×W).",
        "Pick top with torch.randint over H − h + 1 values and left over W − w + 1; slice both tensors "
        "with [..., top:top + h, left:left + w]; if torch.rand(()) < 0.5, flip both on the last axis.",
    ], judge, "image and mask moved together in all 40 random calls; crops and flips vary.")


# --- Exercise 5: early stopping on the validation mIoU -------------------------------------------

def check_early_stopping(fn) -> bool:
    """``fn(model, train_one_epoch, validate, max_epochs, patience)`` → list of val mIoUs; best weights restored."""
    import torch

    scripts = [  # validation mIoU per epoch; (patience, epochs it must run, best epoch, 1-based)
        ([0.20, 0.35, 0.34, 0.40, 0.39, 0.38, 0.37, 0.50, 0.1, 0.1], 3, 7, 4),
        ([0.10, 0.20, 0.30, 0.40, 0.50], 2, 5, 5),                  # never stops early
        ([0.50, 0.40, 0.45, 0.45, 0.30, 0.9], 2, 3, 1),             # equal is not better
    ]

    def judge():
        for miou, patience, runs, best in scripts:
            model = torch.nn.Linear(1, 1, bias=False)
            epoch = [0]

            def train_one_epoch():
                epoch[0] += 1
                with torch.no_grad():
                    model.weight.fill_(float(epoch[0]))  # the weights "remember" their epoch

            def validate():
                return miou[epoch[0] - 1]

            history = _called(fn, model, train_one_epoch, validate, len(miou), patience)
            case = f"with mIoUs {miou} and patience {patience}"
            if not isinstance(history, (list, tuple)):
                return f"{case}: return the list of validation mIoUs, got {type(history).__name__}"
            if len(history) != runs or epoch[0] != runs:
                return (f"{case}: training should run {runs} epochs (stop after {patience} epochs without a new "
                        f"best), it ran {epoch[0]} and returned {len(history)} scores")
            if list(history) != miou[:runs]:
                return f"{case}: the history should be the validation mIoU of each epoch, {miou[:runs]}; got {list(history)}"
            got = int(model.weight.item())
            if got != best:
                return (f"{case}: the model ends with the weights of epoch {got}; it must end with the best "
                        f"epoch's ({best}, mIoU {miou[best - 1]}) — save a copy of the state_dict when the score improves")
        return None

    return _verdict("early_stopping", [
        "Keep three things between epochs: the best score so far, a copy of the weights that scored "
        "it, and how many epochs have passed since. Only a strictly better score resets the count.",
        "After each epoch's validate(): if it beats the best, store it and copy.deepcopy(model.state_dict()) "
        "and reset a counter, else add one; break when the counter reaches patience. After the loop, "
        "model.load_state_dict(the stored copy) and return the list of scores.",
    ], judge, "stops after `patience` epochs without improvement and restores the best epoch's weights.")


# --- Exercise 6: gradient accumulation when the batch does not fit --------------------------------

def _small_net(seed: int):
    import torch
    from torch import nn

    torch.manual_seed(seed)
    # No batch norm: its statistics would differ between micro-batches and the full batch.
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 3, 1))


def check_accumulated_step(fn) -> bool:
    """``fn(model, optimizer, images, masks, micro_batch)``: one optimizer step whose gradient is the full batch's."""
    import torch
    import torch.nn.functional as F

    def judge():
        g = torch.Generator().manual_seed(3)
        images, masks = torch.rand(8, 3, 6, 6, generator=g), torch.randint(0, 3, (8, 6, 6), generator=g)
        for micro in (2, 4, 8):
            reference, model = _small_net(1), _small_net(1)
            ref_opt = torch.optim.SGD(reference.parameters(), lr=0.5)
            opt = torch.optim.SGD(model.parameters(), lr=0.5)
            ref_opt.zero_grad()
            F.cross_entropy(reference(images), masks).backward()
            expected_grad = [p.grad.clone() for p in reference.parameters()]
            ref_opt.step()
            steps = [0]
            original_step = opt.step

            def counting_step(*args, **kwargs):
                steps[0] += 1
                return original_step(*args, **kwargs)

            opt.step = counting_step
            _called(fn, model, opt, images, masks, micro)
            case = f"batch 8 in micro-batches of {micro}"
            if steps[0] != 1:
                return f"{case}: optimizer.step() ran {steps[0]} times; accumulate, then step once per batch"
            for (name, p), q, grad in zip(model.named_parameters(), reference.parameters(), expected_grad):
                if p.grad is None:
                    return f"{case}: {name} has no gradient after your step: call backward() on every micro-batch"
                if not torch.allclose(p.grad, grad, rtol=1e-4, atol=1e-6):
                    ratio = float((p.grad.norm() / grad.norm().clamp(min=1e-12)))
                    return (f"{case}: the gradient of {name} is {ratio:.2f}× the full batch's — each micro-batch's "
                            "loss must count in proportion to its share of the batch")
                if not torch.allclose(p, q, rtol=1e-4, atol=1e-6):
                    return f"{case}: {name} after the step differs from one full-batch SGD step"
        return None

    return _verdict("accumulated_step", [
        "Gradients add up in .grad until you clear them. Run forward and backward on each slice of the "
        "batch without clearing, and step once. What does adding k mean-losses do to the gradient's size?",
        "zero_grad() once; for each micro-batch slice compute the mean loss, multiply it by "
        "(slice size / batch size) and call backward(); after the loop call optimizer.step() once.",
    ], judge, "one step with micro-batches 2, 4 and 8 gives exactly the full batch's gradient and weights.")


# --- Exercise 7: the data-loading bottleneck the profiler shows ----------------------------------

class SlowScenes:
    """Synthetic scenes as a Dataset whose conversion to tensors is the bottleneck (exercise 7).

    ``__getitem__`` draws a scene (NumPy), then converts it with ``scene_to_tensors`` — by default
    through Python lists, the slow way. Both steps are marked with ``record_function`` so that
    ``torch.profiler`` shows which one costs the time. Pass a faster ``scene_to_tensors``.
    """

    def __init__(self, n: int, size=(48, 64), seed: int = 0, scene_to_tensors=None):
        self.n, self.size, self.seed = n, size, seed
        self.scene_to_tensors = scene_to_tensors or slow_scene_to_tensors

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: int):
        from torch.profiler import record_function

        from course.datasets.roads import road_scene

        if not 0 <= index < self.n:
            raise IndexError(f"scene {index} out of range for {self.n} scenes")
        with record_function("draw scene"):
            image, mask = road_scene(index, self.size, self.seed)
        with record_function("scene to tensors"):
            return self.scene_to_tensors(image, mask)


def slow_scene_to_tensors(image, mask):
    """H×W×3 float32 image and H×W int64 mask → 3×H×W and H×W tensors, through Python lists (slow)."""
    import torch

    return torch.tensor(image.tolist()).permute(2, 0, 1).contiguous(), torch.tensor(mask.tolist())


def check_scene_to_tensors(fn) -> bool:
    """``fn(image, mask)`` must give the same tensors as the slow version, at least 5× faster."""
    import torch

    from course.datasets.roads import road_scene

    def judge():
        image, mask = road_scene(3, (96, 128), seed=0)
        expected = slow_scene_to_tensors(image, mask)
        got = _called(fn, image.copy(), mask.copy())
        if not (isinstance(got, tuple) and len(got) == 2 and all(isinstance(t, torch.Tensor) for t in got)):
            return f"return a pair of tensors (image, mask); got {type(got).__name__}"
        for what, g, e in (("image", got[0], expected[0]), ("mask", got[1], expected[1])):
            if tuple(g.shape) != tuple(e.shape) or g.dtype != e.dtype:
                return f"the {what} should be {tuple(e.shape)} {e.dtype}; got {tuple(g.shape)} {g.dtype}"
            if not torch.equal(g, e):
                return f"the {what} has the right shape but different values: keep the channel order (3×H×W)"
        if not got[0].is_contiguous():
            return "the image is a permuted view: make it contiguous, as the slow version does"
        image_copy, mask_copy = image.copy(), mask.copy()

        def best(convert, repeat):
            times = []
            for _ in range(repeat):
                start = time.perf_counter()
                convert(image_copy, mask_copy)
                times.append(time.perf_counter() - start)
            return min(times)

        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # one thread: on a busy machine, waking a thread pool costs more than the copy
        try:
            slow, fast = best(slow_scene_to_tensors, 3), best(fn, 10)
        finally:
            torch.set_num_threads(threads)
        if fast * 5 > slow:
            return (f"right values, but {fast * 1e3:.2f} ms per scene against {slow * 1e3:.2f} ms for the slow "
                    "version: it should be at least 5× faster")
        return None

    return _verdict("scene_to_tensors", [
        "The profile shows where the time goes: in the conversion, not in drawing the scene. A NumPy "
        "array can become a tensor without passing through one Python number per pixel.",
        "torch.from_numpy shares the array's memory (no copy, no Python loop); then reorder the image's "
        "axes from H×W×3 to 3×H×W with permute and make it contiguous. The mask needs only from_numpy.",
    ], judge, "same tensors, many times faster: the bottleneck is gone.")
