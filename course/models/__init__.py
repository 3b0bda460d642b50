"""The course's networks, one file each, to read top to bottom (notebooks 05, 07, 08).

``course.models.NAME`` finds NAME in this package's modules on first use.
"""

from course._lazy import lazy_package

__getattr__, __dir__ = lazy_package(__name__, __path__)
