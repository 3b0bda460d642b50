"""Notebook 11's exercise checks (distributed training): batches, shards, the averaged gradient,
gradient accumulation with ``no_sync``, resuming from a checkpoint, loading a sharded checkpoint.

Each ``check_*`` runs the learner's code on small cases in this process, prints ✅ or ❌ with a
diagnosis (which case, which value, which rule) through ``course.checks``, registers the
exercise's hints for ``course.checks.hint()`` and returns a bool; it never raises because of the
learner's code. No check starts a process group: what DDP does across processes is simulated
here exactly (``SimulatedDDP``), and the notebook's launched runs show the real thing.
"""

from __future__ import annotations

import contextlib
import copy
import math
import tempfile
from pathlib import Path

from course import checks
from course.checks import NotAttempted as _NotAttempted, called as _called, verdict as _verdict

__all__ = ["SimulatedDDP", "check_batch_plan", "check_sampler_indices", "check_epoch_order",
           "check_averaged_gradient", "check_accumulation_step", "check_resumable_training",
           "check_load_sharded"]


# --- Exercise 1: the per-rank batch and the steps per epoch ---------------------------------

def check_batch_plan(fn) -> bool:
    """``fn(n_samples, global_batch, world_size)`` → ``(per_rank_batch, steps_per_epoch)``."""

    def reference(n, b, w):
        per_rank = b // w
        return per_rank, math.ceil(n / w) // per_rank

    cases = [(1536, 64, 1), (1536, 64, 2), (1536, 64, 8), (1797, 64, 2), (50_000, 512, 8), (10, 4, 4)]
    return checks.check_function(fn, reference, cases, name="batch_plan", hints=[
        "Two questions: how many images does ONE rank see per step, and how many samples does ONE "
        "rank own after DistributedSampler has padded the data set?",
        "Divide the global batch among the ranks. Each rank owns the padded data set's size divided "
        "by the world size (round up: that is the padding); with drop_last, whole batches only.",
    ])


# --- Exercise 2: which samples does a rank get? ---------------------------------------------

def check_sampler_indices(fn) -> bool:
    """``fn(n, world_size, rank)`` → the indices ``DistributedSampler(shuffle=False)`` gives ``rank``."""
    from torch.utils.data import DistributedSampler

    def reference(n, w, r):
        return list(DistributedSampler(range(n), num_replicas=w, rank=r, shuffle=False))

    cases = [(8, 2, 1), (10, 4, 0), (10, 4, 3), (1536, 2, 1), (5, 8, 7), (1, 3, 2)]
    return checks.check_function(fn, reference, cases, name="sampler_indices", hints=[
        "Look at the picture: the list is first made longer (hatched boxes), then dealt out like "
        "cards. Which indices are repeated, and how long does the list become?",
        "Round the length up to a multiple of the world size by repeating indices from the start "
        "(maybe more than once when n < world_size); then rank r takes every world_size-th entry "
        "starting at position r.",
    ])


# --- Exercise 3: a new shuffle every epoch --------------------------------------------------

def check_epoch_order(fn) -> bool:
    """``fn(n, world_size, rank, epochs, seed)`` → one list of indices per epoch, as DDP training sees them."""
    from torch.utils.data import DistributedSampler

    name = "epoch_order"
    hints = [
        "The sampler shuffles with a generator seeded from its seed *and its epoch number*. Who tells "
        "it which epoch it is?",
        "Make one DistributedSampler(range(n), num_replicas=..., rank=..., shuffle=True, seed=...) and, "
        "at the top of each epoch, tell it the epoch number before you read its indices.",
    ]

    def reference(n, w, r, epochs, seed):
        sampler = DistributedSampler(range(n), num_replicas=w, rank=r, shuffle=True, seed=seed)
        order = []
        for epoch in range(epochs):
            sampler.set_epoch(epoch)
            order.append(list(sampler))
        return order

    def judge():
        for case in [(12, 2, 0, 3, 0), (12, 2, 1, 3, 0), (10, 4, 3, 2, 7), (1536, 2, 1, 2, 0)]:
            n, w, r, epochs, seed = case
            got = _called(fn, *case)
            expected = reference(*case)
            try:
                got = [list(map(int, epoch)) for epoch in got]
            except TypeError:
                return f"with n={n}, world_size={w}, rank={r}: return a list with one list of indices per epoch"
            if len(got) != epochs:
                return f"with {epochs} epochs you returned {len(got)} lists of indices; one per epoch"
            for epoch in range(epochs):
                if got[epoch] != expected[epoch]:
                    if epoch > 0 and got[epoch] == got[0]:
                        return (f"with n={n}, world_size={w}, rank={r}: epoch {epoch} repeats epoch 0's "
                                "order exactly — every epoch would see the same batches in the same order")
                    if got[epoch] == sorted(got[epoch]):
                        return f"with n={n}, world_size={w}, rank={r}: epoch {epoch} is not shuffled"
                    return (f"with n={n}, world_size={w}, rank={r}, seed={seed}: epoch {epoch} should start "
                            f"{expected[epoch][:5]}, got {got[epoch][:5]}")
        return None

    return _verdict(name, hints, judge, "every epoch a new shuffle, the same one on every rank, and the "
                                        "ranks' shards never overlap.")


