"""The BANG C kernels of the loaded executables and shared objects, found from a kernel's address.

Each object cncc built has an ELF section "mlusim_bang" whose entries (one per translation unit) hold a magic word and
the address of the object's kernel list head; each list entry (a `__mlu_kernel_desc`, mlusim_bang/launch.h) names a
kernel, its entry trampoline and its parameter kinds. Given an address C passes to cnrtInvokeKernel, `kernel_at`
finds the object that contains it (dladdr), reads that object's section from its file and walks the list.
"""
from __future__ import annotations

import ctypes
import os
import struct
import threading
from dataclasses import dataclass

SECTION = b"mlusim_bang"
ANCHOR_MAGIC = 0x4D4C5553494D4131
DESC_MAGIC = 0x4D4C5553494D4B31
_DESC_WORDS = 8


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p), ("dli_sname", ctypes.c_char_p),
                ("dli_saddr", ctypes.c_void_p)]


_libc = ctypes.CDLL(None)
_libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
_libc.dladdr.restype = ctypes.c_int


@dataclass(frozen=True)
class KernelInfo:
    """One compiled BANG C kernel: `function` is the address host code launches, `entry` its task trampoline."""

    name: str
    function: int
    entry: int
    params: tuple          # (kind, bytes) per parameter: p pointer, i/u integer, f float, h half, b bool, s struct
    flags: int
    arch: int
    path: str

    @property
    def uses_barriers(self) -> bool:
        return bool(self.flags & 1)

    @property
    def uses_memory_cores(self) -> bool:
        """The kernel's source asks which core it runs on (__is_mpu / __is_ipu): its Union launches run a memory
        core task per cluster beside the compute cores' tasks."""
        return bool(self.flags & 2)


_lock = threading.Lock()
_objects: dict = {}          # (path, base) -> {function address: KernelInfo}


def _section_address(path: str, name: bytes):
    """(sh_addr, size, is_exec) of section `name` in the ELF file at `path`, or None."""
    with open(path, "rb") as f:
        header = f.read(64)
        if header[:4] != b"\x7fELF" or header[4] != 2 or header[5] != 1:
            return None
        e_type = struct.unpack_from("<H", header, 16)[0]
        shoff = struct.unpack_from("<Q", header, 40)[0]
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", header, 58)
        f.seek(shoff)
        table = f.read(shentsize * shnum)
        sections = [struct.unpack_from("<IIQQQQIIQQ", table, i * shentsize) for i in range(shnum)]
        names_header = sections[shstrndx]
        f.seek(names_header[4])
        names = f.read(names_header[5])
    for sh_name, _type, _flags, addr, _offset, size, *_ in sections:
        end = names.find(b"\0", sh_name)
        if names[sh_name:end] == name:
            return addr, size, e_type == 2
    return None


def _read_words(address: int, count: int) -> tuple:
    return tuple(ctypes.cast(address, ctypes.POINTER(ctypes.c_uint64))[i] for i in range(count))


def _params(text: str) -> tuple:
    out = []
    for item in text.split():
        out.append((item[0], int(item[1:])))
    return tuple(out)


def _load_object(path: str, base: int) -> dict:
    found = _section_address(path, SECTION)
    kernels: dict = {}
    if found is None:
        return kernels
    addr, size, is_exec = found
    start = addr if is_exec else base + addr
    heads = set()
    for offset in range(0, size - 15, 16):
        magic, head = _read_words(start + offset, 2)
        if magic == ANCHOR_MAGIC:
            heads.add(head)
    for head in heads:
        node = _read_words(head, 1)[0]
        while node:
            magic, function, entry, name, params, flags, arch, following = _read_words(node, _DESC_WORDS)
            if magic != DESC_MAGIC:
                break
            kernels[function] = KernelInfo(ctypes.string_at(name).decode(), function, entry,
                                           _params(ctypes.string_at(params).decode()), flags,
                                           int(ctypes.string_at(arch).decode() or 0), path)
            node = following
    return kernels


def _object_of(address: int):
    info = _DlInfo()
    if not _libc.dladdr(ctypes.c_void_p(address), ctypes.byref(info)) or not info.dli_fbase:
        return None
    path = info.dli_fname.decode() if info.dli_fname else ""
    if not path or not os.path.isabs(path) or not os.path.exists(path):
        path = _mapped_path(address) or os.readlink("/proc/self/exe")
    return path, info.dli_fbase


def _mapped_path(address: int):
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)
            low, high = (int(x, 16) for x in fields[0].split("-"))
            if low <= address < high and len(fields) == 6 and fields[5].startswith("/"):
                return fields[5].strip()
    return None


def kernel_at(address: int):
    """The BANG C kernel whose host function is at `address`, or None (not code of a cncc-built object)."""
    if not address:
        return None
    where = _object_of(address)
    if where is None:
        return None
    with _lock:
        kernels = _objects.get(where)
        if kernels is None or address not in kernels:  # a kernel registered later (a template launched first now)
            kernels = _objects[where] = _load_object(*where)
    return kernels.get(address)


def kernels_of(path: str, handle_address: int) -> dict:
    """name -> KernelInfo of every kernel registered by the object at `path`, loaded at some address inside it."""
    where = _object_of(handle_address)
    if where is None:
        return {}
    with _lock:
        kernels = _objects[where] = _load_object(*where)
    return {k.name: k for k in kernels.values()}
