"""Just enough ELF reading to inspect what aot builds: the header, a library's DT_NEEDED list and
the symbol versions it needs, the functions of a symbol table (`read_function_symbols`, for the
perf map: runtime/perf_map.py); and the checks that make a file safe to hand to the system loader
or to MCJIT (`check_shared_object`, `check_object`): both map or read the ranges the headers name
without checking them against the file, so a truncated file ends the process (SIGBUS, SIGSEGV)."""

from __future__ import annotations

import functools
import struct
import sys

from ir.logger import get_logger
from ir.records import Record

log = get_logger(__name__)

MACHINES = {3: "x86", 62: "x86-64", 40: "arm", 183: "aarch64", 243: "riscv", 21: "ppc64"}
TYPES = {1: "relocatable", 2: "executable", 3: "shared object", 4: "core"}
ET_REL, ET_DYN = 1, 3
PT_LOAD = 1
SEGMENTS = {1: "PT_LOAD", 2: "PT_DYNAMIC", 3: "PT_INTERP", 4: "PT_NOTE", 7: "PT_TLS"}
SHT_NOBITS, SHT_RELA = 8, 4
SHT_SYMTAB, SHT_DYNSYM = 2, 11
STT_FUNC, STB_LOCAL = 2, 0
SHN_UNDEF, SHN_LORESERVE = 0, 0xFF00
SYM_SIZE = 24  # an Elf64_Sym


class ElfError(ValueError):
    """The bytes are not a well-formed ELF file of the kind and machine expected."""


class ElfHeader(Record):
    __slots__ = ("bits", "little_endian", "type", "machine", "machine_code")

    def __init__(self, bits: int, little_endian: bool, type: str, machine: str, machine_code: int):
        self.bits, self.little_endian, self.type = bits, little_endian, type  # bits: 32 or 64
        self.machine, self.machine_code = machine, machine_code


def read_header(data: bytes) -> ElfHeader:
    if data[:4] != b"\x7fELF":
        raise ElfError("not an ELF file")
    if len(data) < 64:  # the 64-bit header's size: every header field read below lies inside it
        raise ElfError(f"ELF header truncated ({len(data)} bytes)")
    bits = {1: 32, 2: 64}.get(data[4])
    if bits is None or data[5] not in (1, 2):
        raise ElfError("unknown ELF class or byte order")
    end = "<" if data[5] == 1 else ">"
    etype, machine = struct.unpack_from(end + "HH", data, 16)
    return ElfHeader(
        bits, data[5] == 1, TYPES.get(etype, str(etype)), MACHINES.get(machine, str(machine)), machine
    )


@functools.cache
def host_header() -> ElfHeader | None:
    """The ELF header of this process's own executable: the class, byte order and machine that
    code loaded into it must have (None where it cannot be read: no machine check then)."""
    for exe in ("/proc/self/exe", sys.executable):
        try:
            with open(exe, "rb") as f:
                return read_header(f.read(64))
        except (OSError, ElfError):
            continue
    log.debug("cannot read this process's ELF header: loaded files are not checked for the machine")
    return None


def _check_kind(hdr: ElfHeader, etype: int) -> None:
    """ElfError unless `hdr` is a 64-bit file of type `etype` for the host's machine and byte order."""
    if hdr.bits != 64:
        raise ElfError(f"a {hdr.bits}-bit ELF file; aot reads 64-bit ones only")
    if hdr.type != TYPES[etype]:
        raise ElfError(f"an ELF {hdr.type}, not a {TYPES[etype]}")
    host = host_header()
    if host is not None and (hdr.machine_code, hdr.little_endian) != (host.machine_code, host.little_endian):
        order = {True: "little-endian", False: "big-endian"}
        raise ElfError(f"built for {hdr.machine} ({order[hdr.little_endian]}); this machine is "
                       f"{host.machine} ({order[host.little_endian]})")


def _table(data: bytes, off: int, entsize: int, num: int, want_size: int, what: str) -> None:
    """ElfError unless a header table (program or section headers) lies inside the file."""
    if num and entsize != want_size:
        raise ElfError(f"{what} entries are {entsize} bytes, expected {want_size}")
    if num and (off <= 0 or off + num * entsize > len(data)):
        raise ElfError(f"{what} (offset {off}, {num} x {entsize} bytes) runs past the end of the file "
                       f"({len(data)} bytes): truncated?")


