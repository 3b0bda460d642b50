"""course.segmentation: metrics against a hand-computed case and scikit-learn; losses; predict."""

import numpy as np
import pytest
import torch
from sklearn.metrics import accuracy_score, jaccard_score
from sklearn.metrics import confusion_matrix as sk_confusion

from course import segmentation as seg

TRUTH = torch.tensor([[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 2, 2], [2, 2, 2, 2]])
GUESS = torch.tensor([[0, 1, 1, 1], [0, 0, 1, 1], [2, 2, 2, 0], [2, 2, 2, 2]])


def test_hand_computed_case():
    confusion = seg.confusion_matrix(GUESS, TRUTH, 3)
    assert confusion.tolist() == [[3, 1, 0], [0, 4, 0], [1, 0, 7]]
    assert torch.allclose(seg.iou_per_class(confusion), torch.tensor([3 / 5, 4 / 5, 7 / 8], dtype=torch.float64))
    assert seg.mean_iou(confusion) == pytest.approx((3 / 5 + 4 / 5 + 7 / 8) / 3)
    assert seg.pixel_accuracy(confusion) == pytest.approx(14 / 16)


def test_matches_sklearn():
    rng = np.random.default_rng(0)
    pred, target = rng.integers(0, 6, (3, 10, 10)), rng.integers(0, 6, (3, 10, 10))
    confusion = seg.confusion_matrix(pred, target, 6)
    assert np.array_equal(confusion.numpy(), sk_confusion(target.ravel(), pred.ravel(), labels=range(6)))
    assert np.allclose(seg.iou_per_class(confusion).numpy(), jaccard_score(target.ravel(), pred.ravel(), average=None))
    assert seg.mean_iou(confusion) == pytest.approx(jaccard_score(target.ravel(), pred.ravel(), average="macro"))
    assert seg.pixel_accuracy(confusion) == pytest.approx(accuracy_score(target.ravel(), pred.ravel()))


def test_absent_classes_are_skipped_and_void_ignored():
    pred = torch.tensor([0, 0, 1, 3])
    target = torch.tensor([0, 0, 1, 1])
    iou = seg.iou_per_class(seg.confusion_matrix(pred, target, 4))
    assert torch.isnan(iou[2]) and iou[3] == 0  # 2: nowhere; 3: predicted but wrong
    assert seg.mean_iou(seg.confusion_matrix(pred, target, 4)) == pytest.approx((1 + 0.5 + 0) / 3)
    target_void = torch.tensor([0, 0, 1, 11])
    scores = seg.scores(pred, target_void, 4, ignore_index=11)
    assert scores["confusion"].sum() == 3 and scores["mean_iou"] == 1.0 and scores["pixel_accuracy"] == 1.0


def test_bad_input_is_explained():
    with pytest.raises(ValueError, match="same shape"):
        seg.confusion_matrix(torch.zeros(2, 3, 4, 4), torch.zeros(2, 4, 4), 3)
    with pytest.raises(ValueError, match="ignore_index"):
        seg.confusion_matrix(torch.tensor([0, 1]), torch.tensor([0, 11]), 3)


def test_class_weights_median_frequency():
    masks = torch.tensor([[[0, 0, 0, 1]], [[0, 0, 2, 2]]])  # two 1×4 images
    weights = seg.class_weights(masks, 4)
    # freq: class 0 = 5/8, class 1 = 1/4 (only image 1), class 2 = 2/4; median of (5/8, 1/4, 1/2) = 1/2
    assert torch.allclose(weights, torch.tensor([0.5 / (5 / 8), 0.5 / 0.25, 1.0, 0.0]))
    with_void = seg.class_weights(torch.tensor([[[0, 1, 11, 11]]]), 2, ignore_index=11)
    assert torch.allclose(with_void, torch.tensor([1.0, 1.0]))


