"""Synthetic street scenes with pixel masks in CamVid's classes: the offline stand-in (notebook 08).

Each scene is drawn in perspective from a random vanishing point: sky, buildings with windows
along both sides, a road with lane markings between two pavements, trees, poles with signs,
cars and pedestrians that shrink with distance. Lighting (brightness, colour cast, a side
light, a cast shadow), the colours of everything and sensor noise change from scene to scene,
so a network has to learn shapes and layout, not one colour per class.

Labels are CamVid's (``course.datasets.CAMVID_CLASSES``): lane markings are labelled Road, as
in CamVid's 11-class labels. Fence and Bicyclist are never drawn, and there is no void.
Scene ``i`` of a seed is always the same picture, whatever ``n`` is, so
``road_scenes(10)[0][:5]`` equals ``road_scenes(5)[0]``.
"""

from __future__ import annotations

import numpy as np
import torch
from torch.utils.data import Dataset

from course.datasets.camvid import CAMVID_CLASSES

__all__ = ["road_scenes", "road_scene", "RoadScenes"]

SKY, BUILDING, POLE, ROAD, PAVEMENT, TREE, SIGN, FENCE, CAR, PEDESTRIAN, BICYCLIST = range(len(CAMVID_CLASSES))


def _size(size) -> tuple[int, int]:
    h, w = (size, size) if isinstance(size, (int, np.integer)) else tuple(size)
    if not (isinstance(h, (int, np.integer)) and isinstance(w, (int, np.integer))) or min(h, w) < 16:
        raise ValueError(f"size must be an int or an (height, width) pair of ints, at least 16 pixels; got {size!r}")
    return int(h), int(w)


