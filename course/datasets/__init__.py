"""Real data sets and the offline stand-ins that teach the same lesson (notebooks 05, 07, 08).

Each data set lives in its own module (``cifar.py``, ``camvid.py``, ...); ``course.datasets.NAME``
finds NAME in them on first use, so this package imports nothing heavy until asked.
"""

from course._lazy import lazy_package

__getattr__, __dir__ = lazy_package(__name__, __path__)
