//! The bundle's container: a POSIX ustar archive written one canonical way
//! (fixed modes and owners, one modification time, entries in order), so
//! that [`read_canonical`] can rebuild the archive from what it read and
//! refuse it when one byte differs anywhere, headers and padding included.
//! Any tar tool opens it.

/// Why an archive was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ArchiveError(pub String);

const BLOCK: usize = 512;

/// An archive's entries: name and bytes, in order.
pub type Entries = Vec<(String, Vec<u8>)>;

/// Returns the archive of `entries` (name, bytes), each stamped `mtime`
/// (Unix seconds). Names are at most 100 bytes of ASCII.
pub fn write(entries: &[(String, Vec<u8>)], mtime: u64) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, bytes) in entries {
        out.extend_from_slice(&header(name, bytes.len() as u64, mtime));
        out.extend_from_slice(bytes);
        out.resize(out.len().div_ceil(BLOCK) * BLOCK, 0);
    }
    out.resize(out.len() + 2 * BLOCK, 0);
    out
}

fn header(name: &str, size: u64, mtime: u64) -> [u8; BLOCK] {
    let mut block = [0u8; BLOCK];
    let name_bytes = name.as_bytes();
    let name_length = name_bytes.len().min(100);
    block[..name_length].copy_from_slice(&name_bytes[..name_length]);
    octal(&mut block[100..108], 0o644);
    octal(&mut block[108..116], 0);
    octal(&mut block[116..124], 0);
    octal(&mut block[124..136], size);
    octal(&mut block[136..148], mtime);
    block[148..156].fill(b' ');
    block[156] = b'0';
    block[257..263].copy_from_slice(b"ustar\0");
    block[263..265].copy_from_slice(b"00");
    let sum: u64 = block.iter().map(|byte| u64::from(*byte)).sum();
    octal(&mut block[148..155], sum);
    block
}

/// Writes `value` as zero-padded octal digits and a NUL in `field`.
fn octal(field: &mut [u8], value: u64) {
    let digits = field.len() - 1;
    let text = format!("{value:0digits$o}");
    let text = &text.as_bytes()[text.len().saturating_sub(digits)..];
    field[..digits].copy_from_slice(text);
    field[digits] = 0;
}

/// Reads an archive written by [`write`]: its entries and their common
/// modification time, or why it is not exactly such an archive.
pub fn read_canonical(archive: &[u8]) -> Result<(Entries, u64), ArchiveError> {
    let mut entries = Vec::new();
    let mut offset = 0;
    let mut mtime = None;
    while offset + BLOCK <= archive.len() {
        let block = &archive[offset..offset + BLOCK];
        if block.iter().all(|byte| *byte == 0) {
            break;
        }
        let name_end = block[..100]
            .iter()
            .position(|byte| *byte == 0)
            .unwrap_or(100);
        let name = String::from_utf8(block[..name_end].to_vec())
            .map_err(|_| ArchiveError(format!("entry name at byte {offset} is not text")))?;
        let size = parse_octal(&block[124..136])
            .ok_or_else(|| ArchiveError(format!("entry `{name}` has a bad size")))?;
        let entry_mtime = parse_octal(&block[136..148])
            .ok_or_else(|| ArchiveError(format!("entry `{name}` has a bad time")))?;
        mtime.get_or_insert(entry_mtime);
        let start = offset + BLOCK;
        let end = usize::try_from(size)
            .ok()
            .and_then(|size| start.checked_add(size))
            .filter(|end| *end <= archive.len())
            .ok_or_else(|| ArchiveError(format!("entry `{name}` runs past the archive")))?;
        entries.push((name, archive[start..end].to_vec()));
        offset = end.div_ceil(BLOCK) * BLOCK;
    }
    let mtime = mtime.ok_or_else(|| ArchiveError("the archive is empty".into()))?;
    let rebuilt = write(&entries, mtime);
    if rebuilt != archive {
        let at = rebuilt
            .iter()
            .zip(archive)
            .position(|(a, b)| a != b)
            .unwrap_or(rebuilt.len().min(archive.len()));
        return Err(ArchiveError(format!(
            "the archive is not in its canonical form (byte {at} differs)"
        )));
    }
    Ok((entries, mtime))
}

fn parse_octal(field: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(field).ok()?;
    u64::from_str_radix(text.trim_matches(|c| c == '\0' || c == ' '), 8).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archives_round_trip_and_every_byte_counts() {
        let entries = vec![
            ("a.txt".to_string(), b"hello".to_vec()),
            ("b.bin".to_string(), vec![0u8; 700]),
        ];
        let archive = write(&entries, 1_700_000_000);
        assert_eq!(archive.len() % BLOCK, 0);
        let (read, mtime) = read_canonical(&archive).expect("read");
        assert_eq!((read, mtime), (entries.clone(), 1_700_000_000));
        for position in 0..archive.len() {
            let mut changed = archive.clone();
            changed[position] ^= 0x01;
            // A changed header or padding byte is refused; a changed
            // content byte reads as changed content (the manifest's digests
            // catch it).
            if let Ok((read, _)) = read_canonical(&changed) {
                assert_ne!(read, entries, "byte {position}");
            }
        }
    }
}
