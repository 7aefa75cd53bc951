//! A strict decoder for standard base64 (RFC 4648 §4 alphabet, `=` padding), as tiktoken
//! files use it.
//!
//! Written here rather than taken from the `base64` crate: the format needs only decoding of
//! short, padded strings, and a 40-line decoder that reports the offending column keeps the
//! crate free of a dependency for it.
//!
//! Strictness: the length must be a multiple of 4, padding only at the end (at most two `=`),
//! and the unused low bits of the last symbol must be zero, so every byte string has exactly one
//! accepted encoding.

const INVALID: u8 = 0xFF;

const DECODE: [u8; 256] = {
    let mut table = [INVALID; 256];
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut i = 0;
    while i < 64 {
        table[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// Appends the bytes `text` encodes to `out`; on error, the message (with the 0-based offset of
/// the offending character) and `out` is left with a partial result.
pub(crate) fn decode_into(text: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    if text.len() % 4 != 0 {
        return Err(format!(
            "base64 length {} is not a multiple of 4",
            text.len()
        ));
    }
    let padding = text.iter().rev().take_while(|&&c| c == b'=').count();
    if padding > 2 {
        return Err(format!(
            "too much base64 padding at offset {}",
            text.len() - padding
        ));
    }
    let body = &text[..text.len() - padding];
    let mut acc: u32 = 0;
    let mut bits = 0;
    for (offset, &c) in body.iter().enumerate() {
        let v = DECODE[c as usize];
        if v == INVALID {
            return Err(format!(
                "invalid base64 character {:?} at offset {offset}",
                char::from(c)
            ));
        }
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if acc != 0 {
        return Err("base64 has non-zero trailing bits (not a canonical encoding)".to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(s: &str) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        decode_into(s.as_bytes(), &mut out).map(|()| out)
    }

    #[test]
    fn decodes_standard_vectors() {
        for (enc, dec) in [
            ("", ""),
            ("Zg==", "f"),
            ("Zm8=", "fo"),
            ("Zm9v", "foo"),
            ("Zm9vYg==", "foob"),
            ("Zm9vYmE=", "fooba"),
            ("Zm9vYmFy", "foobar"),
        ] {
            assert_eq!(decode(enc).unwrap(), dec.as_bytes(), "{enc}");
        }
        assert_eq!(decode("/+8=").unwrap(), [0xff, 0xef]);
    }

    #[test]
    fn rejects_malformed() {
        assert!(decode("Zg=").unwrap_err().contains("multiple of 4"));
        assert!(decode("Z===").unwrap_err().contains("padding"));
        assert!(decode("Zm9v!A==").unwrap_err().contains("offset 4"));
        assert!(decode("Zh==").unwrap_err().contains("trailing bits"));
        assert!(decode("Zg=a").unwrap_err().contains("invalid"));
    }
}
