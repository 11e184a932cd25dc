//! What the browser's supervisor reads of other processes, from `/proc`: who
//! belongs to the browser's process group, how much memory they hold, whose
//! command line names a profile, and whether a profile's owner still lives.
//! Linux only; elsewhere every answer is empty and the limits that depend on
//! them do not hold (documented in docs/security.md).

use std::path::Path;

/// Fields of `/proc/<pid>/stat` after the command name, which may hold spaces
/// and parentheses: index 0 is field 3 (state).
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, after_name) = stat.rsplit_once(')')?;
    Some(after_name.split_whitespace().map(str::to_string).collect())
}

/// Returns when `pid` started (clock ticks since boot), `None` if it is gone.
pub(crate) fn start_time(pid: u32) -> Option<u64> {
    stat_fields(pid)?.get(19)?.parse().ok()
}

/// Returns the process group of `pid`, `None` if it is gone.
pub(crate) fn process_group(pid: u32) -> Option<u32> {
    stat_fields(pid)?.get(2)?.parse().ok()
}

/// Returns the ids of every live process.
fn all_pids() -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// Returns the members of process group `group`.
pub(crate) fn group_members(group: u32) -> Vec<u32> {
    all_pids()
        .into_iter()
        .filter(|&pid| process_group(pid) == Some(group))
        .collect()
}

/// Returns the memory `pid` holds that no other process shares the counting
/// of: resident anonymous memory plus resident shared memory (bytes). The
/// browser's binary, mapped by every one of its processes, is not counted
/// once per process as a sum of `VmRSS` would.
pub(crate) fn private_memory_bytes(pid: u32) -> u64 {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return 0;
    };
    status
        .lines()
        .filter_map(|line| {
            let value = line
                .strip_prefix("RssAnon:")
                .or_else(|| line.strip_prefix("RssShmem:"))?;
            value.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()
        })
        .sum::<u64>()
        * 1024
}

/// Returns the memory the members of process group `group` hold together
/// (see [`private_memory_bytes`]).
pub(crate) fn group_memory_bytes(group: u32) -> u64 {
    group_members(group)
        .into_iter()
        .map(private_memory_bytes)
        .sum()
}

/// Returns the processes whose command line names `dir` or a path inside it.
pub(crate) fn processes_naming(dir: &Path) -> Vec<u32> {
    let needle = dir.as_os_str().as_encoded_bytes();
    all_pids()
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| names_dir(&cmdline, needle))
        })
        .collect()
}

/// Whether a NUL-separated command line holds `dir` followed by `/`, NUL or
/// its end (so `/tmp/a` does not name `/tmp/ab`).
fn names_dir(cmdline: &[u8], dir: &[u8]) -> bool {
    if dir.is_empty() {
        return false;
    }
    let mut rest = cmdline;
    while let Some(at) = rest.windows(dir.len()).position(|window| window == dir) {
        let after = rest.get(at + dir.len()).copied();
        if matches!(after, None | Some(b'/' | 0)) {
            return true;
        }
        rest = rest.get(at + 1..).unwrap_or_default();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_line_names_a_dir_only_as_a_whole_component() {
        let dir = b"/tmp/copyhound-chromium-ab";
        assert!(names_dir(
            b"chromium\0--user-data-dir=/tmp/copyhound-chromium-ab/data\0",
            dir
        ));
        assert!(names_dir(b"x\0/tmp/copyhound-chromium-ab", dir));
        assert!(names_dir(b"x\0/tmp/copyhound-chromium-ab\0y", dir));
        assert!(!names_dir(b"x\0/tmp/copyhound-chromium-abc/data", dir));
        assert!(!names_dir(b"x\0/tmp/copyhound-chromium-a", dir));
        assert!(names_dir(
            b"/tmp/copyhound-chromium-abc\0/tmp/copyhound-chromium-ab/home",
            dir
        ));
    }

    #[test]
    fn this_process_is_seen_in_proc() {
        let pid = std::process::id();
        assert!(start_time(pid).is_some());
        let group = process_group(pid).unwrap();
        assert!(group_members(group).contains(&pid));
        assert!(private_memory_bytes(pid) > 0);
        assert!(group_memory_bytes(group) >= private_memory_bytes(pid));
    }
}
