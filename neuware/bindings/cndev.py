"""libcndev: the annotations of the cndev.h functions whose C types alone do not say how they map to Python.

Every result struct carries the caller's `version` (an input): the fill keeps it."""
from __future__ import annotations

from ..kinds import OutStruct

_VERSIONED = OutStruct(keep=("version",))

ANNOTATIONS = {
    "cndevGetLibVersion": {"libVerInfo": _VERSIONED},
    "cndevGetVersionInfo": {"versInfo": _VERSIONED},
    "cndevGetDeviceCount": {"cardNum": _VERSIONED},
    "cndevGetCardName": {"cardName": _VERSIONED},
    "cndevGetCoreCount": {"cardCoreCount": _VERSIONED},
    "cndevGetClusterCount": {"clusCount": _VERSIONED},
    "cndevGetUUID": {"uuidInfo": _VERSIONED},
    "cndevGetDDRInfo": {"ddrinfo": _VERSIONED},
    "cndevGetFrequencyInfo": {"freqInfo": _VERSIONED},
    "cndevGetDeviceMaxPerformance": {"maxPerformance": _VERSIONED},
}

DESTROYS: dict = {}

ERROR_STRINGS = {"cndevGetErrorString": "errorId"}
