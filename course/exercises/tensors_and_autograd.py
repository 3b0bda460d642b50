"""Named checks for notebook 04 (tensors and autograd): one ``check_*`` per exercise.

Each check builds its own inputs, compares the learner's function with PyTorch itself where
PyTorch has the answer (``Tensor.stride``, ``torch.broadcast_shapes``, ``torch.sigmoid``,
least squares), prints ✅ or ❌ with a specific diagnosis and returns a bool.
"""

from __future__ import annotations

from course import checks

# ---------------------------------------------------------------------------------------------
# Exercise 1: strides of a contiguous tensor

STRIDE_SHAPES = [(3, 4), (2, 3, 4), (5,), (), (2, 1, 3), (4, 3, 2, 5)]


def check_contiguous_strides(fn) -> bool:
    """Exercise 1: ``contiguous_strides(shape)`` equals ``torch.empty(shape).stride()``."""
    import torch

    return checks.check_function(fn, lambda shape: tuple(torch.empty(shape).stride()), [(s,) for s in STRIDE_SHAPES],
                                 name="contiguous_strides", hints=[
        "In a row-major tensor the last index moves fastest: one step along it is one element. How many "
        "elements does one step along the second-to-last dimension skip?",
        "Walk the shape from the right, keeping a running product of the sizes you have passed: each "
        "dimension's stride is the product of the sizes to its right (1 for the last one).",
    ])


# ---------------------------------------------------------------------------------------------
# Exercise 2: broadcast two shapes

BROADCAST_CASES = [((3, 1), (3,)), ((3,), (3,)), ((), (2, 3)), ((5, 1, 4), (3, 1)), ((8, 1, 6, 1), (7, 1, 5)),
                   ((1,), (0,)), ((2, 3), (1, 1, 1))]
INCOMPATIBLE = [((2, 3), (3, 2)), ((3,), (4,)), ((2, 1), (8, 4, 3)), ((0,), (2,))]


def check_broadcast_shape(fn) -> bool:
    """Exercise 2: ``broadcast_shape(a, b)`` equals ``torch.broadcast_shapes`` and raises ValueError when it fails."""
    import torch

    name = "broadcast_shape"
    hints = [
        "Line the two shapes up at their right ends, as the rules say, not at their left ends; a missing "
        "dimension counts as size 1. Then decide dimension by dimension.",
        "Pad the shorter shape on the left with ones until both have the same length; for each pair of sizes "
        "keep the size that is not 1 (they must then be equal), and raise ValueError when neither is 1 and "
        "they differ.",
    ]
    if not checks.check_function(fn, lambda a, b: tuple(torch.broadcast_shapes(a, b)), BROADCAST_CASES, name=name,
                                 hints=hints):
        return False
    accepted = []
    for a, b in INCOMPATIBLE:
        try:
            result = fn(a, b)
        except ValueError:
            continue
        except Exception as error:
            return checks.check_true(lambda: False, name=name, hints=hints,
                                     fail=f"{a} with {b} raised {type(error).__name__}, expected ValueError")
        accepted.append((a, b, result))
    if accepted:
        a, b, result = accepted[0]
        return checks.check_true(lambda: False, name=name, hints=hints,
                                 fail=f"{a} and {b} do not broadcast, but the function returned {result!r} "
                                      "instead of raising ValueError")
    return checks.check_true(lambda: True, name=name, fail="",
                             success="right on 7 shape pairs, and raises ValueError for shapes that do not broadcast.")


# ---------------------------------------------------------------------------------------------
# Exercise 3: views and copies — find the bug

def _centred(x):
    return x - x.mean(0)


def check_centre_columns(fn) -> bool:
    """Exercise 3: ``centre_columns(x)`` returns x minus its column means and leaves x (and its views) unchanged."""
    import torch

    name = "centre_columns"
    hints = [
        "Which of view, reshape, contiguous, slicing and clone hand back the *same memory*? An in-place operation "
        "on any of those changes the caller's tensor. Note that one of them copies only sometimes.",
        "The result must live in memory of its own before anything is written to it in place: either make a copy "
        "that is always a copy, or compute the result out of place (a new tensor from an expression).",
    ]
    checks.register_hints(name, hints)
    generator = torch.Generator().manual_seed(7)
    base = torch.randn(5, 4, generator=generator)
    inputs = {"a contiguous 5×4 matrix": base.clone(), "a transposed (non-contiguous) 4×5 view": base.clone().t(),
              "a 1×3 matrix": torch.tensor([[1.0, 2.0, 3.0]])}
    for label, x in inputs.items():
        before = x.clone()
        try:
            out = fn(x)
        except NotImplementedError:
            return checks.not_attempted(name)
        except Exception as error:
            return checks.check_true(lambda: False, name=name, hints=hints,
                                     fail=f"for {label} it raised {type(error).__name__}: {error}")
        if out is ...:
            return checks.not_attempted(name)
        if not torch.equal(x, before):
            i, j = (int(v) for v in (x != before).nonzero()[0])
            return checks.check_true(lambda: False, name=name, hints=hints,
                                     fail=f"for {label} it changed its input: x[{i}, {j}] was {before[i, j].item():.4g}, "
                                          f"is now {x[i, j].item():.4g} — the result shares memory with x")
        try:
            checks.compare(out, _centred(before), path=f"the result for {label}")
        except checks.Mismatch as mismatch:
            return checks.check_true(lambda: False, name=name, hints=hints, fail=str(mismatch))
    return checks.check_true(lambda: True, name=name, fail="",
                             success="right values, and the input is untouched, contiguous or not.")


# ---------------------------------------------------------------------------------------------
# Exercise 4: a module whose tensors move with it


