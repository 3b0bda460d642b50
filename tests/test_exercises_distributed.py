"""Notebook 11's exercise checks: the answer passes, the stub is "not attempted", the usual mistake fails."""

import math
import warnings

import pytest
import torch
import torch.nn.functional as F
from torch.utils.data import DistributedSampler

from course.exercises import distributed as ex


def stub(*args, **kwargs):
    raise NotImplementedError


def verdict(capsys, check, *args):
    ok = check(*args)
    return ok, capsys.readouterr().out


# --- right answers (the notebook's solution cells hold the same) ----------------------------

def batch_plan(n_samples, global_batch, world_size):
    per_rank_batch = global_batch // world_size
    return per_rank_batch, math.ceil(n_samples / world_size) // per_rank_batch


def sampler_indices(n, world_size, rank):
    total = math.ceil(n / world_size) * world_size
    indices = list(range(n))
    while len(indices) < total:
        indices += indices[: total - len(indices)]
    return indices[rank::world_size]


def epoch_order(n, world_size, rank, epochs, seed):
    sampler = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=True, seed=seed)
    order = []
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        order.append(list(sampler))
    return order


def averaged_gradient(w, x, y, world_size):
    gradients = []
    for xs, ys in zip(x.chunk(world_size), y.chunk(world_size)):
        ws = w.detach().clone().requires_grad_(True)
        ((xs @ ws - ys) ** 2).mean().backward()
        gradients.append(ws.grad)
    return torch.stack(gradients).mean(0)


def accumulation_step(ddp_model, optimizer, micro_batches, loss_fn):
    optimizer.zero_grad(set_to_none=True)
    for i, (x, y) in enumerate(micro_batches):
        last = i == len(micro_batches) - 1
        with ddp_model.no_sync() if not last else _nothing():
            (loss_fn(ddp_model(x), y) / len(micro_batches)).backward()
    optimizer.step()


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def resumable_training(model, optimizer, batches, checkpoint_path, every):
    start = 0
    if checkpoint_path.exists():
        state = torch.load(checkpoint_path, map_location="cpu", weights_only=True)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start = state["step"]
    for step, (x, y) in enumerate(batches, 1):
        if step <= start:
            continue
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % every == 0:
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step},
                       checkpoint_path)
    return model


def load_sharded(checkpoint_dir, model):
    import torch.distributed.checkpoint as dcp

    state = {"model": model.state_dict()}
    dcp.load(state, checkpoint_id=checkpoint_dir)
    model.load_state_dict(state["model"])
    return model


RIGHT = [
    (ex.check_batch_plan, batch_plan),
    (ex.check_sampler_indices, sampler_indices),
    (ex.check_epoch_order, epoch_order),
    (ex.check_averaged_gradient, averaged_gradient),
    (ex.check_accumulation_step, accumulation_step),
    (ex.check_resumable_training, resumable_training),
    (ex.check_load_sharded, load_sharded),
]


@pytest.mark.parametrize("check,answer", RIGHT, ids=lambda v: getattr(v, "__name__", ""))
def test_the_answer_passes(capsys, check, answer):
    ok, out = verdict(capsys, check, answer)
    assert ok, out
    assert "✅" in out


@pytest.mark.parametrize("check", [c for c, _ in RIGHT], ids=lambda c: c.__name__)
def test_an_untouched_stub_is_not_attempted(capsys, check):
    ok, out = verdict(capsys, check, stub)
    assert not ok
    assert "not attempted" in out
    assert "Hint" not in out


# --- the usual mistakes ---------------------------------------------------------------------

def test_batch_plan_rejects_steps_counted_over_the_whole_data_set(capsys):
    def wrong(n, b, w):
        return b // w, n // (b // w)  # forgot that each rank owns only 1/N of the data
    ok, out = verdict(capsys, ex.check_batch_plan, wrong)
    assert not ok and "(1536, 64, 2)" in out


def test_sampler_indices_rejects_no_padding(capsys):
    ok, out = verdict(capsys, ex.check_sampler_indices, lambda n, w, r: list(range(n))[r::w])
    assert not ok and "10" in out


def test_epoch_order_rejects_a_missing_set_epoch(capsys):
    def wrong(n, w, r, epochs, seed):
        sampler = DistributedSampler(range(n), num_replicas=w, rank=r, shuffle=True, seed=seed)
        return [list(sampler) for _ in range(epochs)]
    ok, out = verdict(capsys, ex.check_epoch_order, wrong)
    assert not ok and "repeats epoch 0's order" in out


def test_averaged_gradient_rejects_the_plain_full_batch_gradient(capsys):
    # the review's finding: with equal shards only, this non-answer passed
    def wrong(w, x, y, world_size):
        w = w.detach().clone().requires_grad_(True)
        ((x @ w - y) ** 2).mean().backward()
        return w.grad
    ok, out = verdict(capsys, ex.check_averaged_gradient, wrong)
    assert not ok and "full-batch gradient" in out and "10 samples over 3 ranks" in out


