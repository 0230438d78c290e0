"""A Parquet file's footer read and written again (the Thrift compact protocol, generic
structs), so that a test can make the footers a stranger could write and no Parquet
writer does: one row group listed many times, against a total of rows that counts it once."""

from __future__ import annotations

import struct

LIST, SET, STRUCT, BINARY, DOUBLE, BYTE = 9, 10, 12, 8, 7, 3
BOOLEANS, INTEGERS = (1, 2), (4, 5, 6)


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def byte(self) -> int:
        self.at += 1
        return self.data[self.at - 1]

    def varint(self) -> int:
        value = shift = 0
        while True:
            part = self.byte()
            value |= (part & 0x7F) << shift
            shift += 7
            if not part & 0x80:
                return value

    def zigzag(self) -> int:
        value = self.varint()
        return (value >> 1) ^ -(value & 1)

    def value(self, kind: int):
        if kind in BOOLEANS:
            return kind == 1
        if kind == BYTE:
            return self.byte()
        if kind in INTEGERS:
            return self.zigzag()
        if kind == DOUBLE:
            self.at += 8
            return struct.unpack("<d", self.data[self.at - 8 : self.at])[0]
        if kind == BINARY:
            size = self.varint()
            self.at += size
            return self.data[self.at - size : self.at]
        if kind in (LIST, SET):
            head = self.byte()
            count, item = head >> 4, head & 15
            count = self.varint() if count == 15 else count
            return ("list", item, [self.byte() == 1 if item in BOOLEANS else self.value(item) for _ in range(count)])
        if kind == STRUCT:
            return self.fields()
        raise ValueError(f"Thrift type {kind}")

    def fields(self) -> list:
        found, last = [], 0
        while (head := self.byte()) != 0:
            kind, delta = head & 15, head >> 4
            last = last + delta if delta else self.zigzag()
            found.append([last, kind, self.value(kind)])
        return found


class _Writer:
    def __init__(self):
        self.out = bytearray()

    def varint(self, value: int) -> None:
        while True:
            part, value = value & 0x7F, value >> 7
            self.out.append(part | 0x80 if value else part)
            if not value:
                return

    def value(self, kind: int, value) -> None:
        if kind in BOOLEANS:
            return
        if kind == BYTE:
            self.out.append(value)
        elif kind in INTEGERS:
            self.varint((value << 1) ^ (value >> 63))
        elif kind == DOUBLE:
            self.out += struct.pack("<d", value)
        elif kind == BINARY:
            self.varint(len(value))
            self.out += value
        elif kind in (LIST, SET):
            _, item, items = value
            self.out.append((min(len(items), 15) << 4) | item)
            if len(items) >= 15:
                self.varint(len(items))
            for one in items:
                self.out.append(1 if one else 2) if item in BOOLEANS else self.value(item, one)
        elif kind == STRUCT:
            self.fields(value)
        else:
            raise ValueError(f"Thrift type {kind}")

    def fields(self, fields: list) -> None:
        last = 0
        for number, kind, value in fields:
            kind = (1 if value else 2) if kind in BOOLEANS else kind
            delta = number - last
            if 0 < delta <= 15:
                self.out.append((delta << 4) | kind)
            else:
                self.out.append(kind)
                self.value(6, number)
            last = number
            self.value(kind, value)
        self.out.append(0)


def row_groups_repeated(data: bytes, times: int) -> bytes:
    """The same Parquet file whose footer lists its row groups `times` over, its total of
    rows (FileMetaData field 3) left as it was."""
    size = struct.unpack("<I", data[-8:-4])[0]
    start = len(data) - 8 - size
    meta = _Reader(data[start:-8]).fields()
    groups = next(field for field in meta if field[0] == 4)  # FileMetaData.row_groups
    groups[2] = ("list", groups[2][1], groups[2][2] * times)
    writer = _Writer()
    writer.fields(meta)
    return data[:start] + bytes(writer.out) + struct.pack("<I", len(writer.out)) + b"PAR1"
