"""Notebook 08's exercise checks: the answer passes, the stub is "not attempted", the usual mistake fails."""

import copy

import numpy as np
import torch
import torch.nn.functional as F

from course.exercises import unet_road_segmentation as ex


def stub(*args, **kwargs):
    raise NotImplementedError


def verdict(capsys, check, fn):
    ok = check(fn)
    return ok, capsys.readouterr().out


# --- right answers (the notebook's solution cells hold the same) ----------------------------

def crop_and_concat(skip, x):
    top, left = (skip.shape[-2] - x.shape[-2]) // 2, (skip.shape[-1] - x.shape[-1]) // 2
    return torch.cat([skip[..., top:top + x.shape[-2], left:left + x.shape[-1]], x], dim=1)


def iou_from_confusion(confusion):
    confusion = np.asarray(confusion, dtype=np.float64)
    tp = np.diag(confusion)
    union = confusion.sum(0) + confusion.sum(1) - tp
    return np.where(union > 0, tp / np.maximum(union, 1), np.nan)


def soft_dice_loss(logits, target):
    p = logits.softmax(dim=1)
    t = F.one_hot(target, logits.shape[1]).permute(0, 3, 1, 2).float()
    dims = (0, 2, 3)
    return 1 - ((2 * (p * t).sum(dims) + 1) / (p.sum(dims) + t.sum(dims) + 1)).mean()


def joint_flip_crop(image, mask, size):
    h, w = size
    top = int(torch.randint(image.shape[-2] - h + 1, ()))
    left = int(torch.randint(image.shape[-1] - w + 1, ()))
    image, mask = image[..., top:top + h, left:left + w], mask[..., top:top + h, left:left + w]
    if torch.rand(()) < 0.5:
        image, mask = image.flip(-1), mask.flip(-1)
    return image, mask


def fit_early_stopping(model, train_one_epoch, validate, max_epochs, patience):
    best, best_state, waited, history = float("-inf"), None, 0, []
    for _ in range(max_epochs):
        train_one_epoch()
        score = validate()
        history.append(score)
        if score > best:
            best, best_state, waited = score, copy.deepcopy(model.state_dict()), 0
        else:
            waited += 1
            if waited >= patience:
                break
    model.load_state_dict(best_state)
    return history


def accumulated_step(model, optimizer, images, masks, micro_batch):
    optimizer.zero_grad(set_to_none=True)
    for start in range(0, len(images), micro_batch):
        x, y = images[start:start + micro_batch], masks[start:start + micro_batch]
        (F.cross_entropy(model(x), y) * len(x) / len(images)).backward()
    optimizer.step()


def scene_to_tensors(image, mask):
    return torch.from_numpy(image).permute(2, 0, 1).contiguous(), torch.from_numpy(mask)


# --- the right answer passes, the stub is not attempted -----------------------------------------

RIGHT = [(ex.check_crop_and_concat, crop_and_concat), (ex.check_iou_from_confusion, iou_from_confusion),
         (ex.check_soft_dice, soft_dice_loss), (ex.check_joint_flip_crop, joint_flip_crop),
         (ex.check_early_stopping, fit_early_stopping), (ex.check_accumulated_step, accumulated_step),
         (ex.check_scene_to_tensors, scene_to_tensors)]


def test_right_answers_pass_and_stubs_are_not_attempted(capsys):
    for check, answer in RIGHT:
        ok, out = verdict(capsys, check, answer)
        assert ok and "✅" in out, (check.__name__, out)
        ok, out = verdict(capsys, check, stub)
        assert not ok and "not attempted" in out and "💡" not in out, (check.__name__, out)


# --- the most common wrong answer of each exercise fails, with a specific diagnosis --------------

def test_crop_from_the_corner_fails(capsys):
    wrong = lambda skip, x: torch.cat([skip[..., :x.shape[-2], :x.shape[-1]], x], dim=1)
    ok, out = verdict(capsys, ex.check_crop_and_concat, wrong)
    assert not ok and "differ" in out and "index" in out


def test_iou_without_subtracting_the_diagonal_fails(capsys):
    def wrong(confusion):
        confusion = np.asarray(confusion, dtype=np.float64)
        union = confusion.sum(0) + confusion.sum(1)  # counts the true positives twice
        return np.where(union > 0, np.diag(confusion) / np.maximum(union, 1), np.nan)

    ok, out = verdict(capsys, ex.check_iou_from_confusion, wrong)
    assert not ok and "expected 0.6" in out


