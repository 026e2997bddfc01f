//! The image and audio the scenarios receive: the smallest valid files of their kind.

/// A 1×1 red pixel, as PNG (RGBA, eight bits per channel).
#[rustfmt::skip]
pub const RED_PIXEL_PNG: &[u8] = &[
    // signature
    0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a,
    // IHDR: width 1, height 1, bit depth 8, colour type 6 (RGBA), then the CRC
    0x00, 0x00, 0x00, 0x0d, b'I', b'H', b'D', b'R',
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00,
    0x1f, 0x15, 0xc4, 0x89,
    // IDAT: the zlib stream of one scanline, ff 00 00 ff, then the CRC
    0x00, 0x00, 0x00, 0x0d, b'I', b'D', b'A', b'T',
    0x78, 0xda, 0x63, 0xfc, 0xcf, 0xc0, 0xf0, 0x1f, 0x00, 0x05, 0x05, 0x02, 0x00,
    0x5f, 0xc8, 0xf1, 0xd2,
    // IEND
    0x00, 0x00, 0x00, 0x00, b'I', b'E', b'N', b'D', 0xae, 0x42, 0x60, 0x82,
];

/// One silent sample, as WAV (PCM, mono, 8 kHz, 16 bits).
#[rustfmt::skip]
pub const SILENT_WAV: &[u8] = &[
    // RIFF header: the 38 bytes that follow the size form a WAVE file
    b'R', b'I', b'F', b'F', 38, 0, 0, 0, b'W', b'A', b'V', b'E',
    // fmt: 16 bytes; PCM (1), 1 channel, 8000 Hz, 16000 bytes/s, 2-byte frames, 16 bits
    b'f', b'm', b't', b' ', 16, 0, 0, 0,
    1, 0, 1, 0, 0x40, 0x1f, 0, 0, 0x80, 0x3e, 0, 0, 2, 0, 16, 0,
    // data: 2 bytes, one sample at zero
    b'd', b'a', b't', b'a', 2, 0, 0, 0, 0, 0,
];