def road_scene(index: int, size=64, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Scene ``index`` of ``seed``: an H×W×3 float32 picture in [0, 1] and its H×W int64 mask."""
    h, w = _size(size)
    rng = np.random.default_rng([seed, index])
    v, u = np.mgrid[0:h, 0:w].astype(np.float32)
    v, u = (v + 0.5) / h, (u + 0.5) / w  # pixel centres, 0..1 down and across
    image = np.zeros((h, w, 3), np.float32)
    mask = np.zeros((h, w), np.int64)

    def paint(region, label, colour, texture=0.0, box=np.s_[:, :]):
        """Colour ``region`` (a boolean array over ``box``) with some texture; label it."""
        colour = np.asarray(colour, np.float32)
        shade = 1.0 + texture * rng.standard_normal(int(region.sum()), np.float32)[:, None]
        image[box][region] = colour * shade
        mask[box][region] = label

    horizon = rng.uniform(0.32, 0.5)
    vanish = rng.uniform(0.3, 0.7)
    below = np.clip((v - horizon) / (1 - horizon), 0, None)  # 0 at the horizon, 1 at the bottom
    across = u - vanish

    # Sky: a vertical gradient between two colours of a random sky (clear, overcast, dusk).
    top, low = [np.array(c, np.float32) for c in [
        ((0.25, 0.45, 0.85), (0.7, 0.82, 0.95)), ((0.6, 0.62, 0.66), (0.82, 0.83, 0.85)),
        ((0.35, 0.3, 0.55), (0.95, 0.6, 0.35))][rng.integers(3)]]
    t = np.clip(v / max(horizon, 1e-3), 0, 1)[..., None]
    image[:] = top * (1 - t) + low * t

    # Ground: road, pavements beyond its edges, building fronts beyond those (all converging).
    road_k = rng.uniform(0.28, 0.5)  # half-width of the road at the bottom row, in image widths
    pave_k = {-1: road_k * (1 + rng.uniform(0.25, 0.6)), 1: road_k * (1 + rng.uniform(0.25, 0.6))}
    road_half = road_k * below
    ground = v > horizon
    on_pavement_or_road = ground & (across > -pave_k[-1] * below) & (across < pave_k[1] * below)

    # Buildings: walls whose roof line rises away from the vanishing point, in blocks of random height.
    blocks = rng.uniform(0.4, 1.3, size=12)
    block_of = np.clip(((u + rng.uniform(0, 0.1)) * 10).astype(int), 0, 11)
    roof = horizon - rng.uniform(0.3, 0.8) * np.abs(across) * blocks[block_of]
    building = (v > roof) & ~on_pavement_or_road
    depth = 1.0 / (np.abs(across) + 0.05)
    for side in (-1, 1):
        region = building & (np.sign(across) == side)
        paint(region, BUILDING, rng.uniform(0.25, 0.85, 3) * rng.uniform(0.7, 1.0), 0.03)
        # Windows: a grid that gets finer towards the vanishing point.
        rows = np.sin((v - horizon) * depth * rng.uniform(18, 30)) > 0.4
        cols = np.sin(depth * rng.uniform(5, 9)) > 0.2
        windows = region & rows & cols & (np.abs(across) > 0.08)
        image[windows] = image[windows] * 0.35 + np.array((0.15, 0.2, 0.3), np.float32)

    road = ground & (np.abs(across) < road_half)
    asphalt = rng.uniform(0.22, 0.42)
    paint(road, ROAD, (asphalt, asphalt, asphalt * rng.uniform(0.95, 1.08)), 0.05)
    pavement = on_pavement_or_road & ~road
    paint(pavement, PAVEMENT, rng.uniform(0.5, 0.72) * np.array((1.0, 0.93, 0.85)) * rng.uniform(0.85, 1.1, 3), 0.04)

    # Lane markings: a dashed centre line and edge lines, painted on the road and labelled Road.
    marking = np.array((0.95, 0.95, 0.9) if rng.random() < 0.7 else (0.95, 0.8, 0.2), np.float32)
    dashes = np.sin(rng.uniform(1.5, 3.0) / (below + 0.04) + rng.uniform(0, 6)) > 0
    line_half = 0.012 * road_half + 0.5 / w  # at least a pixel wide
    image[road & (np.abs(across) < line_half) & dashes] = marking
    if rng.random() < 0.7:
        image[road & (np.abs(np.abs(across) - road_half * 0.9) < line_half)] = marking

    # Roadside objects, sized in image heights (x extents times h/w keep them round on any
    # aspect ratio) and scaled with distance; farther objects are drawn first.
    aspect = h / w
    objects = []
    for kind, count in (("tree", rng.integers(1, 5)), ("pole", rng.integers(0, 3)),
                        ("pedestrian", rng.integers(0, 3)), ("car", rng.integers(1, 5))):
        for _ in range(count):
            foot = rng.uniform(horizon + (0.06 if kind == "car" else 0.08), 1.02 if kind == "car" else 1.0)
            d = (foot - horizon) / (1 - horizon)
            side = rng.choice((-1, 1))
            if kind in ("tree", "pole"):  # on the outer edge of a pavement
                x = vanish + side * pave_k[side] * d
            elif kind == "pedestrian":  # somewhere on a pavement
                x = vanish + side * rng.uniform(road_k, pave_k[side]) * d
            else:  # in a lane
                x = vanish + (side * 0.5 + rng.uniform(-0.15, 0.15)) * road_k * d
            objects.append((foot, kind, d, x))
    objects.sort(key=lambda o: o[0])

    for foot, kind, d, x in objects:
        scale = 0.05 + 0.95 * d
        # Work inside the object's bounding box only: most of the picture is far away.
        reach = 0.6 * scale * aspect + 2 / w
        box = np.s_[max(int((foot - 0.8 * scale) * h) - 1, 0):min(int(foot * h) + 2, h),
                    max(int((x - reach) * w), 0):min(int((x + reach) * w) + 2, w)]
        bu, bv = u[box], v[box]
        if bu.size == 0:
            continue
        dx = np.abs(bu - x) / aspect  # horizontal distance in image heights
        if kind == "tree":
            trunk_h, radius = 0.2 * scale * rng.uniform(0.8, 1.3), 0.14 * scale * rng.uniform(0.8, 1.4)
            trunk = (dx < 0.012 * scale + 0.5 / h) & (bv < foot) & (bv > foot - trunk_h)
            paint(trunk, TREE, (0.35, 0.25, 0.15), 0.05, box)
            cy = foot - trunk_h - radius * 0.8
            canopy = (dx / radius) ** 2 + ((bv - cy) / (radius * 1.1)) ** 2 < 1
            paint(canopy, TREE, rng.uniform(0.1, 0.35, 3) * np.array((0.8, 1.6, 0.7)), 0.15, box)
        elif kind == "pole":
            pole_h = 0.4 * scale
            pole = (dx < 0.007 * scale + 0.5 / h) & (bv < foot) & (bv > foot - pole_h)
            paint(pole, POLE, np.array((0.55, 0.55, 0.5)) * rng.uniform(0.6, 1.1), 0.03, box)
            half = 0.04 * scale + 1.0 / h
            sign_ = (dx < half) & (np.abs(bv - (foot - pole_h)) < half)
            paint(sign_, SIGN, [(0.85, 0.1, 0.1), (0.1, 0.3, 0.8), (0.95, 0.8, 0.1)][rng.integers(3)], 0.03, box)
        elif kind == "pedestrian":
            tall = 0.25 * scale * rng.uniform(0.85, 1.1)
            body = (dx / (0.2 * tall)) ** 2 + ((bv - (foot - 0.42 * tall)) / (0.42 * tall)) ** 2 < 1
            head = (dx / (0.09 * tall)) ** 2 + ((bv - (foot - 0.92 * tall)) / (0.09 * tall)) ** 2 < 1
            paint(body, PEDESTRIAN, rng.uniform(0.05, 0.9, 3), 0.05, box)
            paint(head, PEDESTRIAN, np.array((0.85, 0.65, 0.5)) * rng.uniform(0.5, 1.1), 0.03, box)
        else:
            half = 0.17 * scale * rng.uniform(0.9, 1.1)  # half the car's width
            tall = 1.1 * half
            body = (dx < half) & (bv < foot - 0.1 * tall) & (bv > foot - 0.6 * tall)
            cabin = (dx < half * (0.62 + 0.2 * (bv - (foot - tall)) / tall)) & (bv <= foot - 0.6 * tall) & (bv > foot - tall)
            wheels = (np.abs(dx - half * 0.65) < half * 0.2) & (bv <= foot) & (bv >= foot - 0.2 * tall)
            paint(body, CAR, rng.uniform(0.05, 0.95, 3), 0.03, box)
            paint(cabin, CAR, np.array((0.15, 0.2, 0.28)) * rng.uniform(0.6, 1.4), 0.05, box)
            paint(wheels, CAR, (0.06, 0.06, 0.06), 0.1, box)

    # Lighting: brightness, colour cast, light from one side, a shadow across the ground, noise.
    light = rng.uniform(0.6, 1.25) * rng.uniform(0.88, 1.12, 3).astype(np.float32)
    image *= light * (1 + rng.uniform(-0.25, 0.25) * (u[..., None] - 0.5))
    if rng.random() < 0.5:
        edge = vanish + rng.uniform(-0.6, 0.6) * (v - horizon) + rng.uniform(-0.2, 0.2)
        shadow = ground & ((u < edge) if rng.random() < 0.5 else (u > edge))
        image[shadow] *= rng.uniform(0.45, 0.75)
    image += rng.normal(0, rng.uniform(0.01, 0.05), image.shape).astype(np.float32)
    np.clip(image, 0, 1, out=image)
    return image, mask


def road_scenes(n: int, size=64, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` synthetic street scenes: images N×3×H×W float32 in [0, 1] and masks N×H×W int64.

    ``size`` is an int (square) or ``(height, width)``; CamVid's 360×480 has the shape (3, 4).
    Deterministic: the same ``seed`` gives the same scenes; use another seed for a validation set.
    """
    if not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be a non-negative int, got {n!r}")
    h, w = _size(size)
    images = np.empty((n, 3, h, w), np.float32)
    masks = np.empty((n, h, w), np.int64)
    for i in range(n):
        image, masks[i] = road_scene(i, (h, w), seed)
        images[i] = image.transpose(2, 0, 1)
    return torch.from_numpy(images), torch.from_numpy(masks)


class RoadScenes(Dataset):
    """The synthetic scenes as a Dataset that draws scene ``i`` when asked, like a loader decoding a file.

    ``augment=True`` adds a random horizontal flip and brightness change per sample, on the
    CPU; ``transform(image, mask) -> (image, mask)`` runs after that, on both together (e.g.
    ``course.segmentation.JointAugmentation``). A plain class at module level, so it pickles
    for DataLoader workers (notebook 08).
    """

    def __init__(self, n: int, size=64, seed: int = 0, augment: bool = False, transform=None):
        if not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n must be a positive int, got {n!r}")
        self.n, self.size, self.seed, self.augment = int(n), _size(size), int(seed), bool(augment)
        self.transform = transform

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: int):
        if not 0 <= index < self.n:
            raise IndexError(f"scene {index} out of range for {self.n} scenes")
        image, mask = road_scene(index, self.size, self.seed)
        image = torch.from_numpy(image).permute(2, 0, 1).contiguous()
        mask = torch.from_numpy(mask)
        if self.augment:
            if torch.rand(()) < 0.5:
                image, mask = image.flip(-1), mask.flip(-1)
            image = (image * (0.75 + 0.5 * torch.rand(()))).clamp_(0, 1)
        if self.transform is not None:
            image, mask = self.transform(image, mask)
        return image, mask

    def __repr__(self) -> str:
        return f"RoadScenes({self.n} scenes of {self.size[0]}×{self.size[1]}, seed {self.seed}, augment={self.augment})"
