#!/usr/bin/env python3
"""Writes the seed corpus of the bootstrap fuzz targets (tests/fuzz/corpus/<target>/).

The frames are built here from the wire format's description (bootstrap/wire.h), not
by the C++ encoders, so the seeds are an independent rendering of the protocol: valid
frames of every kind plus a few near misses. Rerun after changing the wire format:
    python3 tests/fuzz/corpus/make_seeds.py
"""
import hashlib
import hmac
import os
import socket
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
MAGIC, VERSION = 0x32425242, 3
FLAG_TLS = 1
ROOT_CHALLENGE, ROOT_HELLO, ROOT_REPLY, RING_CHALLENGE, RING_HELLO, RING_PROOF = range(1, 7)
SECRET = bytes([1, 2, 3]) + bytes(13)  # the key the bootstrap_frames target checks MACs with


def frame(kind, body):
    return struct.pack("<IBBHI", MAGIC, kind, VERSION, 0, len(body)) + body


def wire_addr(port):
    sockaddr = struct.pack("<H", socket.AF_INET) + struct.pack(">H", port) + bytes([127, 0, 0, 1])
    sockaddr += bytes(8)  # sin_zero: 16 bytes in all
    return struct.pack("<H", len(sockaddr)) + sockaddr + bytes(28 - len(sockaddr))


def mac(label, *frames):
    return hmac.new(SECRET, label + b"".join(frames), hashlib.sha256).digest()


def with_mac(kind, head, label, *before):
    unsigned = frame(kind, head + bytes(32))[:-32]
    return unsigned + mac(label, *before, unsigned)


def write(target, name, data):
    os.makedirs(os.path.join(HERE, target), exist_ok=True)
    with open(os.path.join(HERE, target, name), "wb") as f:
        f.write(data)


def main():
    nonce = bytes(16)  # the target's challenge nonce is all zeros
    root_challenge = frame(ROOT_CHALLENGE, nonce)
    ring_challenge = frame(RING_CHALLENGE, nonce)
    hello_fields = struct.pack("<ii", 1, 2) + wire_addr(4000) + struct.pack("<I", FLAG_TLS)
    root_hello = with_mac(ROOT_HELLO, bytes(range(16)) + hello_fields, b"braid bootstrap hello",
                          root_challenge)
    reply_fields = struct.pack("<iH", 0, 0) + struct.pack("<I", 2) + wire_addr(1) + wire_addr(2)
    error_fields = struct.pack("<iH", 4, 14) + b"ranks disagree" + struct.pack("<I", 0)
    ring_hello = with_mac(RING_HELLO, bytes(range(16)) + struct.pack("<iI", 3, 0),
                          b"braid bootstrap hello", ring_challenge)
    # Selector byte: kind = 1 + selector % 6; piece byte: feed size 1 + piece % 64, and the
    # rank count a root reply must carry (the byte itself, here 2 or 0 on error).
    seeds = {
        "root_challenge": (ROOT_CHALLENGE, 7, root_challenge),
        "root_hello": (ROOT_HELLO, 5, root_hello),
        "root_reply_table": (ROOT_REPLY, 2, frame(ROOT_REPLY, reply_fields + bytes(32))),
        "root_reply_error": (ROOT_REPLY, 0, frame(ROOT_REPLY, error_fields + bytes(32))),
        "ring_challenge": (RING_CHALLENGE, 63, ring_challenge),
        "ring_hello": (RING_HELLO, 1, ring_hello),
        "ring_proof": (RING_PROOF, 31, frame(RING_PROOF, bytes(32))),
        "huge_length": (ROOT_HELLO, 11, struct.pack("<IBBHI", MAGIC, ROOT_HELLO, VERSION, 0, 0xFFFFFFF0)),
        "bad_version": (RING_PROOF, 3, struct.pack("<IBBHI", MAGIC, RING_PROOF, VERSION - 1, 0, 32)),
        "root_hello_fields": (ROOT_HELLO, 4, hello_fields),
    }
    for name, (kind, piece, data) in seeds.items():
        write("bootstrap_frames", name, bytes([kind - 1, piece]) + data)

    unique_id = struct.pack("<II", 0x31445242, 100) + wire_addr(29500) + bytes(range(16))
    write("unique_id", "valid", unique_id + bytes(128 - len(unique_id)))
    write("unique_id", "bad_magic", b"BRD0" + unique_id[4:])


if __name__ == "__main__":
    main()