def check_standardise_module(cls, device=None) -> bool:
    """Exercise 4: ``Standardise(mean, std)`` keeps mean and std in buffers: they move with ``.to`` and are saved."""
    import torch

    name = "Standardise"
    hints = [
        "`module.to(device)` moves what the module has registered — its parameters and its buffers — and nothing "
        "else; the same goes for `state_dict()`. Which kind should constants that are not trained be?",
        "In `__init__`, register mean and std through the method nn.Module offers for tensors that are saved and "
        "moved but not trained (notebook section 3 used it for `mean`), and read them as attributes in forward.",
    ]
    checks.register_hints(name, hints)
    if device is None:
        from course import env

        device = env.device()
    other = torch.device(device) if torch.device(device).type == "cuda" else torch.device("meta")
    mean, std = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([0.5, 1.0, 2.0])

    def problem():
        try:
            module = cls(mean.clone(), std.clone())
        except NotImplementedError:
            raise
        except TypeError as error:
            return f"Standardise(mean, std) could not be built: {error}"
        x = torch.tensor([[2.0, 2.0, 7.0], [1.0, 4.0, 1.0]])
        out = module(x)
        expected = (x - mean) / std
        if not torch.is_tensor(out) or out.shape != expected.shape or not torch.allclose(out, expected):
            return f"on the CPU, forward gave {out!r}, expected {expected!r}"
        saved = set(module.state_dict())
        missing = {"mean", "std"} - saved
        if missing:
            return (f"state_dict() lacks {', '.join(sorted(missing))}: a saved and reloaded module would lose it "
                    f"(state_dict holds {sorted(saved) or 'nothing'})")
        trained = [n for n, _ in module.named_parameters() if n in ("mean", "std")]
        if trained:
            return f"{trained[0]} is a Parameter, so an optimizer would train it; a fixed constant is a buffer"
        moved = module.to(other)
        for attribute in ("mean", "std"):
            value = getattr(moved, attribute)
            if value.device.type != other.type:
                return f"after .to({other.type!r}), {attribute} is still on {value.device}"
        result = moved(torch.zeros(2, 3, device=other))
        if result.device.type != other.type:
            return f"forward on {other.type} returned a tensor on {result.device}"
        return None

    try:
        found = problem()
    except NotImplementedError:
        return checks.not_attempted(name)
    except Exception as error:
        found = f"it raised {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    return checks.check_true(lambda: found is None, name=name, fail=found or "", hints=hints,
                             success=f"mean and std are buffers: saved in state_dict and moved by .to() (tried on {other.type}).")


# ---------------------------------------------------------------------------------------------
# Exercise 5: the backward of softplus


def check_softplus(function) -> bool:
    """Exercise 5: ``Softplus.backward`` gives grad_output · sigmoid(x); ``gradcheck`` agrees."""
    import torch

    name = "Softplus.backward"
    hints = [
        "backward receives dL/dy (grad_output, one number per element) and must return dL/dx. The chain rule "
        "links them through dy/dx, which the text above gives you.",
        "Multiply, element by element, the incoming grad_output by the derivative of softplus evaluated at the "
        "saved input; PyTorch has that derivative as a ready-made function.",
    ]
    weights = torch.linspace(-2, 3, 7, dtype=torch.float64)  # a grad_output that is not all ones

    def gradient(x):
        x = x.clone().requires_grad_(True)
        (function.apply(x) * weights).sum().backward()
        return x.grad

    cases = [torch.linspace(-6, 6, 7, dtype=torch.float64), torch.zeros(7, dtype=torch.float64),
             torch.randn(7, dtype=torch.float64, generator=torch.Generator().manual_seed(1))]
    if not checks.check_function(gradient, lambda x: weights * torch.sigmoid(x), cases, name=name,
                                 rtol=1e-6, atol=1e-9, hints=hints):
        return False
    probe = torch.randn(3, 4, dtype=torch.float64, requires_grad=True, generator=torch.Generator().manual_seed(2))
    return checks.check_true(lambda: torch.autograd.gradcheck(function.apply, (probe,), raise_exception=False),
                             name=f"gradcheck({name.split('.')[0]})", hints=hints,
                             fail="finite differences disagree with your backward on a 3×4 input")


# ---------------------------------------------------------------------------------------------
# Exercise 6: linear regression with autograd alone


def least_squares(x, y):
    """The exact least-squares (w, b) for y ≈ x @ w + b."""
    import torch

    design = torch.cat([x, torch.ones(len(x), 1)], dim=1)
    solution = torch.linalg.lstsq(design.double(), y.double().unsqueeze(1)).solution.squeeze(1).float()
    return solution[:-1], solution[-1]


def check_fit_linear(fn) -> bool:
    """Exercise 6: ``fit_linear(x, y)`` by gradient descent reaches the least-squares (w, b)."""
    import torch

    name = "fit_linear"
    hints = [
        "Each step is the loop of section 5 in miniature: a forward pass, the loss, backward, an update that "
        "autograd must not record, and a reset — otherwise the gradients of all steps add up.",
        "Inside the loop: compute the mean squared error of x @ w + b against y; call backward; under torch's "
        "no-grad context move w and b a step of lr against their gradients (in place); then set both gradients "
        "to None. After the loop return the two tensors detached.",
    ]
    generator = torch.Generator().manual_seed(3)
    cases = []
    for n, d in [(50, 1), (200, 3), (120, 5)]:
        x = torch.randn(n, d, generator=generator)
        y = x @ torch.randn(d, generator=generator) + 0.7 + 0.1 * torch.randn(n, generator=generator)
        cases.append((x, y))
    return checks.check_function(fn, least_squares, cases, name=name, rtol=1e-2, atol=1e-3, hints=hints)