def _section_headers(data: bytes, end: str) -> list[tuple]:
    """The section headers, their table checked against the file size."""
    (shoff,) = struct.unpack_from(end + "Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", data, 0x3A)
    _table(data, shoff, shentsize, shnum, 64, "the section header table")
    if shnum and shstrndx >= shnum:
        raise ElfError(f"section name table index {shstrndx} is not below the section count {shnum}")
    return [struct.unpack_from(end + "IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]


def check_shared_object(data: bytes) -> None:
    """ElfError unless `data` is a complete 64-bit shared object for this machine: the header,
    the program header table, every segment's file range (PT_LOAD ones are what the loader maps
    without checking them) and the section header table all inside the file."""
    hdr = read_header(data)
    _check_kind(hdr, ET_DYN)
    end = "<" if hdr.little_endian else ">"
    (phoff,) = struct.unpack_from(end + "Q", data, 0x20)
    phentsize, phnum = struct.unpack_from(end + "HH", data, 0x36)
    if phnum == 0:
        raise ElfError("no program headers: nothing to load")
    _table(data, phoff, phentsize, phnum, 56, "the program header table")
    for i in range(phnum):
        ptype, _flags, off, _va, _pa, filesz, memsz, _align = struct.unpack_from(
            end + "IIQQQQQQ", data, phoff + i * phentsize)
        if off + filesz > len(data):
            kind = SEGMENTS.get(ptype, f"type {ptype:#x}")
            raise ElfError(f"segment {i} ({kind}) needs bytes {off}..{off + filesz} of a {len(data)}-byte "
                           "file: truncated?")
        if ptype == PT_LOAD and filesz > memsz:
            raise ElfError(f"segment {i} (PT_LOAD) has more file bytes ({filesz}) than memory ({memsz})")
    _section_headers(data, end)


def check_object(data: bytes) -> None:
    """ElfError unless `data` is a complete 64-bit relocatable object for this machine: the
    section header table and every section's contents inside it (MCJIT reads them unchecked)."""
    hdr = read_header(data)
    _check_kind(hdr, ET_REL)
    end = "<" if hdr.little_endian else ">"
    for i, (_n, stype, _f, _a, off, size, *_rest) in enumerate(_section_headers(data, end)):
        if stype != SHT_NOBITS and off + size > len(data):
            raise ElfError(f"section {i} needs bytes {off}..{off + size} of a {len(data)}-byte object: "
                           "truncated?")


def relocation_types(data: bytes) -> set[int]:
    """The relocation types (ELF64 r_info's low word) of relocatable object `data`'s RELA sections."""
    hdr = read_header(data)
    _check_kind(hdr, ET_REL)
    end = "<" if hdr.little_endian else ">"
    types = set()
    for _n, stype, _f, _a, off, size, _link, _info, _align, entsize in _section_headers(data, end):
        if stype == SHT_RELA and entsize == 24:
            _inside(data, off, size, "a relocation section")
            rows = struct.iter_unpack(end + "QQq", data[off:off + size])
            types.update(info & 0xFFFFFFFF for _off, info, _add in rows)
    return types


class FuncSymbol(Record):
    """A function of a symbol table: `value` is its offset in section `section` (an object file)
    or its virtual address (a shared object); `is_global`: bound GLOBAL or WEAK, so found by name
    (dlsym, the JIT's symbol table)."""

    __slots__ = ("name", "section", "value", "size", "is_global")

    def __init__(self, name: str, section: int, value: int, size: int, is_global: bool):
        self.name, self.section, self.value, self.size, self.is_global = name, section, value, size, is_global


def read_function_symbols(data: bytes) -> list[FuncSymbol]:
    """The defined functions with a size (code, not markers) of a 64-bit ELF file's symbol table:
    .symtab (local functions too), else .dynsym. ElfError when a table, a name or a function's
    range lies outside the file or its section."""
    hdr = read_header(data)
    if hdr.bits != 64:
        raise ElfError(f"a {hdr.bits}-bit ELF file; aot reads 64-bit ones only")
    end = "<" if hdr.little_endian else ">"
    sections = _section_headers(data, end)
    tables = [s for s in sections if s[1] == SHT_SYMTAB] or [s for s in sections if s[1] == SHT_DYNSYM]
    if not tables:
        return []
    _n, _t, _f, _a, off, size, link, _i, _al, entsize = tables[0]
    if entsize != SYM_SIZE:
        raise ElfError(f"symbol table entries are {entsize} bytes, expected {SYM_SIZE}")
    _inside(data, off, size, "the symbol table")
    if link >= len(sections):
        raise ElfError(f"the symbol table's names are in section {link}, past the last ({len(sections) - 1})")
    names = sections[link][4], sections[link][5]
    _inside(data, *names, "the symbol names")
    relocatable = hdr.type == TYPES[ET_REL]
    out = []
    for k in range(off, off + size - size % SYM_SIZE, SYM_SIZE):
        st_name, info, _other, shndx, value, sym_size = struct.unpack_from(end + "IBBHQQ", data, k)
        if info & 0xF != STT_FUNC or shndx == SHN_UNDEF or shndx >= SHN_LORESERVE or sym_size == 0:
            continue
        name = _string(data, *names, st_name)
        if shndx >= len(sections):
            raise ElfError(f"function {name!r} is in section {shndx}, past the last ({len(sections) - 1})")
        addr, sec_size = sections[shndx][3], sections[shndx][5]
        start = 0 if relocatable else addr  # objects: offsets in the section; libraries: addresses
        if value < start or value + sym_size > start + sec_size:
            raise ElfError(f"function {name!r} ({sym_size} bytes at {value:#x}) runs outside its section "
                           f"{shndx} ({sec_size} bytes at {start:#x})")
        out.append(FuncSymbol(name, shndx, value, sym_size, info >> 4 != STB_LOCAL))
    return out


def _inside(data: bytes, off: int, size: int, what: str) -> None:
    if off + size > len(data):
        raise ElfError(f"{what} (bytes {off}..{off + size}) runs past the end of the {len(data)}-byte file: "
                       "truncated?")


def _string(data: bytes, table: int, table_size: int, k: int) -> str:
    """String k of a string table, which must end inside the table."""
    stop = data.find(b"\0", table + k, table + table_size) if k < table_size else -1
    if stop < 0:
        raise ElfError(f"symbol name at offset {k} does not end inside its {table_size}-byte string table")
    return data[table + k : stop].decode("utf-8", "replace")


def _sections(path) -> tuple[bytes, str, list[tuple]]:
    """(file bytes, struct byte order, section headers) of a 64-bit ELF file (a str or PathLike:
    pathlib is not imported, a warm start loads this module)."""
    with open(path, "rb") as f:
        data = f.read()
    hdr = read_header(data)
    if hdr.bits != 64:
        raise ElfError(f"{path}: only 64-bit ELF is supported")
    end = "<" if hdr.little_endian else ">"
    return data, end, _section_headers(data, end)


def read_needed(path) -> list[str]:
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


def read_version_needs(path) -> dict[str, list[str]]:
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