def test_averaged_gradient_rejects_a_sum(capsys):
    def wrong(w, x, y, world_size):
        return averaged_gradient(w, x, y, world_size) * world_size
    ok, out = verdict(capsys, ex.check_averaged_gradient, wrong)
    assert not ok and "sum" in out


def test_accumulation_rejects_unscaled_losses(capsys):
    def wrong(ddp_model, optimizer, micro_batches, loss_fn):
        optimizer.zero_grad(set_to_none=True)
        for i, (x, y) in enumerate(micro_batches):
            with ddp_model.no_sync() if i < len(micro_batches) - 1 else _nothing():
                loss_fn(ddp_model(x), y).backward()
        optimizer.step()
    ok, out = verdict(capsys, ex.check_accumulation_step, wrong)
    assert not ok and "4× the big-batch step" in out


def test_accumulation_rejects_a_missing_no_sync(capsys):
    def wrong(ddp_model, optimizer, micro_batches, loss_fn):
        optimizer.zero_grad(set_to_none=True)
        for x, y in micro_batches:
            (loss_fn(ddp_model(x), y) / len(micro_batches)).backward()
        optimizer.step()
    ok, out = verdict(capsys, ex.check_accumulation_step, wrong)
    assert not ok and "all-reduced 4 times" in out


def test_accumulation_rejects_no_sync_everywhere(capsys):
    def wrong(ddp_model, optimizer, micro_batches, loss_fn):
        optimizer.zero_grad(set_to_none=True)
        with ddp_model.no_sync():
            for x, y in micro_batches:
                (loss_fn(ddp_model(x), y) / len(micro_batches)).backward()
        optimizer.step()
    ok, out = verdict(capsys, ex.check_accumulation_step, wrong)
    assert not ok and "never all-reduced" in out


def test_accumulation_rejects_stale_gradients(capsys):
    def wrong(ddp_model, optimizer, micro_batches, loss_fn):
        for i, (x, y) in enumerate(micro_batches):
            with ddp_model.no_sync() if i < len(micro_batches) - 1 else _nothing():
                (loss_fn(ddp_model(x), y) / len(micro_batches)).backward()
        optimizer.step()
    ok, out = verdict(capsys, ex.check_accumulation_step, wrong)
    assert not ok and "stale gradients" in out


def test_resume_rejects_a_checkpoint_without_the_optimizer(capsys):
    def wrong(model, optimizer, batches, checkpoint_path, every):
        start = 0
        if checkpoint_path.exists():
            state = torch.load(checkpoint_path, map_location="cpu", weights_only=True)
            model.load_state_dict(state["model"])
            start = state["step"]
        for step, (x, y) in enumerate(batches, 1):
            if step <= start:
                continue
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            if step % every == 0:
                torch.save({"model": model.state_dict(), "step": step}, checkpoint_path)
        return model
    ok, out = verdict(capsys, ex.check_resumable_training, wrong)
    assert not ok and "momentum" in out


def test_resume_rejects_redoing_every_step(capsys):
    def wrong(model, optimizer, batches, checkpoint_path, every):
        if checkpoint_path.exists():
            state = torch.load(checkpoint_path, map_location="cpu", weights_only=True)
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
        for step, (x, y) in enumerate(batches, 1):
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            if step % every == 0:
                torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step},
                           checkpoint_path)
        return model
    ok, out = verdict(capsys, ex.check_resumable_training, wrong)
    assert not ok and "trained on every batch again" in out


def test_load_sharded_rejects_torch_load_of_the_folder(capsys):
    def wrong(checkpoint_dir, model):
        model.load_state_dict(torch.load(checkpoint_dir, map_location="cpu", weights_only=True))
        return model
    ok, out = verdict(capsys, ex.check_load_sharded, wrong)
    assert not ok and "raised" in out


def test_load_sharded_rejects_the_wrong_top_level_key(capsys):
    def wrong(checkpoint_dir, model):
        import torch.distributed.checkpoint as dcp
        state = model.state_dict()
        dcp.load(state, checkpoint_id=checkpoint_dir)
        return model
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ok, out = verdict(capsys, ex.check_load_sharded, wrong)
    assert not ok and "raised" in out


def test_simulated_ddp_counts_what_ddp_would_all_reduce():
    model = torch.nn.Linear(3, 2)
    ddp = ex.SimulatedDDP(model)
    with ddp.no_sync():
        ddp(torch.ones(1, 3)).sum().backward()
    ddp(torch.ones(1, 3)).sum().backward()
    assert (ddp.backwards, ddp.allreduces) == (2, 1)
    with pytest.raises(ValueError, match="trainable"):
        ex.SimulatedDDP(torch.nn.ReLU())


def test_load_sharded_rejects_a_model_that_was_never_filled(capsys):
    ok, out = verdict(capsys, ex.check_load_sharded, lambda checkpoint_dir, model: model)
    assert not ok and "still has its initial weights" in out
