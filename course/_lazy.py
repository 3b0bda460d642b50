"""Lazy attribute lookup for the ``datasets`` and ``models`` packages (PEP 562)."""

import importlib
import pkgutil


def lazy_package(package_name: str, package_path):
    """Return ``__getattr__``/``__dir__`` that find a public name in the package's modules."""

    def modules():
        return sorted(m.name for m in pkgutil.iter_modules(package_path) if not m.name.startswith("_"))

    def __getattr__(name):
        if name.startswith("_"):
            raise AttributeError(name)
        for module_name in modules():
            module = importlib.import_module(f"{package_name}.{module_name}")
            if name in getattr(module, "__all__", ()):
                return getattr(module, name)
        raise AttributeError(f"module {package_name!r} has no attribute {name!r}")

    def __dir__():
        names = []
        for module_name in modules():
            module = importlib.import_module(f"{package_name}.{module_name}")
            names.extend(getattr(module, "__all__", ()))
        return sorted(names)

    return __getattr__, __dir__