# --- Exercise 4: the all-reduced gradient ---------------------------------------------------

def _shard_mean_gradients(w, x, y, world_size):
    import torch

    grads = []
    for xs, ys in zip(x.chunk(world_size), y.chunk(world_size)):
        ws = w.detach().clone().requires_grad_(True)
        ((xs @ ws - ys) ** 2).mean().backward()
        grads.append(ws.grad)
    return torch.stack(grads).mean(0)


def _full_batch_gradient(w, x, y):
    ws = w.detach().clone().requires_grad_(True)
    ((x @ ws - y) ** 2).mean().backward()
    return ws.grad


def check_averaged_gradient(fn) -> bool:
    """``fn(w, x, y, world_size)``: the average over ``x.chunk(world_size)`` shards of each shard's mean-loss gradient.

    With equal shards that is the full-batch gradient; with unequal shards (10 samples over 3
    ranks: 4, 4, 2) it is not, so a function that skips the sharding fails here.
    """
    import torch

    name = "averaged_gradient"
    hints = [
        "Play every rank yourself: each one sees only its own rows of x and y and knows nothing of "
        "the others. What does each compute, and what does the all-reduce do with the results?",
        "Loop over the shards (torch.chunk). For each, start from a fresh leaf copy of w that requires "
        "grad, take the mean loss over that shard only, backward; then average the per-shard gradients.",
    ]
    g = torch.Generator().manual_seed(0)
    cases = [(torch.randn(3, generator=g, dtype=torch.float64), torch.randn(n, 3, generator=g, dtype=torch.float64),
              torch.randn(n, generator=g, dtype=torch.float64), world) for n, world in
             ((8, 1), (8, 2), (8, 4), (8, 8), (10, 3), (7, 2))]

    def judge():
        for w, x, y, world in cases:
            got = _called(fn, w.clone(), x.clone(), y.clone(), world)
            expected = _shard_mean_gradients(w, x, y, world)
            if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
                return f"with {len(x)} samples over {world} ranks: expected a tensor of shape {tuple(expected.shape)}"
            if torch.allclose(got.double(), expected, rtol=1e-6, atol=1e-9):
                continue
            sizes = [len(s) for s in x.chunk(world)]
            where = f"with {len(x)} samples over {world} ranks (shards of {sizes})"
            if torch.allclose(got.double(), _full_batch_gradient(w, x, y), rtol=1e-6, atol=1e-9):
                return (f"{where}: your result is the full-batch gradient, but DDP averages the ranks' "
                        "gradients of their own shard means — the same only when the shards are equal. "
                        "Simulate the ranks.")
            total = sum(_full_batch_gradient(w, xs, ys) for xs, ys in zip(x.chunk(world), y.chunk(world)))
            if torch.allclose(got.double(), total, rtol=1e-6, atol=1e-9):
                return f"{where}: you returned the sum of the ranks' gradients; the all-reduce here averages"
            return f"{where}: expected {expected.tolist()}, got {got.tolist()}"
        return None

    return _verdict(name, hints, judge, "the average of the shards' gradients — the full-batch gradient "
                                        "exactly when the shards are equal.")


