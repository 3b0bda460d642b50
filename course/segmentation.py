"""Losses and metrics for semantic segmentation (notebook 08; notebook 09 reuses mean_iou).

Conventions: ``pred`` and ``target`` are integer class maps of the same shape (N×H×W or
H×W, tensors or arrays); ``logits`` are N×C×H×W scores. Pixels whose target equals
``ignore_index`` (CamVid's void, 11) count nowhere. The confusion matrix has the true class
in rows and the predicted class in columns, as ``sklearn.metrics.confusion_matrix``.

    confusion = confusion_matrix(pred, target, num_classes=11)
    mean_iou(confusion), pixel_accuracy(confusion), iou_per_class(confusion)

``JointAugmentation`` randomly scales, crops and flips an image and its mask *together*
(``torchvision.transforms.v2`` resizes masks with nearest labels and pads them with void).

IoU of class c = TP / (TP + FP + FN) = |pred=c ∧ true=c| / |pred=c ∨ true=c|. A class that
appears in neither prediction nor truth has no IoU (NaN) and mean_iou skips it.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

__all__ = ["confusion_matrix", "iou_per_class", "mean_iou", "pixel_accuracy", "scores",
           "class_weights", "dice_loss", "predict", "JointAugmentation", "SegmentationPairs"]


def _as_long(x) -> torch.Tensor:
    return (x if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x))).long()


def confusion_matrix(pred, target, num_classes: int, ignore_index: int | None = None) -> torch.Tensor:
    """C×C int64 counts: entry [t, p] is the number of pixels of true class t predicted as p."""
    pred, target = _as_long(pred), _as_long(target)
    if pred.shape != target.shape:
        raise ValueError(f"pred and target must have the same shape, got {tuple(pred.shape)} and {tuple(target.shape)}; "
                         "did you pass logits? take .argmax(1) first")
    pred, target = pred.reshape(-1), target.reshape(-1).to(pred.device)
    if ignore_index is not None:
        keep = target != ignore_index
        pred, target = pred[keep], target[keep]
    for name, x in (("pred", pred), ("target", target)):
        if x.numel() and (x.min() < 0 or x.max() >= num_classes):
            raise ValueError(f"{name} has labels outside 0..{num_classes - 1} (found {int(x.min())}..{int(x.max())}); "
                             "pass ignore_index= for a void label")
    counts = torch.bincount(target * num_classes + pred, minlength=num_classes**2)
    return counts.reshape(num_classes, num_classes).cpu()


def iou_per_class(confusion) -> torch.Tensor:
    """IoU of each class from a confusion matrix; NaN for a class absent from truth and prediction."""
    confusion = _as_long(confusion).double()
    true_positive = confusion.diagonal()
    union = confusion.sum(0) + confusion.sum(1) - true_positive  # predicted + true - both
    return torch.where(union > 0, true_positive / union.clamp(min=1), torch.full_like(union, float("nan")))


def mean_iou(confusion) -> float:
    """Mean IoU over the classes that occur (in truth or prediction): the segmentation score."""
    iou = iou_per_class(confusion)
    present = ~iou.isnan()
    return float(iou[present].mean()) if present.any() else float("nan")


def pixel_accuracy(confusion) -> float:
    """Fraction of (non-ignored) pixels labelled correctly; flattered by big classes such as road."""
    confusion = _as_long(confusion)
    total = int(confusion.sum())
    return float(confusion.diagonal().sum()) / total if total else float("nan")


def scores(pred, target, num_classes: int, ignore_index: int | None = None) -> dict:
    """Pixel accuracy, mean IoU, per-class IoU and the confusion matrix in one dict."""
    confusion = confusion_matrix(pred, target, num_classes, ignore_index)
    return {"pixel_accuracy": pixel_accuracy(confusion), "mean_iou": mean_iou(confusion),
            "iou": iou_per_class(confusion), "confusion": confusion}


def class_weights(masks, num_classes: int, ignore_index: int | None = None) -> torch.Tensor:
    """Median-frequency balancing (Eigen & Fergus 2015, used by SegNet): weight_c = median(freq) / freq_c.

    ``freq_c`` is class c's share of the pixels of the images in which c appears. Rare classes
    get weights above 1, common ones below; classes that never appear get weight 0.
    """
    masks = _as_long(masks)
    if masks.ndim == 2:
        masks = masks[None]
    pixels = torch.zeros(num_classes, dtype=torch.float64)
    pixels_of_images_with = torch.zeros(num_classes, dtype=torch.float64)
    for mask in masks:
        valid = mask[mask != ignore_index] if ignore_index is not None else mask.reshape(-1)
        if valid.numel() and (valid.min() < 0 or valid.max() >= num_classes):
            raise ValueError(f"masks have labels outside 0..{num_classes - 1}; pass ignore_index= for a void label")
        counts = torch.bincount(valid, minlength=num_classes).double()
        pixels += counts
        pixels_of_images_with += (counts > 0).double() * valid.numel()
    present = pixels > 0
    if not present.any():
        raise ValueError("the masks contain no labelled pixels")
    frequency = torch.where(present, pixels / pixels_of_images_with.clamp(min=1), torch.zeros_like(pixels))
    median = frequency[present].median()
    return torch.where(present, median / frequency.clamp(min=1e-12), torch.zeros_like(frequency)).float()


def dice_loss(logits: torch.Tensor, target: torch.Tensor, ignore_index: int | None = None,
              smooth: float = 1.0) -> torch.Tensor:
    """Soft Dice loss, 1 − mean over classes of (2·|P∩T| + s) / (|P| + |T| + s), from softmax scores.

    Sums run over the whole batch; classes absent from both the target and the (soft)
    prediction score (s / s) = 1, so they add nothing. Differentiable, unlike IoU itself.
    """
    if logits.ndim != 4 or target.shape != (logits.shape[0], *logits.shape[2:]):
        raise ValueError(f"expected logits N×C×H×W and target N×H×W, got {tuple(logits.shape)} and {tuple(target.shape)}")
    num_classes = logits.shape[1]
    probabilities = logits.float().softmax(dim=1)
    valid = torch.ones_like(target, dtype=torch.bool) if ignore_index is None else target != ignore_index
    one_hot = F.one_hot(torch.where(valid, target, 0), num_classes).permute(0, 3, 1, 2).float()
    valid = valid.unsqueeze(1).float()
    probabilities, one_hot = probabilities * valid, one_hot * valid
    dims = (0, 2, 3)
    intersection = (probabilities * one_hot).sum(dims)
    sizes = probabilities.sum(dims) + one_hot.sum(dims)
    dice = (2 * intersection + smooth) / (sizes + smooth)
    return 1 - dice.mean()


@torch.no_grad()
def predict(model: torch.nn.Module, images: torch.Tensor, batch_size: int = 32, device=None) -> torch.Tensor:
    """Class maps N×H×W (int64, on the CPU) for images N×3×H×W, in eval mode and in batches."""
    device = device if device is not None else next(model.parameters()).device
    was_training = model.training
    model.eval()
    try:
        outputs = [model(images[i:i + batch_size].to(device)).argmax(1).cpu()
                   for i in range(0, len(images), batch_size)]
    finally:
        model.train(was_training)
    return torch.cat(outputs) if outputs else torch.empty(0, *images.shape[2:], dtype=torch.long)


class JointAugmentation:
    """Random scale, crop, horizontal flip (and colour jitter) of an image and its mask together.

    ``JointAugmentation((h, w))(image, mask) -> (image, mask)``: image 3×H×W float in [0, 1],
    mask H×W int. With ``torchvision.transforms.v2`` the same random draw moves both: the image
    is resized bilinearly, the mask with nearest labels (no invented in-between classes), and
    what the crop adds beyond the picture's border is black in the image and ``void`` in the
    mask, which losses and metrics ignore. ``scale`` is relative to the crop size; colour
    jitter changes the image only. A plain class, so it pickles for DataLoader workers.
    """

    def __init__(self, crop_size, scale=(0.75, 1.5), flip: float = 0.5, colour: float = 0.2, void: int = 11):
        from torchvision import tv_tensors
        from torchvision.transforms import v2

        crop = (crop_size, crop_size) if isinstance(crop_size, int) else tuple(int(c) for c in crop_size)
        if len(crop) != 2 or min(crop) < 1:
            raise ValueError(f"crop_size must be an int or an (height, width) pair, got {crop_size!r}")
        if not 0 < scale[0] <= scale[1]:
            raise ValueError(f"scale must be (low, high) with 0 < low <= high, got {scale!r}")
        self.crop_size, self.scale, self.flip, self.colour, self.void = crop, tuple(scale), flip, colour, void
        steps = [v2.ScaleJitter(target_size=crop, scale_range=tuple(scale), antialias=True),
                 v2.RandomCrop(crop, pad_if_needed=True, fill={tv_tensors.Image: 0.0, tv_tensors.Mask: void}),
                 v2.RandomHorizontalFlip(flip)]
        if colour:
            steps.append(v2.ColorJitter(brightness=colour, contrast=colour, saturation=colour))
        self.transform = v2.Compose(steps)

    def __call__(self, image: torch.Tensor, mask: torch.Tensor):
        from torchvision import tv_tensors

        if image.ndim != 3 or mask.shape != image.shape[-2:]:
            raise ValueError(f"expected an image 3×H×W and its mask H×W, got {tuple(image.shape)} and {tuple(mask.shape)}")
        image, mask = self.transform(tv_tensors.Image(image), tv_tensors.Mask(mask))
        return image.as_subclass(torch.Tensor).clamp_(0, 1), mask.as_subclass(torch.Tensor)

    def __repr__(self) -> str:
        return (f"JointAugmentation(crop {self.crop_size[0]}×{self.crop_size[1]}, scale {self.scale}, "
                f"flip p={self.flip}, colour ±{self.colour}, pad mask with {self.void})")


class SegmentationPairs(torch.utils.data.Dataset):
    """Images N×3×H×W and masks N×H×W held in memory, as a Dataset with an optional joint transform.

    Masks may be stored small (uint8: 8× less memory than int64) and come out as int64, the
    type ``F.cross_entropy`` wants. ``transform(image, mask) -> (image, mask)`` runs per
    sample, e.g. ``JointAugmentation``; DataLoader workers run it in parallel.
    """

    def __init__(self, images: torch.Tensor, masks: torch.Tensor, transform=None):
        if images.ndim != 4 or masks.shape != (images.shape[0], *images.shape[2:]):
            raise ValueError(f"expected images N×C×H×W and masks N×H×W, got {tuple(images.shape)} and {tuple(masks.shape)}")
        self.images, self.masks, self.transform = images, masks, transform

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, index: int):
        image, mask = self.images[index], self.masks[index].long()
        if self.transform is not None:
            image, mask = self.transform(image, mask)
        return image, mask