def test_dice_loss():
    target = torch.randint(0, 3, (2, 5, 5), generator=torch.Generator().manual_seed(0))
    perfect = torch.nn.functional.one_hot(target, 3).permute(0, 3, 1, 2).float() * 50
    assert seg.dice_loss(perfect, target) < 1e-3
    logits = torch.randn(2, 3, 5, 5, requires_grad=True)
    loss = seg.dice_loss(logits, target)
    assert 0 < loss < 1
    loss.backward()
    assert logits.grad.abs().sum() > 0
    # pixels labelled void do not count
    target_void = target.clone()
    target_void[:, 0] = 11
    changed = logits.detach().clone()
    changed[:, :, 0] = 100 * torch.randn(2, 3, 5)
    assert torch.isclose(seg.dice_loss(logits.detach(), target_void, ignore_index=11),
                         seg.dice_loss(changed, target_void, ignore_index=11))
    with pytest.raises(ValueError, match="N×C×H×W"):
        seg.dice_loss(torch.randn(3, 5, 5), target)


def test_predict_batches_and_restores_training_mode():
    model = torch.nn.Conv2d(3, 4, 1)
    model.train()
    images = torch.rand(5, 3, 6, 6)
    pred = seg.predict(model, images, batch_size=2)
    assert pred.shape == (5, 6, 6) and pred.dtype == torch.int64 and model.training
    with torch.no_grad():
        assert torch.equal(pred, model(images).argmax(1))


# --- JointAugmentation: the same random scale, crop and flip for an image and its mask --------------

def test_joint_augmentation_keeps_image_and_mask_aligned():
    from course.segmentation import JointAugmentation

    # An image whose red channel encodes the label: after any scale/crop/flip, they must still agree.
    mask = torch.zeros(40, 60, dtype=torch.long)
    mask[:, 30:] = 1
    mask[25:, :] = 2
    image = torch.stack([mask.float() / 2, torch.zeros(40, 60), torch.zeros(40, 60)])
    augment = JointAugmentation((32, 48), scale=(0.5, 2.0), colour=0.0, void=11)
    torch.manual_seed(0)
    padded = 0
    for _ in range(20):
        out_image, out_mask = augment(image, mask)
        assert out_image.shape == (3, 32, 48) and out_mask.shape == (32, 48) and out_mask.dtype == mask.dtype
        labels = set(out_mask.unique().tolist())
        assert labels <= {0, 1, 2, 11}, "nearest resizing invents no label"
        padded += 11 in labels
        inside = out_mask != 11
        agree = (out_image[0][inside] * 2).round().long() == out_mask[inside]
        assert agree.float().mean() > 0.9, "image and mask moved differently"  # resizing blurs edges of the image only
    assert padded, "scales below 1 need padding, which must be void"
    misaligned = (image[0].flip(-1) * 2).round().long() == mask  # what flipping the image alone gives
    assert misaligned.float().mean() < 0.9, "the test must be able to catch a flip of one of the two"
    assert "crop 32×48" in repr(augment)


def test_joint_augmentation_errors_and_pickles():
    import pickle

    from course.segmentation import JointAugmentation

    with pytest.raises(ValueError, match="scale"):
        JointAugmentation(32, scale=(2.0, 1.0))
    with pytest.raises(ValueError, match="mask"):
        JointAugmentation(32)(torch.rand(3, 8, 8), torch.zeros(7, 8, dtype=torch.long))
    clone = pickle.loads(pickle.dumps(JointAugmentation(16)))
    assert clone(torch.rand(3, 20, 20), torch.zeros(20, 20, dtype=torch.long))[0].shape == (3, 16, 16)


def test_segmentation_pairs_give_long_masks_and_transform_jointly():
    images, masks = torch.rand(3, 3, 4, 5), torch.randint(0, 4, (3, 4, 5), dtype=torch.uint8)
    data = seg.SegmentationPairs(images, masks)
    image, mask = data[2]
    assert len(data) == 3 and torch.equal(image, images[2]) and mask.dtype == torch.int64
    assert torch.equal(mask, masks[2].long())
    flipped = seg.SegmentationPairs(images, masks, transform=lambda i, m: (i.flip(-1), m.flip(-1)))[0]
    assert torch.equal(flipped[0], images[0].flip(-1)) and torch.equal(flipped[1], masks[0].long().flip(-1))
    with pytest.raises(ValueError, match="N×H×W"):
        seg.SegmentationPairs(images, masks[:, :3])