# --- Exercise 5: gradient accumulation with no_sync -----------------------------------------

class SimulatedDDP:
    """DDP's training-time behaviour in one process, for exercises: it wraps a module, forwards to
    it, and counts the gradient all-reduces that real DDP would run (one per ``backward`` outside
    ``no_sync()``). With one process the all-reduce leaves the gradients unchanged, as in DDP."""

    def __init__(self, module):
        import torch

        self.module = module
        self.allreduces = 0
        self.backwards = 0
        self._sync = True
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise ValueError("SimulatedDDP needs a module with trainable parameters")
        self._first = params[0]

        def count(_grad):
            self.backwards += 1
            self.allreduces += int(self._sync)

        self._first.register_hook(count)  # runs once per backward that reaches the parameters
        self._torch = torch

    def __call__(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def parameters(self):
        return self.module.parameters()

    @contextlib.contextmanager
    def no_sync(self):
        """Like ``DistributedDataParallel.no_sync``: backward passes inside keep their gradients local."""
        old, self._sync = self._sync, False
        try:
            yield
        finally:
            self._sync = old


class _CountingSGD:
    def __init__(self, optimizer):
        self.optimizer, self.steps, self.zeroed = optimizer, 0, 0

    def step(self, *args, **kwargs):
        self.steps += 1
        return self.optimizer.step(*args, **kwargs)

    def zero_grad(self, *args, **kwargs):
        self.zeroed += 1
        return self.optimizer.zero_grad(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.optimizer, name)


def _tiny_problem(k, micro, seed=0):
    import torch

    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).double()
    batches = [(torch.randn(micro, 5, generator=g, dtype=torch.float64), torch.randint(0, 3, (micro,), generator=g))
               for _ in range(k)]
    return model, batches


def check_accumulation_step(fn) -> bool:
    """``fn(ddp_model, optimizer, micro_batches, loss_fn)``: ONE optimizer step over all micro-batches,
    the same step as one big batch, with exactly one gradient all-reduce."""
    import torch
    import torch.nn.functional as F

    name = "accumulation_step"
    hints = [
        "Three things must match the big-batch step: the gradient's size, how many times DDP talks to "
        "the other ranks, and how many optimizer steps you take. Check each against one big batch.",
        "Zero the gradients once, then backward each micro-batch's loss divided by the number of "
        "micro-batches (a mean of means); wrap every backward except the last in ddp_model.no_sync(); "
        "step the optimizer once at the end.",
    ]

    def judge():
        for k in (4, 2, 1):
            model, batches = _tiny_problem(k, micro=6, seed=k)
            reference = copy.deepcopy(model)
            ref_opt = torch.optim.SGD(reference.parameters(), lr=0.5, momentum=0.9)
            x = torch.cat([b[0] for b in batches])
            y = torch.cat([b[1] for b in batches])
            ref_opt.zero_grad()
            F.cross_entropy(reference(x), y).backward()
            ref_opt.step()

            ddp = SimulatedDDP(model)
            opt = _CountingSGD(torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9))
            # gradients left from an earlier step must not leak in: start with stale ones
            for p in model.parameters():
                p.grad = torch.ones_like(p)
            _called_or_none(fn, ddp, opt, batches, F.cross_entropy)
            where = f"with {k} micro-batches of 6"
            if opt.steps != 1:
                return f"{where}: you called optimizer.step() {opt.steps} times; one step per accumulated batch"
            if ddp.allreduces != 1 and k > 1:
                if ddp.allreduces == 0:
                    return (f"{where}: DDP never all-reduced — every backward ran inside no_sync(), so the "
                            "ranks' gradients would never be averaged and the replicas would drift apart")
                return (f"{where}: DDP all-reduced {ddp.allreduces} times for one step; only the last "
                        "backward needs to, the others can keep their gradients local")
            if ddp.backwards != k:
                return f"{where}: expected {k} backward passes (one per micro-batch), counted {ddp.backwards}"
            got = torch.cat([p.detach().flatten() for p in model.parameters()])
            want = torch.cat([p.detach().flatten() for p in reference.parameters()])
            if not torch.allclose(got, want, rtol=1e-9, atol=1e-12):
                start = torch.cat([p.detach().flatten() for p in _tiny_problem(k, 6, seed=k)[0].parameters()])
                ratio = float((got - start).norm() / (want - start).norm())
                if abs(ratio - k) < 1e-6 * k and k > 1:
                    return (f"{where}: your step is {k}× the big-batch step — the accumulated gradient is "
                            "the sum of the micro-batches' mean gradients, not their mean")
                if torch.allclose(got, start, rtol=1e-9, atol=1e-12):
                    return f"{where}: the weights did not change"
                return (f"{where}: after the step the weights differ from one big-batch step by "
                        f"{float((got - want).norm() / want.norm()):.1e} (relative); were stale gradients zeroed?")
        return None

    return _verdict(name, hints, judge, "one all-reduce and one step per accumulated batch, and the same "
                                        "weights as one big batch.")