def test_dice_without_smoothing_fails(capsys):
    def wrong(logits, target):
        p = logits.softmax(dim=1)
        t = F.one_hot(target, logits.shape[1]).permute(0, 3, 1, 2).float()
        return 1 - (2 * (p * t).sum((0, 2, 3)) / (p.sum((0, 2, 3)) + t.sum((0, 2, 3)))).mean()

    ok, out = verdict(capsys, ex.check_soft_dice, wrong)
    assert not ok and "differ" in out


def test_independent_random_draws_for_image_and_mask_fail(capsys):
    def wrong(image, mask, size):  # a separate corner and flip for each: they drift apart
        return joint_flip_crop(image, mask, size)[0], joint_flip_crop(image, mask, size)[1]

    ok, out = verdict(capsys, ex.check_joint_flip_crop, wrong)
    assert not ok and "disagree at pixel" in out and "same ones to both" in out


def test_a_crop_that_never_flips_fails(capsys):
    def wrong(image, mask, size):
        top = int(torch.randint(image.shape[-2] - size[0] + 1, ()))
        left = int(torch.randint(image.shape[-1] - size[1] + 1, ()))
        return image[..., top:top + size[0], left:left + size[1]], mask[top:top + size[0], left:left + size[1]]

    ok, out = verdict(capsys, ex.check_joint_flip_crop, wrong)
    assert not ok and "always skipped" in out


def test_early_stopping_that_keeps_the_last_weights_fails(capsys):
    def wrong(model, train_one_epoch, validate, max_epochs, patience):
        best, waited, history = float("-inf"), 0, []
        for _ in range(max_epochs):
            train_one_epoch()
            history.append(validate())
            if history[-1] > best:
                best, waited = history[-1], 0
            else:
                waited += 1
                if waited >= patience:
                    break
        return history  # forgets to restore the best epoch's weights

    ok, out = verdict(capsys, ex.check_early_stopping, wrong)
    assert not ok and "weights of epoch 7" in out and "best epoch's (4" in out


def test_early_stopping_at_the_first_drop_fails(capsys):
    def wrong(model, train_one_epoch, validate, max_epochs, patience):
        history = []
        for _ in range(max_epochs):
            train_one_epoch()
            history.append(validate())
            if len(history) > 1 and history[-1] < history[-2]:
                break
        return history

    ok, out = verdict(capsys, ex.check_early_stopping, wrong)
    assert not ok and "should run 7 epochs" in out and "ran 3" in out


def test_accumulation_without_scaling_the_loss_fails(capsys):
    def wrong(model, optimizer, images, masks, micro_batch):
        optimizer.zero_grad()
        for start in range(0, len(images), micro_batch):
            F.cross_entropy(model(images[start:start + micro_batch]), masks[start:start + micro_batch]).backward()
        optimizer.step()

    ok, out = verdict(capsys, ex.check_accumulated_step, wrong)
    assert not ok and "4.00× the full batch's" in out


def test_accumulation_that_steps_every_micro_batch_fails(capsys):
    def wrong(model, optimizer, images, masks, micro_batch):
        for start in range(0, len(images), micro_batch):
            optimizer.zero_grad()
            F.cross_entropy(model(images[start:start + micro_batch]), masks[start:start + micro_batch]).backward()
            optimizer.step()

    ok, out = verdict(capsys, ex.check_accumulated_step, wrong)
    assert not ok and "ran 4 times" in out


def test_conversion_that_forgets_the_channel_order_fails(capsys):
    wrong = lambda image, mask: (torch.from_numpy(image), torch.from_numpy(mask))
    ok, out = verdict(capsys, ex.check_scene_to_tensors, wrong)
    assert not ok and "(3, 96, 128)" in out


def test_conversion_that_is_still_slow_fails(capsys):
    def wrong(image, mask):  # right values, still one Python number per pixel
        return (torch.tensor(image.tolist()).permute(2, 0, 1).contiguous(),
                torch.from_numpy(mask))

    ok, out = verdict(capsys, ex.check_scene_to_tensors, wrong)
    assert not ok and "at least 5× faster" in out


def test_slow_scenes_profile_names_both_steps():
    from torch.profiler import ProfilerActivity, profile

    data = ex.SlowScenes(2, (24, 32))
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        image, mask = data[1]
    names = {e.key for e in prof.key_averages()}
    assert {"draw scene", "scene to tensors"} <= names
    assert image.shape == (3, 24, 32) and mask.shape == (24, 32)
    fast = ex.SlowScenes(2, (24, 32), scene_to_tensors=scene_to_tensors)
    assert torch.equal(fast[1][0], image) and torch.equal(fast[1][1], mask)
