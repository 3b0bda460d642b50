"""The package's one lazy-import mechanism (PEP 562): ``course``, ``course.datasets``, ``course.models``.

``import course`` must stay fast (Colab start-up), so nothing heavy is imported until it is used:
``course.timing`` imports the module on first use, and ``course.datasets.CIFAR10`` finds the
name in the package's modules.
"""

import importlib
import pkgutil


def lazy_package(package_name: str, package_path, *, names: bool = True):
    """Return ``__getattr__``/``__dir__`` for a package: its submodules load on first use, and with
    ``names=True`` a public name of a submodule (in its ``__all__``) is found from the package too."""

    def modules():
        return sorted(m.name for m in pkgutil.iter_modules(package_path) if not m.name.startswith("_"))

    def __getattr__(name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name in modules():
            return importlib.import_module(f"{package_name}.{name}")
        if names:
            for module_name in modules():
                module = importlib.import_module(f"{package_name}.{module_name}")
                if name in getattr(module, "__all__", ()):
                    return getattr(module, name)
        raise AttributeError(f"module {package_name!r} has no attribute {name!r}")

    def __dir__():
        listed = list(modules())
        if names:
            for module_name in modules():
                module = importlib.import_module(f"{package_name}.{module_name}")
                listed.extend(getattr(module, "__all__", ()))
        return sorted(set(listed))

    return __getattr__, __dir__