def _called_or_none(fn, *args):
    """Call a function that may return None (it works in place); ``...`` means an untouched stub."""
    result = fn(*args)
    if result is ... or result is NotImplemented:
        raise _NotAttempted
    return result


# --- Exercise 6: resume a training loop from a checkpoint -----------------------------------

class SimulatedCrash(RuntimeError):
    """Raised by the check's data at a chosen step, as a dying worker would stop the loop."""


class _CrashingBatches:
    def __init__(self, batches, crash_at):
        self.batches, self.crash_at = batches, crash_at

    def __len__(self):
        return len(self.batches)

    def __iter__(self):
        for step, batch in enumerate(self.batches, 1):
            if step == self.crash_at:
                raise SimulatedCrash(f"simulated crash at step {step}")
            yield batch


def _resumable_problem(seed=0, steps=12):
    import torch

    g = torch.Generator().manual_seed(seed)
    batches = [(torch.randn(8, 5, generator=g, dtype=torch.float64), torch.randint(0, 3, (8,), generator=g))
               for _ in range(steps)]

    def fresh():
        torch.manual_seed(seed)
        model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).double()
        return model, torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)

    return batches, fresh


def _plain_train(model, optimizer, batches, start=0):
    import torch.nn.functional as F

    for step, (x, y) in enumerate(batches, 1):
        if step <= start:
            continue
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return model


def check_resumable_training(fn) -> bool:
    """``fn(model, optimizer, batches, checkpoint_path, every)`` trains over ``batches`` and survives a crash.

    The check runs it once with a crash at step 8 (a fresh model and optimizer, as a restarted
    process has), then again with fresh objects and the same checkpoint path, and compares the
    weights with one uninterrupted run.
    """
    import torch

    name = "resumable_training"
    hints = [
        "A restarted process has a fresh model AND a fresh optimizer, and it starts reading the data "
        "from the top. What must the checkpoint hold so that the next steps are exactly the ones it "
        "would have taken?",
        "Every `every` steps save the model's and the optimizer's state_dict and the step number; at "
        "the start, if the file exists, load it (map_location='cpu', weights_only=True), load both "
        "state_dicts and skip the batches up to that step.",
    ]

    def judge():
        batches, fresh = _resumable_problem()
        want_model, want_opt = fresh()
        _plain_train(want_model, want_opt, batches)
        want = torch.cat([p.detach().flatten() for p in want_model.parameters()])
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "checkpoint.pt"
            model, optimizer = fresh()
            try:
                _called_or_none(fn, model, optimizer, _CrashingBatches(batches, crash_at=8), path, 3)
                return "the first run should have crashed at step 8 (the check's data raises there), but it " \
                       "finished: do not catch the crash — a real one kills the process"
            except SimulatedCrash:
                pass
            if not path.exists():
                return f"after the crash at step 8 there is no checkpoint at the path you were given ({path.name})"
            model, optimizer = fresh()  # the restarted process
            _called_or_none(fn, model, optimizer, _CrashingBatches(batches, crash_at=0), path, 3)
        got = torch.cat([p.detach().flatten() for p in model.parameters()])
        if torch.allclose(got, want, rtol=1e-9, atol=1e-12):
            return None
        # name the usual mistakes by replaying them
        m, o = fresh()
        _plain_train(m, o, batches[:6])
        no_momentum = copy.deepcopy(m)
        _plain_train(no_momentum, torch.optim.SGD(no_momentum.parameters(), lr=0.2, momentum=0.9), batches, start=6)
        m2, o2 = fresh()
        _plain_train(m2, o2, batches[:6])
        _plain_train(m2, o2, batches)  # resumed the weights but redid every step
        flat = lambda mod: torch.cat([p.detach().flatten() for p in mod.parameters()])  # noqa: E731
        if torch.allclose(got, flat(no_momentum), rtol=1e-9, atol=1e-12):
            return ("the weights came back but the optimizer's state did not: SGD's momentum restarted from zero "
                    "after the crash, so the steps after it differ")
        if torch.allclose(got, flat(m2), rtol=1e-9, atol=1e-12):
            return "after the restart you trained on every batch again, including the 6 the checkpoint covers"
        return (f"the resumed run ends {float((got - want).norm() / want.norm()):.1e} (relative) away from the "
                "uninterrupted one; it should end on the same weights")

    return _verdict(name, hints, judge, "crashed at step 8, resumed from step 6, and ended on exactly the "
                                        "weights of a run that never crashed.")


