"""Just enough ELF reading to inspect what aot builds: the header, a library's DT_NEEDED list and
the symbol versions it needs."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

MACHINES = {3: "x86", 62: "x86-64", 40: "arm", 183: "aarch64", 243: "riscv", 21: "ppc64"}
TYPES = {1: "relocatable", 2: "executable", 3: "shared object", 4: "core"}


@dataclass(frozen=True)
class ElfHeader:
    bits: int  # 32 or 64
    little_endian: bool
    type: str
    machine: str
    machine_code: int


def read_header(data: bytes) -> ElfHeader:
    if len(data) < 64 or data[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    bits = {1: 32, 2: 64}.get(data[4])
    if bits is None or data[5] not in (1, 2):
        raise ValueError("unknown ELF class or byte order")
    end = "<" if data[5] == 1 else ">"
    etype, machine = struct.unpack_from(end + "HH", data, 16)
    return ElfHeader(
        bits, data[5] == 1, TYPES.get(etype, str(etype)), MACHINES.get(machine, str(machine)), machine
    )


def _sections(path: Path) -> tuple[bytes, str, list[tuple]]:
    """(file bytes, struct byte order, section headers) of a 64-bit ELF file."""
    data = path.read_bytes()
    hdr = read_header(data)
    if hdr.bits != 64:
        raise ValueError(f"{path}: only 64-bit ELF is supported")
    end = "<" if hdr.little_endian else ">"
    (shoff,) = struct.unpack_from(end + "Q", data, 0x28)
    shentsize, shnum = struct.unpack_from(end + "HH", data, 0x3A)
    return data, end, [struct.unpack_from(end + "IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]


def read_needed(path: Path) -> list[str]:
    """DT_NEEDED entries of a 64-bit ELF shared object."""
    data, end, sections = _sections(path)
    out = []
    for _name, stype, _f, _a, off, size, link, _i, _al, entsize in sections:
        if stype != 6:  # SHT_DYNAMIC
            continue
        stroff = sections[link][4]
        for k in range(0, size, entsize or 16):
            tag, val = struct.unpack_from(end + "qQ", data, off + k)
            if tag == 0:
                break
            if tag == 1:  # DT_NEEDED
                stop = data.index(b"\0", stroff + val)
                out.append(data[stroff + val : stop].decode())
    return out


def read_version_needs(path: Path) -> dict[str, list[str]]:
    """The symbol versions a 64-bit ELF shared object requires, per library (SHT_GNU_verneed):
    e.g. {"libc.so.6": ["GLIBC_2.2.5", "GLIBC_2.3"]}."""
    data, end, sections = _sections(path)

    def string(stroff: int, k: int) -> str:
        return data[stroff + k : data.index(b"\0", stroff + k)].decode()

    out: dict[str, list[str]] = {}
    for _name, stype, _f, _a, off, _size, link, info, _al, _es in sections:
        if stype != 0x6FFFFFFE:  # SHT_GNU_verneed; `info` counts its entries
            continue
        stroff = sections[link][4]
        for _ in range(info):
            _ver, cnt, file, aux, nxt = struct.unpack_from(end + "HHIII", data, off)
            versions, a = out.setdefault(string(stroff, file), []), off + aux
            for _ in range(cnt):
                _hash, _flags, _other, name, anext = struct.unpack_from(end + "IHHII", data, a)
                versions.append(string(stroff, name))
                a += anext
            off += nxt
    return out
