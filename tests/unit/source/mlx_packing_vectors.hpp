// Hand-worked MLX packing vectors, one per affine bit width (docs/formats.md §1 "Bit
// packing": code j of a row sits at bits [j*b, j*b+b) of the row's little-endian uint32 words).
// The words were written by hand from that rule (working in the comments). Shared by the reader
// test and the fixture generator's packer test.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace rebox::test {

struct MlxPackVector {
    int bits;
    std::map<int, int> row0;       // non-zero codes of row 0 (32 codes)
    std::vector<uint32_t> words0;  // row 0's words, hand-packed
};

// Row 1 always holds one code 1 at j=0: its first word is 1, the rest 0 (rows start on words).
inline const MlxPackVector kMlxPackVectors[] = {
    // 2-bit, 16 codes/word. c0=1 -> w0 bits0-1; c5=2 -> bits 10-11 (0x800); c15=3 -> bits 30-31
    // (0xC0000000); c16=1 -> w1 bits 0-1; c31=2 -> w1 bits 30-31 (0x80000000).
    {2, {{0, 1}, {5, 2}, {15, 3}, {16, 1}, {31, 2}}, {0xC0000801u, 0x80000001u}},
    // 3-bit: c0=7 -> w0 0x7; c10=0b101 at bits 30..32 -> w0 bit30, w1 bit0; c21=0b011 at bits
    // 63..65 -> w1 bit31, w2 bit0; c31=0b110 at bits 93..95 -> w2 bits 30,31.
    {3, {{0, 7}, {10, 5}, {21, 3}, {31, 6}}, {0x40000007u, 0x80000001u, 0xC0000001u}},
    // 4-bit: c1=0xA -> w0 bits 4-7; c7=3 -> w0 bits 28-31; c8=5 -> w1 bits 0-3; c31=0xC -> w3
    // bits 28-31.
    {4, {{1, 0xA}, {7, 3}, {8, 5}, {31, 0xC}}, {0x300000A0u, 0x5u, 0x0u, 0xC0000000u}},
    // 5-bit: c0=31 -> w0 0x1F; c6=0b10111 at bits 30..34 -> w0 bits 30,31; w1 bits 0,2 (0x5);
    // c12=0b11110 at 60..64 -> w1 bits 29,30,31; w2 bit0; c19=1 at 95 -> w2 bit31; c25=0b10000 at
    // 125..129 -> w4 bit1; c31=0b10001 at 155..159 -> w4 bits 27,31.
    {5,
     {{0, 31}, {6, 23}, {12, 30}, {19, 1}, {25, 16}, {31, 17}},
     {0xC000001Fu, 0xE0000005u, 0x80000001u, 0x0u, 0x88000002u}},
    // 6-bit: c5=0b110101 at 30..35 -> w0 bit30; w1 bits 0,2,3 (0xD); c10=0b000011 at 60..65 ->
    // w1 bits 28,29; c16=63 at 96..101 -> w3 0x3F; c21=0b111100 at 126..131 -> w4 bits 0..3.
    {6,
     {{5, 53}, {10, 3}, {16, 63}, {21, 60}},
     {0x40000000u, 0x3000000Du, 0x0u, 0x3Fu, 0xFu, 0x0u}},
    // 8-bit: c0..c3 = 0x12,0x34,0x56,0x78 -> w0 0x78563412; c29=1 -> w7 byte1; c31=0xAB -> w7
    // byte3.
    {8,
     {{0, 0x12}, {1, 0x34}, {2, 0x56}, {3, 0x78}, {29, 0x01}, {31, 0xAB}},
     {0x78563412u, 0, 0, 0, 0, 0, 0, 0xAB000100u}},
};

}  // namespace rebox::test