# --- Exercise 7: load a sharded (distributed) checkpoint into one process --------------------

def check_load_sharded(fn, checkpoint_dir=None, expected_state: dict | None = None) -> bool:
    """``fn(checkpoint_dir, model)`` loads the ``"model"`` entry of a torch.distributed.checkpoint folder
    into ``model`` (one process, no process group) and returns the model.

    With ``checkpoint_dir`` and ``expected_state`` (the notebook passes the 2-process FSDP run's
    folder and its weights) it checks that one; otherwise it writes a small checkpoint itself.
    """
    import torch

    name = "load_sharded"
    hints = [
        "A distributed checkpoint is a folder, not a file: torch.load cannot read it. The library that "
        "wrote it also reads it, into tensors you hand it.",
        "Build a dict with the same top-level key the writer used, holding your model's state_dict; "
        "pass it to torch.distributed.checkpoint.load with checkpoint_id=the folder; then load the "
        "filled state_dict into the model.",
    ]

    def make_model():
        torch.manual_seed(1)
        return torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).double()

    def judge():
        import warnings

        import torch.distributed.checkpoint as dcp

        with tempfile.TemporaryDirectory() as folder:
            if checkpoint_dir is None:
                torch.manual_seed(2)
                source = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(),
                                             torch.nn.Linear(16, 4)).double()
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", message=".*single process.*")
                    dcp.save({"model": source.state_dict()}, checkpoint_id=folder)
                expected = {k: v.clone() for k, v in source.state_dict().items()}
                target, where = make_model(), folder
            else:
                expected, where = expected_state, checkpoint_dir
                target = _model_like(expected)
            before = {k: v.detach().clone() for k, v in target.state_dict().items()}
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*single process.*")
                got = _called(fn, where, target)
        if not isinstance(got, torch.nn.Module):
            return f"return the model you loaded into, got {type(got).__name__}"
        state = got.state_dict()
        for key, value in expected.items():
            if key not in state:
                return f"the model has no parameter {key!r}"
            if not torch.equal(state[key].cpu(), value.cpu()):
                untouched = key in before and torch.equal(state[key].cpu(), before[key].cpu())
                return (f"{key} differs from the checkpoint's (largest difference "
                        f"{float((state[key].cpu() - value.cpu()).abs().max()):.2e})"
                        + ("; the model still has its initial weights" if untouched else ""))
        return None

    return _verdict(name, hints, judge, "every tensor of the checkpoint is in your model, bit for bit — "
                                        "whatever number of processes wrote it.")


def _model_like(state: dict):
    """A plain model with the parameter names and shapes of ``state`` (Linear layers in a Sequential)."""
    import torch

    layers = {}
    for key, value in state.items():
        index, kind = key.split(".")
        layers.setdefault(int(index), {})[kind] = value
    modules = []
    for index in range(max(layers) + 1):
        if index in layers:
            out_features, in_features = layers[index]["weight"].shape
            modules.append(torch.nn.Linear(in_features, out_features, dtype=layers[index]["weight"].dtype))
        else:
            modules.append(torch.nn.ReLU())
    torch.manual_seed(3)
    return torch.nn.Sequential(*modules)
