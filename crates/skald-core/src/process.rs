//! Skald's own process, kept from the commands and servers it starts.
//!
//! An approved command runs as the user, and on Linux a process of the same user may read
//! another's environment (`/proc/PID/environ`, where provider keys and the restart token
//! live) and memory (`/proc/PID/mem`) unless that process is non-dumpable. Skald makes
//! itself non-dumpable at start, as ssh-agent and gpg-agent do; a program it starts is
//! dumpable again once it execs, so nothing else changes for it. (A core dump of Skald is
//! not written either: it would hold the same keys.)

/// Makes this process's memory and environment unreadable to other processes of the same
/// user, its children included. Call it first thing in `main`. Linux only; elsewhere the
/// operating system gives no such switch without `unsafe` code, and nothing is done.
pub fn keep_memory_private() -> Result<(), String> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        nix::sys::prctl::set_dumpable(false)
            .map_err(|e| format!("cannot make Skald's memory private (PR_SET_DUMPABLE): {e}"))
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        Ok(())
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn the_process_is_not_dumpable_afterwards() {
        super::keep_memory_private().unwrap();
        assert!(!nix::sys::prctl::get_dumpable().unwrap());
    }
}
