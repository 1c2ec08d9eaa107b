//! Lowercase hex of digests: the one implementation every module uses (keys of caches,
//! inputs digests, plan hashes, consent hashes, RECORD checks).

use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

/// `bytes` as lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0x0f)] as char);
    }
    out
}

/// The SHA-256 of `data`, as lowercase hex.
pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

/// The SHA-256 of a local regular file of at most `limit` bytes (streamed; a symlink, FIFO
/// or device is refused by [`crate::files::open_regular`]). Used for wheels from a
/// `--find-links` directory, locked and admitted by the same digest.
pub fn sha256_file_bounded(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let file = crate::files::open_regular(path)?;
    let mut hasher = Sha256::new();
    let mut reader = file.take(limit + 1);
    let mut buffer = vec![0u8; 64 * 1024];
    let mut total: u64 = 0;
    loop {
        let n = reader.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        total += n as u64;
        if total > limit {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("it is larger than {limit} bytes"),
            ));
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hasher.finalize().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_lowercase_and_padded() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
