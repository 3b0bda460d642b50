"""course.datasets.roads: deterministic synthetic street scenes with CamVid labels."""

import pickle
import time

import numpy as np
import pytest
import torch

from course.datasets import CAMVID_CLASSES, RoadScenes, road_scene, road_scenes

C = {name: i for i, name in enumerate(CAMVID_CLASSES)}


def test_shapes_types_and_ranges():
    images, masks = road_scenes(8, (48, 64), seed=3)
    assert images.shape == (8, 3, 48, 64) and images.dtype == torch.float32
    assert masks.shape == (8, 48, 64) and masks.dtype == torch.int64
    assert 0 <= images.min() and images.max() <= 1
    assert set(masks.unique().tolist()) <= set(range(len(CAMVID_CLASSES)))  # no void
    assert road_scenes(2, 40)[0].shape == (2, 3, 40, 40)
    assert road_scenes(0, 32)[0].shape == (0, 3, 32, 32)


def test_deterministic_and_independent_of_n():
    a_images, a_masks = road_scenes(6, 32, seed=1)
    b_images, b_masks = road_scenes(3, 32, seed=1)
    assert torch.equal(a_images[:3], b_images) and torch.equal(a_masks[:3], b_masks)
    c_images, _ = road_scenes(3, 32, seed=2)
    assert not torch.equal(b_images, c_images)
    image, mask = road_scene(4, 32, seed=1)
    assert np.array_equal(image.transpose(2, 0, 1), a_images[4].numpy()) and np.array_equal(mask, a_masks[4].numpy())


def test_scenes_look_like_streets():
    images, masks = road_scenes(64, (48, 64), seed=0)
    frequency = torch.bincount(masks.flatten(), minlength=11).float() / masks.numel()
    for name in ("Sky", "Building", "Road", "Pavement", "Tree", "Car"):
        assert frequency[C[name]] > 0.01, name
    for name in ("Pole", "SignSymbol", "Pedestrian"):
        assert frequency[C[name]] > 0, name
    assert frequency[C["Fence"]] == 0 and frequency[C["Bicyclist"]] == 0
    rows = torch.arange(48.0)[None, :, None].expand_as(masks)
    assert rows[masks == C["Sky"]].mean() < 15 < rows[masks == C["Road"]].mean()  # sky on top, road below
    road_colour = images.permute(0, 2, 3, 1)[masks == C["Road"]]
    assert (road_colour.max(1).values - road_colour.min(1).values).median() < 0.12  # grey asphalt
    brightness = images.mean((1, 2, 3))
    assert brightness.std() > 0.03  # lighting varies from scene to scene


def test_bad_arguments_say_what_to_do():
    with pytest.raises(ValueError, match="size"):
        road_scenes(2, 8)
    with pytest.raises(ValueError, match="size"):
        road_scenes(2, (32, "64"))
    with pytest.raises(ValueError, match="non-negative"):
        road_scenes(-1)
    with pytest.raises(ValueError, match="positive"):
        RoadScenes(0)


def test_dataset_draws_on_demand_and_pickles():
    data = RoadScenes(5, (32, 48), seed=7)
    assert len(data) == 5 and "5 scenes" in repr(data)
    image, mask = data[2]
    ref_image, ref_mask = road_scene(2, (32, 48), seed=7)
    assert torch.equal(image, torch.from_numpy(ref_image).permute(2, 0, 1)) and torch.equal(mask, torch.from_numpy(ref_mask))
    with pytest.raises(IndexError):
        data[5]
    clone = pickle.loads(pickle.dumps(RoadScenes(5, 32, augment=True)))
    torch.manual_seed(0)
    image, mask = clone[0]
    assert image.shape == (3, 32, 32) and 0 <= image.min() and image.max() <= 1
    plain_mask = torch.from_numpy(road_scene(0, 32)[1])
    assert torch.equal(mask, plain_mask) or torch.equal(mask, plain_mask.flip(-1))


def test_fast_enough_for_a_notebook():
    start = time.process_time()
    road_scenes(200, 64)
    assert time.process_time() - start < 3.0  # about 1.5 ms a scene on one core


def test_dataset_applies_a_joint_transform():
    flip = lambda image, mask: (image.flip(-1), mask.flip(-1))
    plain, flipped = RoadScenes(3, 32, seed=4), RoadScenes(3, 32, seed=4, transform=flip)
    assert torch.equal(flipped[1][0], plain[1][0].flip(-1)) and torch.equal(flipped[1][1], plain[1][1].flip(-1))
